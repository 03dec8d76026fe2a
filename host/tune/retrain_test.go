package tune

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/infer/train"
	"github.com/added060/palisade/sdk/go/abi"
)

func ortLib(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PALISADE_ONNXRUNTIME_LIB"); p != "" {
		return p
	}
	p, err := filepath.Abs("../../build/ort/libonnxruntime.so.1.24.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("ONNX Runtime library missing: run `make setup-onnxruntime` (%v)", err)
	}
	return p
}

// trainingSet writes a small split (train, dev, test) whose benign texts are notes and whose
// attacks are SQL injection and XSS, as tools/train's test does.
func trainingSet(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "split")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]string{
		"benign":        {"please read the notes file number %d and summarise", "schedule the meeting for room %d tomorrow", "list the open tickets of team %d"},
		"sql_injection": {"' OR 1=1 UNION SELECT password FROM users -- %d", "1; DROP TABLE users; -- %d"},
		"xss":           {"<script>alert(%d)</script>", "<img src=x onerror=alert(%d)>"},
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"train.jsonl", 30}, {"dev.jsonl", 10}, {"test.jsonl", 10}} {
		var b bytes.Buffer
		for i := range f.n {
			for _, label := range []string{"benign", "sql_injection", "xss"} {
				for _, k := range kinds[label] {
					line, _ := json.Marshal(train.Example{Text: fmt.Sprintf(k, i), Label: label})
					b.Write(append(line, '\n'))
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// detectorBundle is a bundle with one detector stage whose model is trained on split.
func detectorBundle(t *testing.T, split string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	var ex [3][]train.Example
	for i, f := range []string{"train.jsonl", "dev.jsonl", "test.jsonl"} {
		var err error
		if ex[i], err = train.ReadExamples(filepath.Join(split, f)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := train.Run(context.Background(), train.Config{Train: ex[0], Dev: ex[1], Test: ex[2], Name: "det",
		Out: filepath.Join(dir, "models", "det.onnx"), Preprocessor: train.DefaultPreprocessor(infer.FormatSparse, 4096), Epochs: 3, Library: ortLib(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Spec.File = "models/det.onnx"
	models, _ := yaml.Marshal([]infer.ModelSpec{r.Spec})
	manifest := "name: tune-detector\nversion: 1.0.0\nabi: \"1.0\"\ndefault_action: allow\ncoverage:\n  uncovered: pass\nmodels:\n" + indent(string(models)) + `stages:
  - name: detector
    plugin: plugins/detector.wasm
    sha256: ` + strings.Repeat("ab", 32) + `
    phase: both
    capabilities: [infer]
    config:
      model: det
      threshold: 0.3
`
	if err := os.WriteFile(filepath.Join(dir, bundle.ManifestFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

func det(action string, evidence ...abi.Evidence) abi.StageResult {
	return abi.StageResult{Stage: "detector", Action: action, Evidence: evidence}
}

// detectorLabels: three calls whose note text the detector flagged, marked false positive;
// one SQL injection it missed, marked false negative with its category in the note.
func detectorLabels() []audit.Event {
	var events []audit.Event
	for i, note := range []string{"the <script> tag of page 1 needs a review", "the <script> tag of page 2 needs a review", "the <script> tag of page 3 needs a review"} {
		args, _ := json.Marshal(map[string]string{"body": note, "title": "review"})
		d := decision(fmt.Sprintf("FP%d", i), "notes", "create_note", "deny", "detector", "detector", string(args),
			det(abi.ActionDeny, abi.Evidence{Label: "xss", Path: "arguments.body"}))
		events = append(events, labelled(d, audit.LabelFalsePositive))
	}
	fn := decision("FN1", "db", "query", "allow", "", "", `{"sql":"x' UNION SELECT secret FROM vault --","limit":"10"}`, det(abi.ActionNone))
	l := labelled(fn, audit.LabelFalseNegative)
	l.Label.Note = "this is sql_injection"
	return append(events, l)
}

// TestProposeRetrainsDetector: the texts of detector false positives join the training data as
// benign and a false negative's most suspicious argument as its category; the retrained model
// replaces the bundle's (file, sha256, thresholds.malicious re-picked on dev), the model card
// diff says what changed, and the same labels give the same model bytes.
func TestProposeRetrainsDetector(t *testing.T) {
	split := trainingSet(t)
	base := detectorBundle(t, split)
	var sums [2]string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "proposal")
		r, err := Propose(context.Background(), detectorLabels(), Options{Bundle: base, Out: out, Now: now, TrainData: split, ONNXRuntime: ortLib(t), Epochs: 3})
		if err != nil {
			t.Fatal(err)
		}
		rt := r.Detector
		if rt == nil || rt.Skipped != "" {
			t.Fatalf("detector not retrained: %+v", rt)
		}
		if rt.AddedBenign != 3 || rt.AddedAttack != 1 || rt.Added[0].Label != "sql_injection" || rt.Added[0].Path != "arguments.sql" {
			t.Fatalf("added %+v", rt.Added)
		}
		if rt.FPFlaggedBefore != 3 || rt.FPFlaggedAfter >= rt.FPFlaggedBefore {
			t.Errorf("labelled false positives flagged before %d, after %d: want 3, then fewer", rt.FPFlaggedBefore, rt.FPFlaggedAfter)
		}
		if rt.OldSHA256 == rt.NewSHA256 || len(rt.Before) == 0 || len(rt.After) != len(rt.Before) {
			t.Fatalf("retrain %+v", rt)
		}
		t.Logf("threshold %.4f → %.4f; FP flagged %d → %d of %d; FN flagged %d → %d of %d; %.2fs", rt.OldThreshold, rt.NewThreshold,
			rt.FPFlaggedBefore, rt.FPFlaggedAfter, rt.AddedBenign, rt.FNFlaggedBefore, rt.FNFlaggedAfter, rt.AddedAttack, rt.TrainSeconds)
		m, err := bundle.LoadManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		spec, _, ok := modelSpec(m, "det")
		if !ok || spec.SHA256 != rt.NewSHA256 || spec.Thresholds["malicious"] != rt.NewThreshold {
			t.Fatalf("models: entry %+v, want sha256 %s threshold %v", spec, rt.NewSHA256, rt.NewThreshold)
		}
		if got := fileSHA256(filepath.Join(out, "models", "det.onnx")); got != rt.NewSHA256 {
			t.Fatalf("the proposal's model file has sha256 %s, want %s", got, rt.NewSHA256)
		}
		diff, err := os.ReadFile(filepath.Join(out, CardDiffFile))
		if err != nil || !strings.Contains(string(diff), rt.NewSHA256) || !strings.Contains(string(diff), "| xss |") {
			t.Fatalf("card diff: %v\n%s", err, diff)
		}
		sums[i] = rt.NewSHA256
	}
	if sums[0] != sums[1] {
		t.Errorf("the same labels retrained two different models: %s, %s", sums[0], sums[1])
	}
}

// TestProposeRetrainSkipped: without training data the proposal is still written, the model
// is the bundle's, and the report says why it was not retrained.
func TestProposeRetrainSkipped(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"no flag", "", "no training data given"},
		{"missing folder", filepath.Join(t.TempDir(), "nowhere"), "training data not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := propose(t, detectorLabelsExample(), Options{TrainData: tc.data})
			if r.Detector == nil || !strings.Contains(r.Detector.Skipped, tc.want) {
				t.Fatalf("Detector %+v, want skipped with %q", r.Detector, tc.want)
			}
		})
	}
}

// detectorLabelsExample is a detector false positive of the example bundle's shape.
func detectorLabelsExample() []audit.Event {
	d := decision("C", "docs", "search", "deny", "detector", "detector", `{"q":"select the best notes"}`,
		det(abi.ActionDeny, abi.Evidence{Label: "sql_injection", Path: "arguments.q"}))
	return []audit.Event{labelled(d, audit.LabelFalsePositive)}
}

func TestTextAt(t *testing.T) {
	args := json.RawMessage(`{"body":"hello world","items":[{"q":"a"},{"q":"second"}],"n":3}`)
	for _, tc := range []struct {
		path, want string
		ok         bool
	}{
		{"arguments.body", "hello world", true},
		{"arguments.items[1].q", "second", true},
		{"arguments.body[6:11]", "world", true},
		{"arguments.body[6:99]", "", false},
		{"arguments.n", "", false},
		{"result.content[0].text", "", false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if got, ok := textAt(args, tc.path); got != tc.want || ok != tc.ok {
				t.Errorf("textAt(%q) = %q, %v, want %q, %v", tc.path, got, ok, tc.want, tc.ok)
			}
		})
	}
}
