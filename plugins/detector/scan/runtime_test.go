package scan

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/added060/palisade/host/infer"
)

// TestGoMatchesONNXRuntime: the trained detector models give the same probabilities evaluated
// in Go (runtime auto, what the gateway runs) as in ONNX Runtime, on real calls of every kind
// — held-out calib records, whole lines, up to 2,000 bytes each (issue 27).
func TestGoMatchesONNXRuntime(t *testing.T) {
	specs := []string{"detector.yaml", "detector-long.yaml"}
	goReg, goSpecs := detectorModelsOn(t, "", infer.RuntimeAuto, specs...)
	ortReg, _ := detectorModelsOn(t, "", infer.RuntimeONNX, specs...)
	runtimes := func(r *infer.Registry) map[string]string {
		m := map[string]string{}
		for _, st := range r.Status().Models {
			m[st.Name] = st.Runtime
		}
		return m
	}
	goRT, ortRT := runtimes(goReg), runtimes(ortReg)
	var texts []string
	for _, set := range []string{"fresh", "code-extra", "prose-extra", "attacks-extra", "sqli-extra"} {
		f, err := os.Open(filepath.Join(repoRoot(t), "data", "heldout", set, "calib.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for n := 0; n < 300 && sc.Scan(); n++ {
			texts = append(texts, string(sc.Bytes()[:min(len(sc.Bytes()), 2000)]))
		}
		f.Close()
	}
	for _, spec := range goSpecs {
		if goRT[spec.Name] != "go" || ortRT[spec.Name] != "onnxruntime" {
			t.Fatalf("%s runs on %q and %q, want go and onnxruntime", spec.Name, goRT[spec.Name], ortRT[spec.Name])
		}
		worst := 0.0
		for i := 0; i < len(texts); i += 32 {
			batch := texts[i:min(i+32, len(texts))]
			_, a, err := goReg.Probs(context.Background(), spec.Name, batch)
			if err != nil {
				t.Fatal(err)
			}
			_, b, err := ortReg.Probs(context.Background(), spec.Name, batch)
			if err != nil {
				t.Fatal(err)
			}
			for j := range a {
				worst = max(worst, math.Abs(float64(a[j]-b[j])))
			}
		}
		if worst > 2e-6 {
			t.Errorf("%s: probabilities differ by up to %.2g between Go and ONNX Runtime", spec.Name, worst)
		}
		t.Logf("%s: %d texts, largest difference %.2g", spec.Name, len(texts), worst)
	}
}
