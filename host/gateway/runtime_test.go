package gateway_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ortBundle is the example bundle with its models declared `runtime: onnxruntime`: the same
// files, which runtime auto evaluates in Go, made to need ONNX Runtime.
func ortBundle(t *testing.T) string {
	t.Helper()
	dir := testenv.ExampleBundle(t)
	manifest := filepath.Join(dir, "bundle.yaml")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		out = append(out, l)
		if strings.HasPrefix(l, "    file: models/") {
			out = append(out, "    runtime: onnxruntime")
		}
	}
	if n := strings.Count(strings.Join(out, "\n"), "runtime: onnxruntime"); n != 2 {
		t.Fatalf("%d models declared on onnxruntime, want the example bundle's 2", n)
	}
	if err := os.WriteFile(manifest, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStagesRunFromAnyDirectory: a binary with ONNX Runtime beside it (DIR/ort/, as `make build`
// lays out build/) runs the example bundle's detector from any working directory, with no
// PALISADE_BUILD or PALISADE_ONNXRUNTIME_LIB; a binary without it runs the example bundle too
// (its linear models are evaluated in Go), and refuses a bundle whose models need ONNX Runtime,
// naming the stage, instead of passing its fixtures with the detector silently off.
func TestStagesRunFromAnyDirectory(t *testing.T) {
	lib := testenv.ONNXRuntime(t)
	bundleDir, ortDir := testenv.ExampleBundle(t), ortBundle(t)
	bin, err := palisadeBinary()
	if err != nil {
		t.Fatal(err)
	}
	install := func(withRuntime bool) string {
		dir := t.TempDir()
		copyFile(t, bin, filepath.Join(dir, "palisade"), 0o755)
		if withRuntime {
			if err := os.MkdirAll(filepath.Join(dir, "ort"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(lib, filepath.Join(dir, "ort", infer.LibraryFile)); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, "palisade")
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, infer.LibraryEnv+"=") && !strings.HasPrefix(kv, "PALISADE_BUILD=") {
			env = append(env, kv)
		}
	}
	policyTest := func(bin, bundleDir string) (int, string) {
		cmd := exec.Command(bin, "policy", "test", "--bundle", bundleDir)
		cmd.Dir, cmd.Env = t.TempDir(), env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := policyTest(install(true), ortDir); code != 0 || strings.Contains(out, "unavailable") {
		t.Fatalf("with the runtime beside the binary: exit %d\n%s", code, out)
	}
	if code, out := policyTest(install(false), bundleDir); code != 0 || strings.Contains(out, "unavailable") {
		t.Fatalf("the example bundle (linear models, in Go) without a runtime: exit %d\n%s", code, out)
	}
	code, out := policyTest(install(false), ortDir)
	if code == 0 || !strings.Contains(out, "stages[2]") || !strings.Contains(out, "detector cannot run") {
		t.Fatalf("without a runtime: exit %d, want a refusal naming the detector stage\n%s", code, out)
	}
	// doctor, from elsewhere, finds the runtime beside the binary.
	cmd := exec.Command(install(true), "doctor")
	cmd.Dir, cmd.Env = t.TempDir(), append(env, "PALISADE_DATA_DIR="+t.TempDir())
	if out, _ := cmd.CombinedOutput(); !strings.Contains(string(out), filepath.Join("ort", infer.LibraryFile)) {
		t.Fatalf("doctor does not show the runtime beside the binary:\n%s", out)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDegradedIsRefusedOrSaid: a gateway whose ONNX Runtime is missing refuses the example
// bundle with its models on ONNX Runtime, naming the detector stage; told to serve degraded, it serves without the stage, says
// not ready, and every decision's audit event names the missing stage.
func TestDegradedIsRefusedOrSaid(t *testing.T) {
	ns := testenv.StartNATS(t)
	up := testenv.StartGoServer(t, true)
	bundleDir := ortBundle(t)
	missing := filepath.Join(t.TempDir(), "libonnxruntime.so")
	cfg := config.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Bundle: bundleDir,
		Upstreams: []config.Upstream{{Name: "go", URL: up}}, NATS: config.NATS{URL: ns.ClientURL()},
		Plugins: config.Plugins{CacheDir: testenv.CacheDir()}}
	start := func(extra string) (*gateway.Gateway, error) {
		f, err := gateway.ParseFile([]byte("infer: {library: " + missing + "}\n" + extra))
		if err != nil {
			t.Fatal(err)
		}
		g, err := gateway.New(context.Background(), gateway.Options{Config: cfg, Sections: f.Sections})
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { g.Close(context.Background()) })
		return g, g.Start(context.Background())
	}
	if _, err := start(""); err == nil || !strings.Contains(err.Error(), "stages[2]") || !strings.Contains(err.Error(), "detector cannot run") {
		t.Fatalf("without the runtime: %v, want the bundle refused naming the detector", err)
	}
	g, err := start("bundles: {allow_unsigned: true, serve_degraded: true}\n")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + g.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "degraded") {
		t.Fatalf("/readyz %d %s, want 503 degraded", resp.StatusCode, body)
	}
	cs := connect(t, "http://"+g.Addr()+"/mcp", nil)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
		t.Fatalf("echo while degraded: %v", err)
	}
	for _, ev := range events(t, ns.ClientURL(), 1) {
		if !strings.Contains(string(ev.Detail), `"degraded":["detector: `) {
			t.Fatalf("a decision while degraded does not say so: %s", ev.Detail)
		}
	}
}
