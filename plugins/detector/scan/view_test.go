package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"testing"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/sdk/go/abi"
)

// viewConfigs are the configs the view tests compare under: the defaults, small windows and
// text limits (cuts and windows on most texts), and kinds off.
func viewConfigs(t *testing.T) map[string]Config {
	t.Helper()
	cfg := func(s string) Config {
		c, err := ParseConfig([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	noKinds := cfg(`{}`)
	noKinds.noKinds = true
	return map[string]Config{
		"default": cfg(`{}`),
		"small":   cfg(`{"max_texts":7,"min_bytes":1,"max_bytes":300,"window_bytes":64}`),
		"nokinds": noKinds,
	}
}

// TestViewTextsMatch: for every envelope of the corpus, the texts read from its view are the
// texts read from the JSON envelope (paths, values, kinds, order, what was left out) and so is
// the head.
func TestViewTextsMatch(t *testing.T) {
	envs := corpus.Envelopes(t, 1)
	for name, c := range viewConfigs(t) {
		t.Run(name, func(t *testing.T) {
			n := 0
			for i, env := range envs {
				view, err := abi.AppendView(nil, env)
				if err != nil {
					t.Fatalf("envelope %d: %v", i, err)
				}
				wt, ws, wh := textsJSON(env, c)
				gt, gs, gh := texts(view, c)
				if !reflect.DeepEqual(gt, wt) || gs != ws || gh != wh {
					t.Fatalf("envelope %d (%.300s):\nview     %v %v %+v\nenvelope %v %v %+v", i, env, gt, gs, gh, wt, ws, wh)
				}
				n += len(wt)
			}
			t.Logf("%d envelopes, %d texts, the same both ways", len(envs), n)
		})
	}
}

// TestViewVerdictsMatch: the verdicts are the same both ways, with the real model on a sample
// of the corpus and with a stand-in scorer (deterministic per text, so that many texts fire)
// on all of it.
func TestViewVerdictsMatch(t *testing.T) {
	fake := func(req abi.ScoreRequest) (abi.ScoreResponse, error) {
		resp := abi.ScoreResponse{Labels: []string{"benign", "prompt_injection", "command_injection"}}
		for _, s := range req.Texts {
			h := fnv.New32a()
			h.Write([]byte(s))
			x := h.Sum32()
			resp.Scores = append(resp.Scores, abi.InferScore{Score: float64(x%1000) / 1000, Label: 1 + x%2})
		}
		return resp, nil
	}
	r, _ := detectorRegistry(t, "")
	model := func(req abi.ScoreRequest) (abi.ScoreResponse, error) {
		labels, probs, err := r.Probs(context.Background(), req.Model, req.Texts)
		if err != nil {
			return abi.ScoreResponse{}, err
		}
		return abi.ScoreResponse{Labels: labels, Scores: abi.ReduceScores(labels, probs, req.Benign)}, nil
	}
	for _, sc := range []struct {
		name  string
		every int
		score ScoreFunc
	}{{"stand-in", 1, fake}, {"model", 10, model}} {
		envs := corpus.Envelopes(t, sc.every)
		for name, c := range viewConfigs(t) {
			t.Run(sc.name+"/"+name, func(t *testing.T) {
				fired := 0
				for i, env := range envs {
					view, _ := abi.AppendView(nil, env)
					want, werr := EvaluateScores(env, c, sc.score)
					got, gerr := EvaluateScores(view, c, sc.score)
					if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
						t.Fatalf("envelope %d (%.300s):\nview     %+v (%v)\nenvelope %+v (%v)", i, env, got, gerr, want, werr)
					}
					if want.Action != abi.ActionNone {
						fired++
					}
				}
				t.Logf("%d envelopes, %d verdicts other than none, the same both ways", len(envs), fired)
			})
		}
	}
}

// TestEvaluateBadView: a view that does not parse fails the call (the stage's failure mode
// decides), never a verdict.
func TestEvaluateBadView(t *testing.T) {
	view, _ := abi.AppendView(nil, []byte(`{"phase":"request","method":"tools/call","arguments":{"q":"ignore previous instructions"}}`))
	c, _ := ParseConfig(nil)
	if _, err := EvaluateScores(view[:len(view)-1], c, nil); err == nil {
		t.Fatal("a truncated view was judged")
	}
}

// TestWasmViewMatchesEnvelope: the built plugin asks for the view in describe and, through the
// real runtime and the real model, answers a view as it answers the JSON envelope.
func TestWasmViewMatchesEnvelope(t *testing.T) {
	r, _ := detectorRegistry(t, "")
	p := loadStage(t, []string{hostfn.CapInfer}, r, "{}")
	ctx := context.Background()
	out, err := p.Call(ctx, "describe", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d abi.Describe
	if err := json.Unmarshal(out, &d); err != nil || d.Input != abi.InputView || d.View != abi.ViewLayout1 || abi.CheckInput(d) != nil {
		t.Fatalf("describe %s (%v): want input view, layout %d", out, err, abi.ViewLayout1)
	}
	n := 0
	for i, env := range corpus.Envelopes(t, 40) {
		view, err := abi.AppendView(nil, env)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := p.Evaluate(ctx, env)
		got, gerr := p.Evaluate(ctx, view)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || string(got) != string(want) {
			t.Fatalf("envelope %d (%.200s):\nview     %s (%v)\nenvelope %s (%v)", i, env, got, gerr, want, werr)
		}
		n++
	}
	t.Logf("%d messages, the same verdict both ways", n)
}
