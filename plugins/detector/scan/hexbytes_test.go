package scan

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// hexBytesFields is hexBytes as it was written with strings.FieldsFunc: the reference the
// allocation-free walk must agree with.
func hexBytesFields(s string) bool {
	fs := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ' ' || r == '\n' || r == '\t' })
	if len(fs) < 3 || len(fs) < 8 && strings.ContainsAny(s, " \n\t") {
		return false
	}
	for _, f := range fs {
		if len(f) != 2 || !hexDigit(f[0]) || !hexDigit(f[1]) {
			return false
		}
	}
	return true
}

// TestHexBytesMatchesFields: the walk decides every string as the FieldsFunc version did,
// on hand-picked shapes and on random strings over the bytes that matter.
func TestHexBytesMatchesFields(t *testing.T) {
	cases := []string{"", "aa:bb:cc", "aa:bb", "AA:bb:0c:", "::aa::bb::cc::", "aa bb cc", "aa bb cc dd ee ff 00 11",
		"aa bb cc dd ee ff 00 1", "de:ad:be:ef:\xff", "aa:bb:c\u00e9", "aa:bb:cc\r", "aa\tbb\ncc:dd:ee:ff:00:11"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0af:: \n\tgA\xc3\xa9"
	for range 20000 {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := hexBytes(s), hexBytesFields(s); got != want {
			t.Errorf("hexBytes(%q) = %v, FieldsFunc version %v", s, got, want)
		}
	}
}
