package scan

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/sdk/go/abi"
)

// scoreVia answers like the plugin's palisade.InferScore: the request encoded, the real
// infer_score host function (host/hostfn) on the registry, the answer decoded.
func scoreVia(t testing.TB, r *infer.Registry) ScoreFunc {
	t.Helper()
	for _, f := range hostfn.Build("detector", []string{hostfn.CapInfer}, hostfn.Deps{Inferer: r}) {
		if f.Name != hostfn.FnInferScore {
			continue
		}
		return func(req abi.ScoreRequest) (abi.ScoreResponse, error) {
			resp, err := abi.DecodeScoreResponse(f.Call(context.Background(), req.AppendBinary(nil)))
			if err == nil && resp.Error != "" {
				err = errors.New(resp.Error)
			}
			return resp, err
		}
	}
	t.Fatal("hostfn.Build has no infer_score")
	return nil
}

// TestScoresMatchInfer: the binary infer_score path gives, text for text, the score and label
// the JSON infer path gives, and so the same verdicts, on every text of data/split/test.jsonl
// (as an argument and as tool output) and every message of testdata/everything.jsonl.
func TestScoresMatchInfer(t *testing.T) {
	r, spec := detectorRegistry(t, "")
	var envs []string
	f, err := os.Open(filepath.Join(repoRoot(t), "data", "split", "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var x struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"text": x.Text})
		envs = append(envs, `{"abi":"1.1","phase":"request","method":"tools/call","tool":"send_message","arguments":`+string(args)+`}`)
		res, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": x.Text}}})
		envs = append(envs, `{"abi":"1.1","phase":"response","method":"tools/call","tool":"fetch","result":`+string(res)+`}`)
	}
	ev, err := os.ReadFile(filepath.Join("testdata", "everything.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(ev)), "\n") {
		var x struct {
			Method, Tool      string
			Arguments, Result json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		if len(x.Arguments) > 0 {
			envs = append(envs, `{"abi":"1.1","phase":"request","method":"`+x.Method+`","tool":"`+x.Tool+`","arguments":`+string(x.Arguments)+`}`)
		}
		if len(x.Result) > 0 {
			envs = append(envs, `{"abi":"1.1","phase":"response","method":"`+x.Method+`","tool":"`+x.Tool+`","result":`+string(x.Result)+`}`)
		}
	}

	cfg, _ := json.Marshal(map[string]any{"threshold": spec.Thresholds["malicious"], "kind_thresholds": map[string]float64{"text": 0.98}})
	c, err := ParseConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	call, score := inferVia(r), scoreVia(t, r)
	texts, flagged := 0, 0
	for _, env := range envs {
		ts := Texts([]byte(env), c)
		if len(ts) == 0 {
			continue
		}
		raw, err := call(EncodeInferRequest(c.Model, ts))
		if err != nil {
			t.Fatal(err)
		}
		want, err := DecodeInferResponse(raw, len(ts), c.Benign)
		if err != nil {
			t.Fatal(err)
		}
		values := make([]string, len(ts))
		for i, x := range ts {
			values[i] = x.Value
		}
		resp, err := score(abi.ScoreRequest{Model: c.Model, Benign: c.Benign, Texts: values})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ScoreResults(resp, len(ts))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("infer_score %v, infer %v, for %s", got, want, snippet(env))
		}
		texts += len(ts)
		vj, errj := Evaluate([]byte(env), c, call)
		vs, errs := EvaluateScores([]byte(env), c, score)
		if errj != nil || errs != nil || !reflect.DeepEqual(vj, vs) {
			t.Fatalf("verdicts differ for %s:\ninfer       %+v (%v)\ninfer_score %+v (%v)", snippet(env), vj, errj, vs, errs)
		}
		if vs.Action != abi.ActionNone {
			flagged++
		}
	}
	t.Logf("%d messages, %d texts, %d flagged: the same scores, labels and verdicts on both paths", len(envs), texts, flagged)
	if texts < 4000 || flagged == 0 {
		t.Errorf("compared %d texts and %d flagged verdicts: the corpus did not load", texts, flagged)
	}
}

// TestScoresErrors: infer_score's errors reach EvaluateScores as infer's do.
func TestScoresErrors(t *testing.T) {
	c, _ := ParseConfig(nil)
	env := []byte(`{"arguments":{"q":"hello world"}}`)
	bad, _ := detectorRegistry(t, noRuntime)
	if _, err := EvaluateScores(env, c, scoreVia(t, bad)); err == nil || !strings.Contains(err.Error(), "unavailable") {
		t.Errorf("no runtime: %v, want unavailable", err)
	}
	unknown := c
	unknown.Model = "nope"
	ok, _ := detectorRegistry(t, "")
	if _, err := EvaluateScores(env, unknown, scoreVia(t, ok)); err == nil || !strings.Contains(err.Error(), "unknown model") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := ScoreResults(abi.ScoreResponse{Labels: []string{"a"}, Scores: []abi.InferScore{{Score: 1.5}}}, 1); err == nil {
		t.Error("score 1.5 accepted")
	}
	if _, err := ScoreResults(abi.ScoreResponse{Labels: []string{"a"}, Scores: []abi.InferScore{{Score: 0.5, Label: 3}}}, 1); err == nil {
		t.Error("label index 3 of 1 accepted")
	}
	if _, err := ScoreResults(abi.ScoreResponse{}, 1); err == nil {
		t.Error("0 scores for 1 text accepted")
	}
}
