package detect

import (
	"slices"
	"testing"
)

// TestSSRFRedirectors: wildcard-DNS names that resolve to the address written in them, names
// that always resolve to loopback, rebinding and redirect services, and address notations that
// reach an internal host without DNS (issue 26). Each fires ssrf; public look-alikes do not.
func TestSSRFRedirectors(t *testing.T) {
	d := New(Options{})
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"http://127.0.0.1.nip.io/admin", true},
		{"http://169.254.169.254.nip.io/latest/meta-data/", true},
		{"http://app.10.0.0.1.nip.io:8080/", true},
		{"http://10-0-0-1.sslip.io/", true},
		{"http://customer1.app.localhost.my.company.127.0.0.1.nip.io/", true},
		{"http://7f000001.nip.io/", true},
		{"http://127.0.0.1.xip.io/", true},
		{"http://1ynrnhl.xip.io/", true},
		{"http://--1.sslip.io/", true},
		{"http://localtest.me/", true},
		{"http://readme.localtest.me:6379/", true},
		{"http://foo.lvh.me/", true},
		{"http://vcap.me/", true},
		{"http://lacolhost.com/", true},
		{"http://fuf.me/", true},
		{"http://localho.st/", true},
		{"http://smackaho.st/", true},
		{"http://app.local.gd/", true},
		{"http://get.localhost.direct/", true},
		{"http://api.localhost/", false}, // *.localhost is localhost: a dev server unless a port or path says more
		{"http://localhost:5173/", false},
		{"http://localhost4.localdomain4/", true}, // /etc/hosts aliases: what filter evasion types, not a developer
		{"http://ip6-localhost:8080/", true},
		{"http://localhost.localdomain/", true},
		{"http://admin.localhost:9200/_cat/indices", true},
		{"http://make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms/", true},
		{"http://7f000001.c0a80001.rbndr.us/", true},
		{"https://307.r3dir.me/--to/?url=http://localhost", true},
		{"http://spoofed.burpcollaborator.net/", true},
		{"http://bugbounty.dod.network/", true},
		{"http://2130706433/", true},
		{"http://017700000001/", true},
		{"http://0x7f.0x0.0x0.0x1/", true},
		{"http://0x7f000001/", true},
		{"http://127.1/", true},
		{"http://[::127.0.0.1]/", true},
		{"http://[::ffff:7f00:1]/", true},
		{"http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", true},
		{"http://[2002:a9fe:a9fe::]/", true},
		{"http://[0:0:0:0:0:ffff:169.254.169.254]/", true},
		{"http:127.0.0.1", true},
		{"https:/10.0.0.1/admin", true},
		{`http:\\169.254.169.254\latest`, true},
		{"lvh.me/", true},
		{"host.docker.internal/", true},
		{"10.0.0.5:6379/", true},
		{"http://nicob.net/redir-http-169.254.169.254:80-", true},
		{"https://ssrf.example.net/img/301-http-127.0.0.1:80-.i.jpg", true},
		// public look-alikes
		{"src/main.go", false},
		{"docs/http:status.md", false},
		{"localhost:3000/", false},
		{"example.com/path", false},
		{"https://ipinfo.io/8.8.8.8", false},
		{"https://www.shodan.io/host/10.0.0.1", false},
		{"see https://example.com/v1.2.3/release-notes", false},
		{"https://nip.io/", false},
		{"https://sslip.io/docs", false},
		{"https://github.com/sslip/sslip.io", false},
		{"https://example.com/how-nip.io-works", false},
		{"https://www.lvh.com/", false},
		{"https://[2001:db8::1]/", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r := d.Scan(tc.in)
			got := slices.Contains(d.Fired(&r), SSRF)
			if got != tc.want {
				t.Errorf("Scan(%q): ssrf fired %v (score %.2f, hits %+v), want %v", tc.in, got, r.Scores[SSRF], r.Hits, tc.want)
			}
		})
	}
}

// TestSSRFEmbeddedRule: the rule names the address a wildcard name or an IPv6 address carries.
func TestSSRFEmbeddedRule(t *testing.T) {
	for _, tc := range []struct {
		host string
		rule string
		w    float64
	}{
		{"169.254.169.254.nip.io", "wildcard_dns:metadata_host", 1},
		{"10-0-0-1.sslip.io", "wildcard_dns:private_ip", 0.9},
		{"7f000001.nip.io", "wildcard_dns:loopback_ip", 0.9},
		{"--1.sslip.io", "wildcard_dns:loopback_ip", 0.9},
		{"8.8.8.8.nip.io", "rebinding_domain", 0.9},
		{"app.lvh.me", "loopback_domain", 0.9},
		{"64:ff9b::a9fe:a9fe", "metadata_host+ipv6_embedded", 1},
		{"::127.0.0.1", "loopback_ip+ipv6_embedded", 0.9},
		{"2002:a00:1::", "private_ip+ipv6_embedded", 0.9},
	} {
		if w, rule := classifyHost(tc.host, -1); rule != tc.rule || w != tc.w {
			t.Errorf("classifyHost(%q) = %v %q, want %v %q", tc.host, w, rule, tc.w, tc.rule)
		}
	}
}
