package riskscore_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/added060/palisade/plugins/risk/riskscore"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestEvaluateJSONMatchesEvaluate: the hand-written encoder yields valid JSON that decodes to
// the verdict Evaluate returns, including awkward strings from config.
func TestEvaluateJSONMatchesEvaluate(t *testing.T) {
	s, err := riskscore.New([]byte(`{"stage_signals":{"inj\"ection\n":"gr\\ound\u0001ing","detector":"verifier"},"weights":{"gr\\ound\u0001ing":1}}`),
		[]byte(`{"tools":{"transfer_funds":{"criticality":"HIGH","fallback":"draft \"x\" \u00e9\u2028"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range [][]byte{
		env("transfer_funds", abi.Prior{Stage: "inj\"ection\n", Action: "none", Score: 0.9}, det(0.4)),
		env("transfer_funds", det(0.1)),
		env("transfer_funds"),
		env("other", det(0.333333333)),
		[]byte(`{"method":"tools/list"}`),
		[]byte(`{"method":"tools/call","phase":"response"}`),
	} {
		got := s.EvaluateJSON(e, nil)
		if !json.Valid(got) {
			t.Fatalf("invalid JSON: %s", got)
		}
		var dec abi.Verdict
		if err := json.Unmarshal(got, &dec); err != nil {
			t.Fatal(err)
		}
		want := s.Evaluate(e)
		var wm, gm any
		json.Unmarshal(want.Metadata, &wm)
		json.Unmarshal(dec.Metadata, &gm)
		if !reflect.DeepEqual(wm, gm) {
			t.Fatalf("metadata %s != %s", dec.Metadata, want.Metadata)
		}
		dec.Metadata, want.Metadata = nil, nil
		if !reflect.DeepEqual(dec, want) {
			t.Fatalf("EvaluateJSON = %+v\nEvaluate     = %+v", dec, want)
		}
	}
}

func BenchmarkEvaluateJSON(b *testing.B) {
	s, _ := riskscore.New(nil, []byte(profiles))
	e := env("transfer_funds", inj(0.1), det(0.2), abi.Prior{Stage: "judge", Action: "allow", Score: 0.9})
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = s.EvaluateJSON(e, buf[:0])
	}
}
