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

// TestPriorViewStages: a stage that reads the prior from the view (ViewPrior) gets a layout-2
// view whose earlier verdicts are the JSON prior its group's JSON stages get (the caller's in the
// first group), with the rest of the view the message's one layout; a NeedsPrior view stage
// without ViewPrior gets JSON; a message too large to lay out goes to every stage as JSON.
func TestPriorViewStages(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]abi.Prior{}
	kinds := map[string]string{}
	var layout1 []byte
	layout2 := map[string][]byte{}
	rec := func(name string, v abi.Verdict) evalFunc {
		return func(b []byte) ([]byte, error) {
			mu.Lock()
			defer mu.Unlock()
			if !abi.IsView(b) {
				var env abi.Envelope
				if err := json.Unmarshal(b, &env); err != nil {
					t.Errorf("stage %s: %v", name, err)
				}
				kinds[name], got[name] = "json", env.Prior
				return json.Marshal(v)
			}
			pv, err := abi.ParseView(b)
			if err != nil {
				t.Errorf("stage %s: %v", name, err)
				return nil, err
			}
			kinds[name] = "view" + string(rune('0'+pv.Layout()))
			if pv.Layout() == abi.ViewLayout1 {
				layout1 = bytes.Clone(b)
			} else {
				got[name], layout2[name] = pv.Prior(), bytes.Clone(b)
			}
			return json.Marshal(v)
		}
	}
	stages := []*Stage{
		{Name: "a", Plugin: rec("a", abi.Verdict{Action: "none", Score: 0.25, Labels: []string{"x", "y"}, Rule: "r\"1", Reason: "why \u2028"}), Request: true, View: true},
		{Name: "a2", Plugin: rec("a2", abi.Verdict{Action: "none"}), Request: true, View: true, ViewPrior: true},
		{Name: "aj", Plugin: rec("aj", abi.Verdict{Action: "none"}), Request: true},
		{Name: "b", Plugin: rec("b", abi.Verdict{Action: "sample", Guidance: "is it safe?", Reason: "unsure"}), Request: true, NeedsPrior: true, View: true},
		{Name: "c", Plugin: rec("c", abi.Verdict{Action: "none", Score: 0.5}), Request: true, NeedsPrior: true, View: true, ViewPrior: true},
		{Name: "cj", Plugin: rec("cj", abi.Verdict{Action: "none"}), Request: true},
		{Name: "d", Plugin: rec("d", abi.Verdict{Action: "allow", Score: 0.9}), Request: true, NeedsPrior: true, View: true, ViewPrior: true},
		{Name: "dj", Plugin: rec("dj", abi.Verdict{Action: "none"}), Request: true},
	}
	c, err := New(Options{Stages: stages, DefaultAction: "deny"})
	if err != nil {
		t.Fatal(err)
	}
	callerPrior := []abi.Prior{{Stage: "upstream", Action: "allow", Labels: []string{"l"}}}
	env := &abi.Envelope{ABI: abi.Version, ID: "a1", Phase: abi.PhaseRequest, Method: "tools/call", Tool: "read",
		Arguments: json.RawMessage(`{"path":"/etc/passwd"}`), Prior: callerPrior}
	if _, err := c.Evaluate(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "view1", "a2": "view2", "aj": "json", "b": "json", "c": "view2", "cj": "json", "d": "view2", "dj": "json"}
	for n, k := range want {
		if kinds[n] != k {
			t.Errorf("stage %s got %s, want %s", n, kinds[n], k)
		}
	}
	if len(got["a2"]) != 1 || len(got["c"]) != 5 || len(got["d"]) != 7 {
		t.Fatalf("a2 saw %d earlier verdicts, c %d, d %d; want 1, 5 and 7", len(got["a2"]), len(got["c"]), len(got["d"]))
	}
	for _, pair := range [][2]string{{"a2", "aj"}, {"c", "cj"}, {"d", "dj"}} {
		if !slices.EqualFunc(got[pair[0]], got[pair[1]], func(x, y abi.Prior) bool {
			return x.Stage == y.Stage && x.Action == y.Action && x.Score == y.Score && slices.Equal(x.Labels, y.Labels) &&
				x.Rule == y.Rule && x.Reason == y.Reason && x.Guidance == y.Guidance
		}) {
			t.Errorf("view prior of %s\n %+v\nJSON prior of %s\n %+v", pair[0], got[pair[0]], pair[1], got[pair[1]])
		}
	}
	// Each layout-2 view is the message's layout-1 view with the prior table after it.
	for name, b := range layout2 {
		if n := len(layout1); n == 0 || len(b) <= n || !bytes.Equal(b[48:n], layout1[48:]) {
			t.Errorf("stage %s: the layout-2 view does not extend the message's layout-1 view", name)
		}
	}
	if g := got["d"][4]; g.Stage != "b" || g.Guidance != "is it safe?" {
		t.Errorf("d's prior[2] = %+v, want b's sample with its guidance", g)
	}
	// Too large to lay out: JSON for all, prior included.
	clear(kinds)
	env.Arguments = json.RawMessage("[" + strings.Repeat("0,", 200000) + "0]")
	if _, err := c.Evaluate(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	for n := range want {
		if kinds[n] != "json" {
			t.Errorf("large message: stage %s got %s, want json", n, kinds[n])
		}
	}
	if len(got["d"]) != 7 {
		t.Errorf("large message: d saw %d earlier verdicts, want 7", len(got["d"]))
	}
}
