package jsonw

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// sameAsMarshal checks that AppendVerdict's output decodes to what encoding/json's does.
func sameAsMarshal(t *testing.T, v abi.Verdict) {
	t.Helper()
	got, err := AppendVerdict([]byte("prefix"), v)
	if err != nil {
		t.Fatalf("AppendVerdict(%+v): %v", v, err)
	}
	if string(got[:6]) != "prefix" {
		t.Fatalf("AppendVerdict overwrote the buffer's prefix: %q", got)
	}
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(got[6:], &g); err != nil {
		t.Fatalf("AppendVerdict wrote invalid JSON %s: %v", got[6:], err)
	}
	json.Unmarshal(want, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("AppendVerdict = %s\nencoding/json = %s", got[6:], want)
	}
}

func TestAppendVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    abi.Verdict
	}{
		{"none", abi.Verdict{Action: abi.ActionNone}},
		{"empty action", abi.Verdict{}},
		{"deny with evidence", abi.Verdict{Action: "deny", Reason: `model: "x" <b>&`, Rule: "detector", Score: 0.9731, Labels: []string{"a", "b\n"},
			Evidence: []abi.Evidence{{Label: "a", Path: "arguments.q", Match: "ign\x00ore"}, {}, {Match: "only match"}}}},
		{"evidence rules", abi.Verdict{Action: "deny", Evidence: []abi.Evidence{{Label: "a", Rules: []string{"a/b", "c"}}, {Rules: []string{"only"}}}}},
		{"tiny and huge scores", abi.Verdict{Action: "allow", Score: 1e-7}},
		{"one", abi.Verdict{Action: "allow", Score: 1, Final: true, Guidance: "g", RequireToken: true, Fallback: "echo", Incomplete: true}},
		{"raw fields", abi.Verdict{Action: "allow", Arguments: json.RawMessage(`{"a": [1, 2]}`), Result: json.RawMessage(`"r"`), Metadata: json.RawMessage(`{"hides_tool":true}`)}},
		{"invalid utf-8", abi.Verdict{Action: "deny", Reason: "\xff\xfe ok"}},
	} {
		t.Run(tc.name, func(t *testing.T) { sameAsMarshal(t, tc.v) })
	}
	for _, f := range []float64{1e21, 123456789, 5e-324, 0.1, 1.0 / 3} {
		if got, want := string(AppendFloat(nil, f)), mustMarshal(f); got != want {
			t.Errorf("AppendFloat(%v) = %s, encoding/json %s", f, got, want)
		}
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAppendVerdictRefuses(t *testing.T) {
	for _, v := range []abi.Verdict{
		{Action: "allow", Arguments: json.RawMessage(`{"a":`)},
		{Action: "allow", Metadata: json.RawMessage(`nope`)},
		{Action: "allow", Score: math.NaN()},
	} {
		if _, err := AppendVerdict(nil, v); !errors.Is(err, ErrInvalidRaw) {
			t.Errorf("AppendVerdict(%+v) error = %v, want ErrInvalidRaw", v, err)
		}
	}
}

func FuzzAppendVerdict(f *testing.F) {
	f.Add("deny", "reason <&>", "rule", 0.5, "label", "arguments.x", "match\x00", true, `{"a":1}`)
	f.Add("", "", "", 0.0, "", "", "", false, ``)
	f.Add("none", "\xff", "r", 1e-9, "l", "p", "m", false, `[1, 2 ,3]`)
	f.Fuzz(func(t *testing.T, action, reason, rule string, score float64, label, path, match string, final bool, args string) {
		if math.IsNaN(score) || math.IsInf(score, 0) || !json.Valid([]byte(args)) && args != "" {
			t.Skip()
		}
		sameAsMarshal(t, abi.Verdict{Action: action, Reason: reason, Rule: rule, Score: score, Labels: []string{label},
			Evidence: []abi.Evidence{{Label: label, Path: path, Match: match}}, Final: final, Arguments: json.RawMessage(args)})
	})
}

func BenchmarkAppendVerdict(b *testing.B) {
	v := abi.Verdict{Action: "deny", Reason: "detector-v1: prompt_injection (score 0.973) in arguments.q", Rule: "detector", Score: 0.973,
		Labels: []string{"prompt_injection"}, Evidence: []abi.Evidence{{Label: "prompt_injection", Path: "arguments.q", Match: "ignore previous instructions"}}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendVerdict(buf[:0], v)
	}
}
