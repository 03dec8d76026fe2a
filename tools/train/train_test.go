package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/added060/palisade/host/infer/train"
	"github.com/added060/palisade/tools/eval/score"
	"gopkg.in/yaml.v3"
)

func TestAUROC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pos, neg []float64
		want     float64
	}{
		{"perfect", []float64{0.9, 0.8}, []float64{0.1, 0.2}, 1},
		{"inverted", []float64{0.1}, []float64{0.9}, 0},
		{"ties count half", []float64{0.5}, []float64{0.5}, 0.5},
		{"mixed", []float64{0.9, 0.3}, []float64{0.5, 0.1}, 0.75},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := train.AUROC(tc.pos, tc.neg); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("AUROC = %v, want %v", got, tc.want)
			}
			if got, want := train.AUROC(tc.pos, tc.neg), score.AUROC(tc.pos, tc.neg); got != want {
				t.Errorf("train.AUROC = %v, tools/eval/score.AUROC = %v: make model and make eval disagree", got, want)
			}
		})
	}
}

func TestThresholdForFPR(t *testing.T) {
	benign := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95}
	th := train.ThresholdForFPR(benign, 0.1) // one of ten may be flagged
	flagged := 0
	for _, b := range benign {
		if b >= th {
			flagged++
		}
	}
	if flagged != 1 {
		t.Errorf("threshold %v flags %d benign, want 1", th, flagged)
	}
}

// writeSet writes a small, separable data set: attacks share obvious tokens.
func writeSet(t *testing.T, dir, name string, n int) string {
	t.Helper()
	var b bytes.Buffer
	kinds := map[string]string{
		"benign":        "please read the notes file number %d and summarise",
		"sql_injection": "' OR 1=1 UNION SELECT password FROM users -- %d",
		"xss":           "<script>alert(%d)</script><img src=x onerror=alert(1)>",
	}
	for i := range n {
		for _, label := range []string{"benign", "sql_injection", "xss"} {
			line, _ := json.Marshal(train.Example{Text: fmt.Sprintf(kinds[label], i), Label: label})
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTrainDeterministicAndServable trains twice on the same data: the ONNX
// bytes must be equal, the model must load in ONNX Runtime (run checks it),
// agree with the Go math, and separate the classes.
func TestTrainDeterministicAndServable(t *testing.T) {
	dir := t.TempDir()
	tr := writeSet(t, dir, "train.jsonl", 40)
	dev := writeSet(t, dir, "dev.jsonl", 10)
	te := writeSet(t, dir, "test.jsonl", 10)
	held := writeHeldout(t, dir)
	var outs [2][]byte
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprintf("m%d", i), "model.onnx")
		var stdout, stderr bytes.Buffer
		args := []string{"-train", tr, "-dev", dev, "-test", te, "-out", out, "-dim", "4096", "-epochs", "3",
			"-card", filepath.Join(dir, "card.md"), "-spec", filepath.Join(dir, "spec.yaml"), "-lib", libPath(t), "-extra-benign", "", "-probe-benign", "", "-extra-heldout", held}
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("run = %d: %s", code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "held-out training texts "+held+": 3\n") {
			t.Errorf("held-out texts not trained on:\n%s", stdout.String())
		}
		if !strings.Contains(stdout.String(), "max |onnx - go| = ") {
			t.Fatalf("no onnx/go comparison in output:\n%s", stdout.String())
		}
		var err error
		if outs[i], err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(stdout.String(), "\n") {
			if strings.HasPrefix(line, "all ") {
				f := strings.Fields(line)
				if f[5] != "1.0000" { // AUROC column
					t.Errorf("separable data: overall AUROC %s, want 1.0000", f[5])
				}
			}
		}
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("two runs on the same data wrote different models")
	}
	// -eval reads the spec and model back through ONNX Runtime.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-eval", "-model", filepath.Join(dir, "m0", "model.onnx"), "-model-spec", filepath.Join(dir, "spec.yaml"), "-test", te, "-lib", libPath(t)}, &stdout, &stderr); code != 0 {
		t.Fatalf("eval = %d: %s", code, stderr.String())
	}
	for _, cat := range []string{"sql_injection", "xss", "all"} {
		if !strings.Contains(stdout.String(), cat) {
			t.Errorf("eval output lacks %s:\n%s", cat, stdout.String())
		}
	}

	// -eval-list adds one line per text, in the file's order: its score, the arg-max label and
	// its own; on separable data the arg-max label is its own and attacks score above benign.
	stdout.Reset()
	if code := run([]string{"-eval", "-eval-list", "-model", filepath.Join(dir, "m0", "model.onnx"), "-model-spec", filepath.Join(dir, "spec.yaml"), "-test", te, "-lib", libPath(t)}, &stdout, &stderr); code != 0 {
		t.Fatalf("eval -eval-list = %d: %s", code, stderr.String())
	}
	var listed []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "text ") {
			listed = append(listed, line)
		}
	}
	if len(listed) != 30 {
		t.Fatalf("-eval-list listed %d texts, want 30:\n%s", len(listed), stdout.String())
	}
	want, err := train.ReadExamples(te)
	if err != nil {
		t.Fatal(err)
	}
	maxBenign, minAttack := 0.0, 1.0
	for i, line := range listed {
		f := strings.SplitN(line, " ", 5)
		score, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		text, err := strconv.Unquote(f[4])
		if err != nil || text != want[i].Text {
			t.Errorf("line %d %q: want the text %q (%v)", i, line, want[i].Text, err)
		}
		if f[2] != want[i].Label || f[3] != want[i].Label {
			t.Errorf("line %d %q: want predicted and own label %s", i, line, want[i].Label)
		}
		if f[3] == "benign" {
			maxBenign = max(maxBenign, score)
		} else {
			minAttack = min(minAttack, score)
		}
	}
	if maxBenign >= minAttack {
		t.Errorf("-eval-list: a benign text scores %.4f, an attack %.4f", maxBenign, minAttack)
	}
}

func libPath(t *testing.T) string {
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

func TestBenignBreakdown(t *testing.T) {
	s := []train.Scored{
		{Score: 0.9, Label: train.BenignLabel, Category: "shell", Hard: true},
		{Score: 0.1, Label: train.BenignLabel, Category: "shell"},
		{Score: 0.2, Label: train.BenignLabel, Category: "url", Hard: true},
		{Score: 0.9, Label: "xss"},
	}
	got := fmt.Sprint(train.BenignBreakdown(s, 0.5))
	want := "[{shell 2 1 0.5} {url 1 0 0} {(hard negatives) 2 1 0.5}]"
	if got != want {
		t.Errorf("benignBreakdown = %s, want %s", got, want)
	}
}

// writeHeldout writes three data/heldout records: a benign call, an attack in a field beside a
// filler argument, and a prompt injection in tool output.
func writeHeldout(t *testing.T, dir string) string {
	t.Helper()
	recs := []string{
		`{"id":"b-1","label":"benign","kind":"shell","transport":"hook","tool":"Bash","arguments":{"command":"go test ./..."},"phase":"request","text":"go test ./...","group":"g1"}`,
		`{"id":"a-1","label":"xss","kind":"comment_body","transport":"mcp","server":"s","tool":"comment","arguments":{"issue":"filler issue title","body":"<svg onload=alert(1)>"},"phase":"request","text":"<svg onload=alert(1)>","group":"g2"}`,
		`{"id":"a-2","label":"sql_injection","kind":"search_box","transport":"mcp","server":"s","tool":"fetch","arguments":{"url":"https://docs.example.org/x"},"phase":"response","result":"1' UNION SELECT password FROM users--","text":"1' UNION SELECT password FROM users--","group":"g3"}`,
	}
	p := filepath.Join(dir, "calib.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(recs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHeldoutExamples: a benign call gives its scored texts as benign, a long one its windows;
// an attack gives only its own field, whole (not its windows), under its label (the filler
// beside it and the response's request are left out), and nothing when the stage would not
// read the field (not prose).
func TestHeldoutExamples(t *testing.T) {
	dir := t.TempDir()
	got, err := train.HeldoutExamples(writeHeldout(t, dir), []string{"benign", "sql_injection", "xss"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"benign go test ./...", "xss <svg onload=alert(1)>", "sql_injection 1' UNION SELECT password FROM users--"}
	var have []string
	for _, e := range got {
		have = append(have, e.Label+" "+e.Text)
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("heldoutExamples = %q, want %q", have, want)
	}

	long := strings.Repeat("a quiet line of prose about nothing much. ", 20) // 860 bytes: 3 windows
	recs := []string{
		`{"id":"b-2","label":"benign","kind":"prose","transport":"mcp","server":"s","tool":"post","arguments":{"text":"` + long + `"},"phase":"request","text":"` + long + `","group":"g4"}`,
		`{"id":"a-3","label":"xss","kind":"comment_body","transport":"mcp","server":"s","tool":"comment","arguments":{"body":"` + long + `<script>x</script>"},"phase":"request","text":"` + long + `<script>x</script>","group":"g5"}`,
		`{"id":"a-4","label":"sql_injection","kind":"search_box","transport":"mcp","server":"s","tool":"search","arguments":{"q":"-------"},"phase":"request","text":"-------","group":"g6"}`,
	}
	p := filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(recs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = train.HeldoutExamples(p, []string{"benign", "sql_injection", "xss"})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, e := range got {
		labels = append(labels, e.Label)
		if e.Label == "xss" && e.Text != long+"<script>x</script>" {
			t.Errorf("the attack's text is %d bytes, want its whole field", len(e.Text))
		}
	}
	if fmt.Sprint(labels) != "[benign benign benign xss]" {
		t.Errorf("labels %v, want the benign text's 3 windows and the attack once", labels)
	}
	if _, err := train.HeldoutExamples(writeHeldout(t, dir), []string{"benign", "xss"}); err == nil {
		t.Error("a label the model lacks was accepted")
	}
}

// TestHeldoutExamplesFilesAndKinds: several comma-separated files are numbered as parts (each
// capped on its own), and "FILE@kind+kind" keeps only those kinds' records.
func TestHeldoutExamplesFilesAndKinds(t *testing.T) {
	a := writeHeldout(t, t.TempDir())
	b := writeHeldout(t, t.TempDir())
	labels := []string{"benign", "sql_injection", "xss"}
	got, err := train.HeldoutExamples(a+","+b+"@shell+search_box", labels)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range got {
		have = append(have, fmt.Sprintf("%d %s", e.Part, e.Label))
	}
	want := "[0 benign 0 xss 0 sql_injection 1 benign 1 sql_injection]"
	if fmt.Sprint(have) != want {
		t.Errorf("HeldoutExamples = %v, want %s", have, want)
	}
	if p, k := train.HeldoutSpec("x/calib.jsonl@prose+url"); p != "x/calib.jsonl" || fmt.Sprint(k) != "[prose url]" {
		t.Errorf("HeldoutSpec = %q %v", p, k)
	}
}

// TestFolds: -folds trains on each half of the held-out file's source groups and reports the
// stage's findings on the other half, one row per attack class and benign kind, one column per
// text cut; the halves hold whole groups.
func TestFolds(t *testing.T) {
	dir := t.TempDir()
	tr := writeSet(t, dir, "train.jsonl", 40)
	dev := writeSet(t, dir, "dev.jsonl", 10)
	held := writeHeldout(t, dir)
	var stdout, stderr bytes.Buffer
	args := []string{"-train", tr, "-dev", dev, "-dim", "4096", "-epochs", "3", "-lib", libPath(t), "-extra-benign", "",
		"-folds", held, "-fold-text-cuts", "0.9,0.99"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"text≥0.9", "text≥0.99", "\nbenign shell ", "\nxss ", "\nsql_injection ", "\nbenign hard negative "} {
		if !strings.Contains(out, want) {
			t.Errorf("folds output lacks %q:\n%s", want, out)
		}
	}
	var halves [2]int
	for i := range 100 {
		halves[train.HeldoutHalf(fmt.Sprintf("group %d", i))]++
	}
	if halves[0] < 30 || halves[1] < 30 {
		t.Errorf("100 groups split %v between the halves", halves)
	}
}

// TestFoldsLong: -fold-long-min-bytes judges out of fold with a second model for long texts,
// trained with the -extra-heldout-on-top files; without them, or with a negative length, the
// run fails and says why.
func TestFoldsLong(t *testing.T) {
	dir := t.TempDir()
	tr := writeSet(t, dir, "train.jsonl", 40)
	dev := writeSet(t, dir, "dev.jsonl", 10)
	held := writeHeldout(t, dir)
	base := []string{"-train", tr, "-dev", dev, "-dim", "4096", "-epochs", "3", "-lib", libPath(t), "-extra-benign", "",
		"-folds", held, "-fold-text-cuts", "0.9"}
	var stdout, stderr bytes.Buffer
	if code := run(append(base, "-extra-heldout-on-top", held, "-fold-long-min-bytes", "20"), &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "\nxss ") {
		t.Errorf("folds output lacks xss:\n%s", stdout.String())
	}
	for _, bad := range [][]string{{"-fold-long-min-bytes", "20"}, {"-extra-heldout-on-top", held, "-fold-long-min-bytes", "-1"}} {
		stdout.Reset()
		stderr.Reset()
		if code := run(append(base, bad...), &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "-fold-long-min-bytes") {
			t.Errorf("%v: run = %d, stderr %q", bad, code, stderr.String())
		}
	}
}

// TestExtraHeldoutFiles: -extra-heldout takes several files, each trained on whole and counted
// apart; a missing one fails the run and is named. With -folds, the other files are trained on
// whole by both halves' models (with -fold-no-train, only they are: both halves are then the
// same model).
func TestExtraHeldoutFiles(t *testing.T) {
	dir := t.TempDir()
	tr := writeSet(t, dir, "train.jsonl", 40)
	dev := writeSet(t, dir, "dev.jsonl", 10)
	a := writeHeldout(t, dir)
	b := writeHeldout(t, t.TempDir())
	common := []string{"-train", tr, "-dev", dev, "-test", dev, "-dim", "4096", "-epochs", "3", "-lib", libPath(t),
		"-extra-benign", "", "-probe-benign", ""}
	var stdout, stderr bytes.Buffer
	args := append(slices.Clone(common), "-out", filepath.Join(dir, "m", "model.onnx"), "-card", filepath.Join(dir, "card.md"),
		"-spec", filepath.Join(dir, "spec.yaml"), "-extra-heldout", a+","+b)
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d: %s", code, stderr.String())
	}
	for _, f := range []string{a, b} {
		if !strings.Contains(stdout.String(), "held-out training texts "+f+": 3\n") {
			t.Errorf("%s not trained on:\n%s", f, stdout.String())
		}
	}
	card, err := os.ReadFile(filepath.Join(dir, "card.md"))
	if err != nil || !strings.Contains(string(card), "It also trains on 6 texts") {
		t.Errorf("card does not count both files' texts: %v", err)
	}
	missing := filepath.Join(dir, "no-such.jsonl")
	stdout.Reset()
	stderr.Reset()
	args = append(slices.Clone(common), "-out", filepath.Join(dir, "m2", "model.onnx"), "-card", "", "-spec", filepath.Join(dir, "spec2.yaml"),
		"-extra-heldout", a+","+missing)
	if code := run(args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "no-such.jsonl") {
		t.Errorf("a missing held-out file: run = %d, stderr %q; want a failure naming it", code, stderr.String())
	}
	// -extra-heldout-on-top: its files are read after -extra-heldout's (a bad one is named), the
	// same data gives the same bytes twice, and the fit is not the one where they are counted.
	sha := func(name string, extra ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		spec := filepath.Join(dir, name+".yaml")
		args := append(slices.Clone(common), append([]string{"-out", filepath.Join(dir, name, "model.onnx"), "-card", "", "-spec", spec}, extra...)...)
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: run = %d: %s", extra, code, stderr.String())
		}
		var s struct {
			SHA256 string `yaml:"sha256"`
		}
		b, err := os.ReadFile(spec)
		if err == nil {
			err = yaml.Unmarshal(b, &s)
		}
		if err != nil || s.SHA256 == "" {
			t.Fatalf("%s: %v", spec, err)
		}
		return s.SHA256
	}
	// b's benign call only: a class more, so counting it or not changes the class weights.
	top1, top2 := sha("top1", "-extra-heldout", a, "-extra-heldout-on-top", b+"@shell"), sha("top2", "-extra-heldout", a, "-extra-heldout-on-top", b+"@shell")
	if top1 != top2 {
		t.Errorf("-extra-heldout-on-top twice: sha256 %s and %s, want the same", top1, top2)
	}
	if both := sha("both", "-extra-heldout", a+","+b+"@shell"); both == top1 {
		t.Errorf("-extra-heldout-on-top %s gave the model -extra-heldout gives (%s): not on top", b, both)
	}
	stdout.Reset()
	stderr.Reset()
	args = append(slices.Clone(common), "-out", filepath.Join(dir, "m3", "model.onnx"), "-card", "", "-spec", filepath.Join(dir, "spec3.yaml"),
		"-extra-heldout", a, "-extra-heldout-on-top", missing)
	if code := run(args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "no-such.jsonl") {
		t.Errorf("a missing on-top file: run = %d, stderr %q; want a failure naming it", code, stderr.String())
	}
	models := func(extra ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append(slices.Clone(common), append([]string{"-folds", a, "-fold-text-cuts", "0.9", "-extra-heldout", b}, extra...)...)
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("folds = %d: %s", code, stderr.String())
		}
		var h0, h1 string
		if _, err := fmt.Sscanf(strings.SplitN(stdout.String(), "models ", 2)[1], "%s (half 0) and %s", &h0, &h1); err != nil {
			t.Fatalf("folds output: %v\n%s", err, stdout.String())
		}
		return h0, h1
	}
	if h0, h1 := models(); h0 == h1 {
		t.Errorf("folds with a half each: both halves' models are %s", h0)
	}
	h0, h1 := models("-fold-no-train")
	if h0 != h1 {
		t.Errorf("-fold-no-train with -extra-heldout: halves' models %s and %s, want the same (the other file only)", h0, h1)
	}
	// -folds FILE@kind trains on that kind of the other half only (here none) and judges every
	// record.
	var out, errb bytes.Buffer
	args = append(slices.Clone(common), "-folds", a+"@no_such_kind", "-fold-text-cuts", "0.9", "-extra-heldout", b)
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("folds = %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "models "+h0[:12]+" (half 0) and "+h1[:12]+" (half 1)") {
		t.Errorf("-folds %s@no_such_kind: want the models trained on neither half (%.12s):\n%s", a, h0, out.String())
	}
	for _, want := range []string{"\nbenign shell ", "\nxss ", "\nsql_injection "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-folds FILE@kind judged fewer records: no %q in\n%s", want, out.String())
		}
	}
}

// TestExampleStage: -folds judges by default with the example bundle's detector stage config
// (its threshold, kind_thresholds, kind_label_thresholds, kind_sure, statement_sure and kind_label_sure), so a cut chosen out of
// fold is the one served.
func TestExampleStage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "bundle", "bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bundle struct {
		Stages []struct {
			Name   string         `yaml:"name"`
			Config map[string]any `yaml:"config"`
		} `yaml:"stages"`
	}
	if err := yaml.Unmarshal(b, &bundle); err != nil {
		t.Fatal(err)
	}
	var def map[string]any
	if err := json.Unmarshal([]byte(exampleStage), &def); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, st := range bundle.Stages {
		if st.Name != "detector" {
			continue
		}
		found = true
		for _, k := range []string{"threshold", "kind_thresholds", "kind_label_thresholds", "kind_sure", "statement_sure", "kind_label_sure"} {
			want, _ := json.Marshal(st.Config[k])
			got, _ := json.Marshal(def[k])
			if string(got) != string(want) {
				t.Errorf("-fold-stage default %s = %s, the example bundle's detector says %s", k, got, want)
			}
		}
	}
	if !found {
		t.Fatal("no detector stage in examples/bundle/bundle.yaml")
	}
}
