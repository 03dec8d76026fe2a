package chain

import (
	"encoding/json"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

func FuzzDecodeVerdict(f *testing.F) {
	for _, s := range []string{`{"action":"deny","reason":"r","score":1}`, `{"action":"maybe"}`, `{}`, `not json`, `{"action":"allow","score":2}`, `{"action":"ask","labels":["a"],"evidence":[{"path":"x"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeVerdict(b)
		if err != nil {
			return
		}
		if !abi.ValidAction(v.Action) || v.Score < 0 || v.Score > 1 {
			t.Fatalf("accepted an invalid verdict %+v", v)
		}
		again, _ := json.Marshal(v)
		v2, err := DecodeVerdict(again)
		if err != nil || v2.Action != v.Action || v2.Score != v.Score {
			t.Fatalf("round trip: %+v -> %+v (%v)", v, v2, err)
		}
	})
}
