package riskscore

import (
	"encoding/json"
	"math"
	"testing"
)

func TestAppendFloat(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {0.25, "0.25"}, {1, "1"}, {0.33333, "0.3333"}, {-0.5, "-0.5"}, {0.00004, "0"},
		{12.5, "12.5"}, {0.99996, "1"}, {0.1 + 0.2, "0.3"}, {0.0001, "0.0001"}, {1e13, "10000000000000"},
		{math.NaN(), "NaN"},
	} {
		if got := string(appendFloat(nil, tc.in)); got != tc.want {
			t.Errorf("appendFloat(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestAppendStringIsJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\", "ctl\x00\x1f", "é\u2028", "bad\xffutf8"} {
		b := appendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, b, err)
		}
		if want := string([]rune(s)); back != want && s != "bad\xffutf8" {
			t.Fatalf("round trip %q -> %q", s, back)
		}
	}
}
