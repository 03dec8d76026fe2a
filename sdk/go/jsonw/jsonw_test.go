package jsonw

import (
	"encoding/json"
	"testing"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote\back`, "\x00\x1f\n", "héllo", "\xff\xfe", "</script>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("AppendString(%q) = %s: not JSON: %v", s, b, err)
		}
		want := string([]rune(s)) // invalid UTF-8 becomes U+FFFD, as encoding/json does
		if got != want {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
	})
}
