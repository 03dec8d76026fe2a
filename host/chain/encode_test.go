package chain

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestGroupInputsEqualFullEncoding: each group's input, built from the one encoding of the
// envelope with the prior spliced in, is byte for byte what encoding the envelope with that prior
// gives; a stage's rewritten arguments reach the next group.
func TestGroupInputsEqualFullEncoding(t *testing.T) {
	var inputs [][]byte
	rec := func(v abi.Verdict) evalFunc {
		return func(b []byte) ([]byte, error) {
			inputs = append(inputs, bytes.Clone(b))
			return json.Marshal(v)
		}
	}
	c, err := New(Options{Stages: []*Stage{
		{Name: "a", Plugin: rec(abi.Verdict{Action: "none", Score: 0.2, Labels: []string{"x"}}), Request: true},
		{Name: "b", Plugin: rec(abi.Verdict{Action: "allow", Arguments: json.RawMessage(`{"path":"/redacted"}`)}), Request: true, NeedsPrior: true},
		{Name: "c", Plugin: rec(abi.Verdict{Action: "none"}), Request: true, NeedsPrior: true},
	}, DefaultAction: "deny"})
	if err != nil {
		t.Fatal(err)
	}
	env := &abi.Envelope{ABI: abi.Version, ID: "a1", Phase: abi.PhaseRequest, Method: "tools/call", Tool: "read", Arguments: json.RawMessage(`{"path":"/etc/passwd"}`),
		Params: json.RawMessage(`{"name":"read","arguments":{"path":"/etc/passwd"}}`), Client: &abi.Client{Name: "c"}}
	want := *env
	if _, err := c.Evaluate(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 3 {
		t.Fatalf("%d stage inputs, want 3", len(inputs))
	}
	for i, in := range inputs {
		var got abi.Envelope
		if err := json.Unmarshal(in, &got); err != nil {
			t.Fatalf("group %d input is not JSON: %v\n%s", i, err, in)
		}
		want.Prior = got.Prior
		if i == 2 {
			want.Arguments = json.RawMessage(`{"path":"/redacted"}`)
		}
		full, _ := json.Marshal(&want)
		if !bytes.Equal(in, full) {
			t.Errorf("group %d input\n%s\nwant\n%s", i, in, full)
		}
		if len(got.Prior) != i {
			t.Errorf("group %d saw %d prior verdicts", i, len(got.Prior))
		}
	}
	if env.Prior != nil {
		t.Errorf("Evaluate left prior on the caller's envelope: %+v", env.Prior)
	}
}

// TestViewStages: a stage that asks for the view gets the view laid out from the envelope (the
// same bytes for every view stage of the message, laid out again after a rewrite of the
// arguments); other stages get the JSON envelope; a message too large to lay out goes to a view
// stage as JSON.
func TestViewStages(t *testing.T) {
	var mu sync.Mutex
	var inputs []string
	rec := func(name string, v abi.Verdict) evalFunc {
		return func(b []byte) ([]byte, error) {
			kind := "json"
			if abi.IsView(b) {
				kind = "view"
				if _, err := abi.ParseView(b); err != nil {
					t.Errorf("stage %s: %v", name, err)
				}
			}
			mu.Lock()
			inputs = append(inputs, name+":"+kind)
			mu.Unlock()
			return json.Marshal(v)
		}
	}
	c, err := New(Options{Stages: []*Stage{
		{Name: "a", Plugin: rec("a", abi.Verdict{Action: "none"}), Request: true, View: true},
		{Name: "b", Plugin: rec("b", abi.Verdict{Action: "none"}), Request: true},
		{Name: "c", Plugin: rec("c", abi.Verdict{Action: "allow", Arguments: json.RawMessage(`{"path":"/redacted"}`)}), Request: true, View: true},
		{Name: "d", Plugin: rec("d", abi.Verdict{Action: "none"}), Request: true, NeedsPrior: true, View: true},
	}, DefaultAction: "deny", Logger: nil})
	if err != nil {
		t.Fatal(err)
	}
	env := &abi.Envelope{ABI: abi.Version, ID: "a1", Phase: abi.PhaseRequest, Method: "tools/call", Tool: "read", Arguments: json.RawMessage(`{"path":"/etc/passwd"}`)}
	if _, err := c.Evaluate(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	slices.Sort(inputs[:3]) // the first group may run concurrently
	if want := []string{"a:view", "b:json", "c:view", "d:json"}; !slices.Equal(inputs, want) {
		t.Errorf("inputs %v, want %v (d reads prior, which only the JSON carries)", inputs, want)
	}
	// Many tiny values: the view would be far larger than the JSON; view stages get JSON.
	inputs = nil
	env.Arguments = json.RawMessage("[" + strings.Repeat("0,", 200000) + "0]")
	if _, err := c.Evaluate(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	slices.Sort(inputs[:3])
	if want := []string{"a:json", "b:json", "c:json", "d:json"}; !slices.Equal(inputs, want) {
		t.Errorf("inputs %v, want %v", inputs, want)
	}
	// A view stage in a later group sees the rewritten arguments laid out again.
	inputs = nil
	c2, err := New(Options{Stages: []*Stage{
		{Name: "a", Plugin: rec("a", abi.Verdict{Action: "allow", Arguments: json.RawMessage(`{"path":"/redacted"}`)}), Request: true, View: true},
		{Name: "r", Plugin: rec("r", abi.Verdict{Action: "none"}), Request: true, NeedsPrior: true},
		{Name: "e", Plugin: evalFunc(func(b []byte) ([]byte, error) {
			v, err := abi.ParseView(b)
			if err != nil {
				return nil, err
			}
			r, _ := v.Root(abi.PartArguments)
			mu.Lock()
			inputs = append(inputs, "e:"+r.Raw)
			mu.Unlock()
			return json.Marshal(abi.Verdict{Action: "none"})
		}), Request: true, View: true},
	}, DefaultAction: "deny"})
	if err != nil {
		t.Fatal(err)
	}
	env.Arguments = json.RawMessage(`{"path":"/etc/passwd"}`)
	if _, err := c2.Evaluate(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	slices.Sort(inputs[1:]) // r and e form the second group and may run concurrently
	if want := []string{"a:view", `e:{"path":"/redacted"}`, "r:json"}; !slices.Equal(inputs, want) {
		t.Errorf("inputs %v, want %v", inputs, want)
	}
}
