package webhost

import "testing"

func TestLists(t *testing.T) {
	for _, tc := range []struct {
		host                    string
		oob, catcher, redirects bool
	}{
		{"abc123.oast.pro", true, false, true},
		{"c8v1x2.interact.sh", true, false, true},
		{"interact.sh", false, false, true}, // the project's site
		{"x.burpcollaborator.net", true, false, true},
		{"abcd.oastify.com", true, false, true},
		{"oast.pro.example.com", false, false, false},
		{"notoast.pro", false, false, false},
		{"webhook.site", false, true, true},
		{"eo1234abcd.m.pipedream.net", false, true, true},
		{"docs.pipedream.com", false, false, false},
		{"en3x2.x.requestcatcher.com", false, true, true},
		{"bit.ly", false, false, true},
		{"abc.trycloudflare.com", false, false, true},
		{"github.com", false, false, false},
		{"example.com.", false, false, false},
		{"x.oast.fun.", true, false, true},
	} {
		if got := OutOfBand(tc.host); got != tc.oob {
			t.Errorf("OutOfBand(%q) = %v", tc.host, got)
		}
		if got := RequestCatcher(tc.host); got != tc.catcher {
			t.Errorf("RequestCatcher(%q) = %v", tc.host, got)
		}
		if got := Redirects(tc.host); got != tc.redirects {
			t.Errorf("Redirects(%q) = %v", tc.host, got)
		}
	}
}

func TestAnonymous(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"pastebin.com", true},
		{"gist.githubusercontent.com", true},
		{"transfer.sh", true},
		{"x.transfer.sh", true},
		{"127.0.0.1.nip.io", true},
		{"localtest.me", true},
		{"abc.ngrok-free.app", true},
		{"bit.ly", true},
		{"webhook.site", true},
		{"raw.githubusercontent.com", false},
		{"get.docker.com", false},
		{"notpastebin.com", false},
		{"github.com", false},
	} {
		if got := Anonymous(tc.host); got != tc.want {
			t.Errorf("Anonymous(%q) = %v", tc.host, got)
		}
	}
}
