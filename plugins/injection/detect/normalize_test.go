package detect

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		// flags expected
		rounds    int
		overlong  bool
		nul       bool
		invisible int
		tags      int
	}{
		{name: "plain", in: "Hello World", want: "hello world"},
		{name: "url encoded traversal", in: "%2e%2e%2fetc%2fpasswd", want: "../etc/passwd", rounds: 1},
		{name: "double encoded", in: "%252e%252e%252f", want: "../", rounds: 2},
		{name: "triple encoded", in: "%25252e%25252e%25252f", want: "../", rounds: 3},
		{name: "iis unicode", in: "..%u2215etc", want: "../etc", rounds: 1},
		{name: "overlong dot slash", in: "%c0%ae%c0%ae%c0%af", want: "../", rounds: 1, overlong: true},
		{name: "overlong 3 byte", in: "%e0%80%ae%e0%80%ae/", want: "../", rounds: 1, overlong: true},
		{name: "null byte", in: "../etc/passwd%00.png", want: "../etc/passwd.png", rounds: 1, nul: true},
		{name: "html entities", in: "&lt;script&gt;", want: "<script>"},
		{name: "fullwidth", in: "ＳＥＬＥＣＴ", want: "select"},
		{name: "circled digits", in: "①②⑦.⓪.⓪.①", want: "127.0.0.1"},
		{name: "ideographic dot", in: "127。0。0。1", want: "127.0.0.1"},
		{name: "zero width", in: "ig\u200bnore prev\u200dious", want: "ignore previous", invisible: 2},
		{name: "bidi and bom", in: "\ufeffa\u202eb", want: "ab", invisible: 2},
		// An emoji's presentation selector is not hidden text; a run of selectors is.
		{name: "presentation selectors", in: "\u2714\ufe0f done \u2714\ufe0f", want: "\u2714 done \u2714"},
		{name: "a run of selectors", in: "a\ufe01\ufe02\ufe03\ufe04", want: "a", invisible: 3},
		{name: "a selector alone", in: "\ufe0f x", want: " x", invisible: 1},
		{name: "tag characters", in: "hi\U000E0069\U000E0067\U000E006E", want: "hiign", tags: 3},
		{name: "whitespace runs", in: "a \t b\n\n c", want: "a b\nc"},
		{name: "curly quotes", in: "‘ or 1=1 --", want: "' or 1=1 --"},
		{name: "invalid escape kept", in: "100%zz", want: "100%zz"},
		{name: "form encoded plus is a space", in: "%27%3B+waitfor+delay+%27", want: "'; waitfor delay '", rounds: 1},
		{name: "plus kept without percent encoding", in: "c++ 1+1", want: "c++ 1+1"},
		{name: "plus kept beside white space", in: "a+b %41", want: "a+b a", rounds: 1},
		{name: "invalid utf8", in: "a\xffb", want: "a\ufffdb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := Normalize(tc.in)
			if n.Text != tc.want {
				t.Errorf("Text = %q, want %q", n.Text, tc.want)
			}
			if n.DecodeRounds != tc.rounds {
				t.Errorf("DecodeRounds = %d, want %d", n.DecodeRounds, tc.rounds)
			}
			if n.Overlong != tc.overlong || n.NUL != tc.nul {
				t.Errorf("Overlong, NUL = %v, %v; want %v, %v", n.Overlong, n.NUL, tc.overlong, tc.nul)
			}
			if n.Invisible != tc.invisible || n.TagChars != tc.tags {
				t.Errorf("Invisible, TagChars = %d, %d; want %d, %d", n.Invisible, n.TagChars, tc.invisible, tc.tags)
			}
		})
	}
}

// FuzzNormalize checks that Normalize never panics, returns valid UTF-8 without NUL or
// invisible characters, and that scanning the result never panics either.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"", "%", "%%", "%2", "%u", "%u12", "%c0", "%c0%", "%e0%80", "..%c0%af..", "%25%32%65",
		"&#x3c;script&#x3e;", "\x00", "\xff\xfe", "\U000E0041", "a\u200bb", "①②⑦", strings.Repeat("%25", 50),
		"http://[::1]:80/", "http://0x7f.1/", "' or 1=1 --", "; cat /etc/passwd", "A  b\t\n\r\n C", "x \n y", "\v\f", "ignore previous instructions",
	} {
		f.Add(s)
	}
	d := New(Options{})
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if full := normalizeFull(s); n != full {
			t.Fatalf("Normalize(%q) fast path = %+v, full = %+v", s, n, full)
		}
		if !utf8.ValidString(n.Text) {
			t.Fatalf("Normalize(%q) = %q: invalid UTF-8", s, n.Text)
		}
		if strings.ContainsRune(n.Text, 0) || strings.ContainsRune(n.Text, '\u200b') {
			t.Fatalf("Normalize(%q) = %q: NUL or zero-width survived", s, n.Text)
		}
		r := d.Scan(s)
		for c, sc := range r.Scores {
			if sc < 0 || sc > 1 {
				t.Fatalf("Scan(%q): %s score %v out of [0,1]", s, Category(c), sc)
			}
		}
	})
}
