package chain

import (
	"encoding/json"
	"reflect"
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

// verdictSeeds are verdicts as the example bundle's stages return them (recorded from a served
// load run), and shapes the fast path must hand to encoding/json.
var verdictSeeds = []string{
	`{"action":"none","rule":"detector"}`,
	`{"action":"none"}`,
	`{"action":"none","metadata":{"scores":{},"phase":"request"}}`,
	`{"action":"none","rule":"detector","score":0.0123456789}`,
	`{"action":"allow","reason":"risk 0.12 (low) on a low-criticality tool","rule":"risk-low-allow","score":0.12,"labels":["low"],"metadata":{"signals":{"grounding":0,"verifier":0.3},"weights":{"grounding":0.5,"verifier":0.5},"composite":0.12,"level":"low","criticality":"LOW","profiled":true}}`,
	`{"action":"deny","rule":"deny-engine-stop","reason":"the agent may not stop or replace Palisade","score":1}`,
	`{"action":"uncertain","reason":"uncertain: x","rule":"injection/x","score":0.9,"labels":["command_injection"],"evidence":[{"label":"command_injection","path":"arguments.command","match":"sudo x","rules":["a"]}],"metadata":{"scores":{"command_injection":0.9}}}`,
	`{"action":"ask","final":true,"require_token":false,"incomplete":true,"guidance":"g","fallback":"deny","arguments":{"a":"\u00e9\"}"},"result":[1,{"b":null}],"labels":[]}`,
	`{"action":"none","score":1e-7}`, `{"action":"none","score":-0}`, `{"action":"none","score":1e400}`,
	`{"action":"none","labels":null}`, `{"action":"none","metadata":null}`, `{"action":"none","metadata":"x,y"}`,
	`{"action":"none","Action":"deny"}`, `{"action":"none","action":"deny"}`, `{"action":"d\u0065ny"}`,
	`{"action":"none","unknown":1}`, `{ "action":"none"}`, `{"action":"none"} `, `{"action":"nonë"}`,
	`{}`, `{"action":"none",}`, `[]`, `{"action":"none","score":"0.5"}`, `{"action":"none","final":1}`,
}

// FuzzDecodeVerdictFast: wherever the fast path accepts, encoding/json decodes the same bytes
// to the same verdict, field for field; and it accepts the recorded verdicts without evidence.
func FuzzDecodeVerdictFast(f *testing.F) {
	for _, s := range verdictSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeVerdictFast(b)
		if !ok {
			return
		}
		var want abi.Verdict
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refused it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("%q:\nfast %#v\njson %#v", b, fast, want)
		}
	})
}

// TestDecodeVerdictFastTakes: the fast path takes the verdicts the example bundle's stages
// return without evidence (so the served path skips reflection), and leaves to encoding/json
// what it does not read exactly as encoding/json does.
func TestDecodeVerdictFastTakes(t *testing.T) {
	for i, s := range verdictSeeds {
		_, ok := decodeVerdictFast([]byte(s))
		var want abi.Verdict
		jerr := json.Unmarshal([]byte(s), &want)
		switch {
		case (i < 6 || i == 7) && !ok: // 7: booleans, raw fields with escapes, empty labels
			t.Errorf("fast path refused %s", s)
		case ok && jerr != nil:
			t.Errorf("fast path took %s, which encoding/json refuses: %v", s, jerr)
		}
	}
	for _, s := range []string{`{"action":"none","Action":"deny"}`, `{"action":"none","action":"deny"}`, `{"action":"d\u0065ny"}`, `{"action":"none","labels":null}`, `{ "action":"none"}`, `{"action":"none","unknown":1}`, `{"action":"nonë"}`, verdictSeeds[6]} {
		if _, ok := decodeVerdictFast([]byte(s)); ok {
			t.Errorf("fast path took %s; encoding/json must decide it", s)
		}
	}
	// Through DecodeVerdict both paths give the same verdict for every seed.
	for _, s := range verdictSeeds {
		got, gerr := DecodeVerdict([]byte(s))
		var want abi.Verdict
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			if gerr == nil {
				t.Errorf("%s: DecodeVerdict accepted what encoding/json refuses", s)
			}
			continue
		}
		if want.Action == "" {
			want.Action = abi.ActionNone
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: DecodeVerdict %#v, encoding/json %#v", s, got, want)
		}
	}
}

// keepsNoBytes decodes b, overwrites b, and checks the verdict is what a decode of an
// untouched copy gives: DecodeVerdict keeps no byte of its input, which EvaluateVerdict's
// callers rely on (the bytes are a pooled instance's, the next call's once decoding returns).
func keepsNoBytes(t *testing.T, b []byte) {
	t.Helper()
	pristine := append([]byte(nil), b...)
	got, err := DecodeVerdict(b)
	for i := range b {
		b[i] = 'X'
	}
	want, werr := DecodeVerdict(pristine)
	if (err == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: after its bytes were overwritten the verdict reads\n%#v (%v), want\n%#v (%v)", pristine, got, err, want, werr)
	}
	if err != nil && err.Error() != werr.Error() {
		t.Fatalf("%q: error %q after the overwrite, want %q", pristine, err, werr)
	}
}

// Every verdict seed, on the fast path and on encoding/json's (evidence, escapes), decodes to
// memory of its own.
func TestDecodeVerdictKeepsNoBytes(t *testing.T) {
	for _, s := range verdictSeeds {
		keepsNoBytes(t, []byte(s))
	}
	keepsNoBytes(t, []byte(`{"action":"ask","labels":["a","b"],"evidence":[{"label":"x","path":"arguments.command","match":"sudo rm","rules":["r"]}],"metadata":{"k":"v"},"arguments":{"a":1},"result":"s"}`))
}

func FuzzDecodeVerdictKeepsNoBytes(f *testing.F) {
	for _, s := range verdictSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { keepsNoBytes(t, b) })
}
