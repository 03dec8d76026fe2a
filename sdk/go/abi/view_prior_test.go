package abi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
	"github.com/tidwall/gjson"
)

// priorSets are earlier verdicts as the chain passes them on: none, a first group's, a judge's
// input, and odd strings (escapes, invalid UTF-8, U+FFFD itself, U+2028, HTML characters).
var priorSets = [][]abi.Prior{
	nil,
	{{Stage: "rules", Action: "allow", Rule: "allow-echo"}, {Stage: "injection", Action: "none"}, {Stage: "detector", Action: "none"}},
	{{Stage: "rules", Action: "sample", Rule: "shell", Reason: "a shell command", Guidance: "Only read-only commands are fine."},
		{Stage: "injection", Action: "deny", Score: 0.97, Labels: []string{"injection", "override"}, Rule: "ignore_instructions", Reason: "ignore previous"},
		{Stage: "detector", Action: "none", Score: 1e-9, Labels: []string{}},
		{Stage: "risk", Action: "ask", Score: 0.3, Labels: []string{"medium"}, Rule: "risk-high-review", Reason: "risk 0.3 (medium) >= 0.2"}},
	{{Stage: "", Action: ""}, {Stage: "s\"q\\\n\t", Action: "deny", Reason: "bad \xff\xfe utf8 \xe2\x82", Rule: "\ufffd<>&\u2028\u2029",
		Labels: []string{"", "\x00ctl\x1f", "é😀"}, Guidance: strings.Repeat("g", 3000), Score: 1}},
}

// viewWithPrior lays out env (JSON without prior) and adds prior, as host/chain does per group.
func viewWithPrior(t testing.TB, env []byte, prior []abi.Prior) abi.View {
	t.Helper()
	base, err := abi.AppendView(nil, env)
	if err != nil {
		t.Fatalf("AppendView: %v", err)
	}
	before := bytes.Clone(base)
	b, err := abi.AppendViewPrior([]byte("junk before"), base, prior)
	if err != nil {
		t.Fatalf("AppendViewPrior: %v", err)
	}
	if !bytes.Equal(base, before) {
		t.Fatal("AppendViewPrior changed the layout-1 view it copied")
	}
	v, err := abi.ParseView(b[len("junk before"):])
	if err != nil {
		t.Fatalf("ParseView of AppendViewPrior: %v", err)
	}
	if v.Layout() != abi.ViewLayout2 || !v.HasPrior() {
		t.Fatalf("layout %d, prior table %v; want layout 2 with one", v.Layout(), v.HasPrior())
	}
	return v
}

// withPrior is env's JSON with "prior" added the way the host encodes it.
func withPrior(t testing.TB, env []byte, prior []abi.Prior) []byte {
	t.Helper()
	if len(prior) == 0 {
		return env
	}
	pb, err := json.Marshal(prior)
	if err != nil {
		t.Fatal(err)
	}
	env = bytes.TrimSpace(env)
	out := append(bytes.Clone(env[:len(env)-1]), `,"prior":`...)
	if len(bytes.TrimSpace(env[1:len(env)-1])) == 0 {
		out = append(bytes.Clone(env[:len(env)-1]), `"prior":`...)
	}
	return append(append(out, pb...), '}')
}

// checkPrior compares the view's prior with the JSON envelope's, decoded by encoding/json and
// read by gjson (what the risk and judge stages read on the JSON path).
func checkPrior(t *testing.T, what string, v abi.View, envJSON []byte) {
	t.Helper()
	var e struct{ Prior []abi.Prior }
	if err := json.Unmarshal(envJSON, &e); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := v.Prior(); !reflect.DeepEqual(got, e.Prior) {
		t.Fatalf("%s: view prior\n %#v\nJSON prior\n %#v", what, got, e.Prior)
	}
	if v.NumPrior() != len(e.Prior) {
		t.Fatalf("%s: NumPrior %d, JSON has %d", what, v.NumPrior(), len(e.Prior))
	}
	i := 0
	gjson.GetBytes(envJSON, "prior").ForEach(func(_, p gjson.Result) bool {
		got := v.PriorAt(i)
		i++
		for _, f := range []struct{ name, got string }{{"stage", got.Stage}, {"action", got.Action}, {"rule", got.Rule},
			{"reason", got.Reason}, {"guidance", got.Guidance}} {
			if want := p.Get(f.name).String(); f.got != want {
				t.Fatalf("%s: prior[%d].%s = %q, gjson reads %q", what, i-1, f.name, f.got, want)
			}
		}
		if s := p.Get("score"); got.Score != s.Float() || s.Exists() != (got.Score != 0) {
			t.Fatalf("%s: prior[%d].score = %v, gjson reads %s", what, i-1, got.Score, s.Raw)
		}
		var labels []string
		p.Get("labels").ForEach(func(_, l gjson.Result) bool { labels = append(labels, l.String()); return true })
		if got.NumLabels() != len(labels) {
			t.Fatalf("%s: prior[%d]: %d labels, gjson reads %d", what, i-1, got.NumLabels(), len(labels))
		}
		for j, l := range labels {
			if got.Label(j) != l {
				t.Fatalf("%s: prior[%d].labels[%d] = %q, gjson reads %q", what, i-1, j, got.Label(j), l)
			}
		}
		return true
	})
}

// TestViewPriorMatchesJSON: for every test envelope and every prior set, the layout-2 view's
// earlier verdicts are the JSON envelope's prior, field for field, and the rest of the view is
// the layout-1 view's.
func TestViewPriorMatchesJSON(t *testing.T) {
	for i, env := range envelopes(t) {
		base, err := abi.AppendView(nil, env)
		if err != nil {
			t.Fatal(err)
		}
		v1, err := abi.ParseView(base)
		if err != nil {
			t.Fatal(err)
		}
		if v1.Layout() != abi.ViewLayout1 || v1.HasPrior() || v1.NumPrior() != 0 || v1.Prior() != nil {
			t.Fatalf("envelope %d: AppendView made layout %d with a prior table", i, v1.Layout())
		}
		for k, prior := range priorSets {
			v := viewWithPrior(t, env, prior)
			checkPrior(t, "envelope "+itoa(i)+" prior set "+itoa(k), v, withPrior(t, env, prior))
			if !reflect.DeepEqual(viewWalk(t, v), viewWalk(t, v1)) || v.Depth() != v1.Depth() || v.NumFields() != v1.NumFields() {
				t.Fatalf("envelope %d prior set %d: the layout-2 view's envelope differs from layout 1's", i, k)
			}
			for f := range v.NumFields() {
				id, val := v.FieldAt(f)
				id1, val1 := v1.FieldAt(f)
				if id != id1 || val != val1 {
					t.Fatalf("envelope %d prior set %d: field %d differs", i, k, f)
				}
			}
		}
	}
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// TestParseViewReadsLayout1: a layout-1 view whose tables start right after its 40-byte header
// (what a layout-1 writer may send) still parses: the room AppendView leaves is not required.
func TestParseViewReadsLayout1(t *testing.T) {
	b, err := abi.AppendView(nil, []byte(`{"phase":"request","tool":"t","arguments":{"a":["b",1]}}`))
	if err != nil {
		t.Fatal(err)
	}
	// Drop the 8 bytes at 40 and move every offset down by 8.
	c := append(bytes.Clone(b[:40]), b[48:]...)
	put := func(off int, v uint32) {
		c[off], c[off+1], c[off+2], c[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	get := func(off int) uint32 {
		return uint32(c[off]) | uint32(c[off+1])<<8 | uint32(c[off+2])<<16 | uint32(c[off+3])<<24
	}
	put(8, uint32(len(c)))
	for _, off := range []int{20, 28, 36} {
		put(off, get(off)-8)
	}
	nf, fo, nr, ro, nn, no := int(get(16)), int(get(20)), int(get(24)), int(get(28)), int(get(32)), int(get(36))
	for i := range nf {
		put(fo+12*i+4, get(fo+12*i+4)-8)
	}
	for i := range nr {
		put(ro+16*i+8, get(ro+16*i+8)-8)
	}
	for i := range nn {
		for k := 16; k < 40; k += 8 {
			put(no+40*i+k, get(no+40*i+k)-8)
		}
	}
	v, err := abi.ParseView(c)
	if err != nil {
		t.Fatal(err)
	}
	v0, _ := abi.ParseView(b)
	if !reflect.DeepEqual(viewWalk(t, v), viewWalk(t, v0)) || v.Get(abi.FieldTool) != "t" {
		t.Fatal("a 40-byte-header layout-1 view reads differently")
	}
}

func TestAppendViewPriorRefuses(t *testing.T) {
	good, err := abi.AppendView(nil, []byte(`{"phase":"request"}`))
	if err != nil {
		t.Fatal(err)
	}
	two, err := abi.AppendViewPrior(nil, good, priorSets[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"json", []byte(`{"phase":"request","prior":[]}`)},
		{"short", good[:40]},
		{"truncated", good[:len(good)-1]},
		{"layout 2", two},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := abi.AppendViewPrior(nil, tc.b, nil); !errors.Is(err, abi.ErrViewInput) {
				t.Errorf("AppendViewPrior = %v, want ErrViewInput", err)
			}
		})
	}
}

func TestParseViewBrokenPrior(t *testing.T) {
	base, err := abi.AppendView(nil, []byte(`{"phase":"request","arguments":{"a":"b"}}`))
	if err != nil {
		t.Fatal(err)
	}
	good, err := abi.AppendViewPrior(nil, base, []abi.Prior{{Stage: "rules", Action: "sample", Labels: []string{"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	po := len(base)
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	put := func(b []byte, off int, v uint32) []byte {
		b[off], b[off+1], b[off+2], b[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		return b
	}
	for _, tc := range []struct {
		name, want string
		b          []byte
	}{
		{"version 3", "layout version 3", mut(func(b []byte) []byte { b[4] = 3; return b })},
		{"prior table", "prior table", mut(func(b []byte) []byte { return put(b, 40, 1<<20) })},
		{"prior in header", "prior table", mut(func(b []byte) []byte { return put(b, 44, 8) })},
		{"layout 1 as 2", "prior table", func() []byte { b := bytes.Clone(base); b[4] = 2; return b }()},
		{"stage", "prior 0: string outside", mut(func(b []byte) []byte { return put(b, po+4, 1<<30) })},
		{"guidance", "prior 0: string outside", mut(func(b []byte) []byte { return put(b, po+40, 1<<30) })},
		{"label table", "prior 0: label table", mut(func(b []byte) []byte { return put(b, po+48, 1<<20) })},
		{"label", "label 0 outside", mut(func(b []byte) []byte { return put(b, po+viewPriorSize+4, 1<<30) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := abi.ParseView(tc.b)
			if !errors.Is(err, abi.ErrView) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseView = %v, want ErrView saying %q", err, tc.want)
			}
		})
	}
}

const viewPriorSize = 56

// FuzzViewPrior: whatever earlier verdicts the host has, the layout-2 view carries what the
// JSON envelope's prior decodes to.
func FuzzViewPrior(f *testing.F) {
	f.Add("rules", "sample", "shell", "a reason", "guidance", 0.0, "l1", "", 2)
	f.Add("risk", "ask", "", "bad \xff utf8", "", 0.3, "", "x\x00", 3)
	f.Add("", "", "", "", "", 1.0, "é", "\ufffd", 0)
	f.Fuzz(func(t *testing.T, stage, action, rule, reason, guidance string, score float64, l1, l2 string, n int) {
		if math.IsNaN(score) || math.IsInf(score, 0) {
			return // JSON cannot carry it; the host never has it (scores are checked to be in [0,1])
		}
		n = min(max(n, 0), 4)
		var prior []abi.Prior
		for i := range n {
			p := abi.Prior{Stage: stage, Action: action, Rule: rule, Reason: reason, Guidance: guidance, Score: score}
			switch i {
			case 1:
				p.Labels = []string{l1}
			case 2:
				p.Labels, p.Score = []string{l1, l2}, 0
			case 3:
				p.Stage, p.Guidance = l2, ""
			}
			prior = append(prior, p)
		}
		env := []byte(`{"phase":"request","method":"tools/call","tool":"t","arguments":{"a":"b"}}`)
		checkPrior(t, "fuzz", viewWithPrior(t, env, prior), withPrior(t, env, prior))
	})
}
