package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
)

// ascPath is the examples' asc 0.28.20 (make setup-sdk installs it).
const ascPath = "../../examples/assemblyscript/node_modules/.bin/asc"

// buildAS compiles the AssemblyScript file testdata/NAME.ts (--path finds @extism/as-pdk for the
// Extism PDK plugin); without asc the test is skipped
// (fatal with PALISADE_REQUIRE_TOOLCHAINS=1, as in host/scaffold).
func buildAS(t *testing.T, name string) []byte {
	t.Helper()
	if _, err := os.Stat(ascPath); err != nil {
		if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") != "" {
			t.Fatalf("asc not installed (run make setup-sdk): %v", err)
		}
		t.Skipf("asc not installed (make setup-sdk; PALISADE_REQUIRE_TOOLCHAINS=1 makes this fatal): %v", err)
	}
	out := filepath.Join(t.TempDir(), name+".wasm")
	cmd := exec.Command(ascPath, "testdata/"+name+".ts", "--outFile", out, "--optimize",
		"--use", "abort=testdata/"+name+"/abort", "--path", "../../examples/assemblyscript/node_modules")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("asc %s: %v\n%s", name, err, b)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// TestAssemblyScriptFailuresOnDirect runs an AssemblyScript plugin built with the SDK on the
// direct convention through the failure modes: an abort traps, a loop times out, growing past
// the memory cap traps, and an error is a plugin error; each time the next calls work.
func TestAssemblyScriptFailuresOnDirect(t *testing.T) {
	wasm := buildAS(t, "misbehave")
	rt := newRuntime(t)
	for _, tc := range []struct {
		mode string
		want error
	}{
		{"trap", plugin.ErrTrap},
		{"loop", plugin.ErrTimeout},
		{"grow", plugin.ErrTrap},
		{"error", plugin.ErrPluginErr},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			timeout := 200 * time.Millisecond
			if tc.mode == "grow" {
				timeout = 10 * time.Second // growing to the cap takes a while on a loaded machine
			}
			p, err := rt.Load(context.Background(), plugin.Spec{
				Name:          "as-" + tc.mode,
				Wasm:          wasm,
				Config:        map[string]string{"config": fmt.Sprintf(`{"mode":%q,"when_tool":"bad"}`, tc.mode)},
				Timeout:       timeout,
				InitTimeout:   timeout, // AssemblyScript has no runtime to start: the first call is bounded as the others
				MaxPages:      512,     // 32 MiB
				PoolSize:      2,
				HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(context.Background()) })
			if got := p.Convention(); got != "direct" {
				t.Fatalf("convention = %s, want direct", got)
			}
			_, err = p.Evaluate(context.Background(), []byte(bad))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			for i := range 3 {
				out, err := p.Evaluate(context.Background(), []byte(good))
				if err != nil || string(out) != `{"action":"none"}` {
					t.Fatalf("call %d after %s: %q, %v", i, tc.mode, out, err)
				}
			}
			if tc.want != plugin.ErrPluginErr && p.Stats().Replaced.Load() == 0 {
				t.Errorf("a %s instance was not replaced", tc.mode)
			}
		})
	}
}

// TestAssemblyScriptConventions loads the no-op plugin built with the SDK (direct) and with
// Extism's AssemblyScript PDK (the compatibility path): the host picks the convention from the
// exports and both answer the same verdict.
func TestAssemblyScriptConventions(t *testing.T) {
	rt := newRuntime(t)
	for _, conv := range []string{"direct", "extism"} {
		t.Run(conv, func(t *testing.T) {
			p, err := rt.Load(context.Background(), plugin.Spec{
				Name: "as-noop-" + conv, Wasm: buildAS(t, "noop_"+conv), PoolSize: 1,
				HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close(context.Background()) })
			if got := p.Convention(); got != conv {
				t.Errorf("convention = %s, want %s", got, conv)
			}
			out, err := p.Evaluate(context.Background(), []byte(good))
			if err != nil || string(out) != `{"action":"none"}` {
				t.Errorf("evaluate: %q, %v", out, err)
			}
		})
	}
}
