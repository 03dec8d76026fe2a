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

// FuzzAppendStringStd: AppendStringStd writes byte for byte what encoding/json writes for s.
func FuzzAppendStringStd(f *testing.F) {
	for _, s := range []string{"", "plain", `q"uote\back`, "\x00\x1f\n\b\f\r\t\x7f", "héllo", "\xff\xfe", "</script>&", "\u2028\u2029", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendStringStd(nil, s); string(got) != string(want) {
			t.Fatalf("AppendStringStd(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

// FuzzAppendCompact: for valid JSON, AppendCompact writes byte for byte what json.Marshal
// writes for it as a json.RawMessage (compacted, HTML-safe).
func FuzzAppendCompact(f *testing.F) {
	for _, s := range []string{`{ "a" : [1, 2] }`, `"<\u2028>&\"\\"`, "[\"\xe2\x80\xa8\", \t\n null]", `{"k":"\\\" </x>"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		want, err := json.Marshal(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendCompact(nil, raw); string(got) != string(want) {
			t.Fatalf("AppendCompact(%q) = %s, json.Marshal %s", raw, got, want)
		}
	})
}
