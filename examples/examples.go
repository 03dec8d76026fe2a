package examples

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Example is one example plugin folder.
type Example struct {
	Lang  string   // folder name under examples/: go, rust, c, assemblyscript, wat
	Name  string   // what its describe export returns
	Tools []string // commands its `make build` needs
}

// All lists the examples, one per language.
var All = []Example{
	{"go", "shellguard", []string{"go", "make"}},
	{"wat", "allowlist", []string{"wat2wasm", "make"}},
	{"c", "pathguard", []string{"clang-14", "make"}},
	{"rust", "secrets", []string{"/usr/bin/rustc", "make"}},
	{"assemblyscript", "ratelimit", []string{"npm", "node", "make"}},
}

// ErrToolchain is returned (wrapped) by Build when a command the example needs is not installed;
// `make setup-sdk` installs them all.
var ErrToolchain = errors.New("examples: toolchain missing")

// Missing returns the commands Build needs that are not on PATH.
func (e Example) Missing() []string {
	var out []string
	for _, t := range e.Tools {
		if _, err := exec.LookPath(t); err != nil {
			out = append(out, t)
		}
	}
	return out
}

// Build runs `make build` in root/examples/LANG (root is the repository root), writing
// outDir/LANG.wasm, and returns the module.
func (e Example) Build(ctx context.Context, root, outDir string) ([]byte, error) {
	if m := e.Missing(); len(m) > 0 {
		return nil, fmt.Errorf("%w: %s needs %v (run make setup-sdk)", ErrToolchain, e.Lang, m)
	}
	out, err := filepath.Abs(filepath.Join(outDir, e.Lang+".wasm"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", filepath.Join(root, "examples", e.Lang), "build", "OUT="+out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("examples: build %s: %w\n%s", e.Lang, err, msg)
	}
	return os.ReadFile(out)
}

// Config returns the example's stage config (testdata/config.json) as the config map the host
// serves to config_get: {"config": JSON}.
func (e Example) Config(root string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(root, "examples", e.Lang, "testdata", "config.json"))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{"config": "{}"}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("examples: %w", err)
	}
	return map[string]string{"config": string(b)}, nil
}

// Capabilities returns the host capabilities the example needs in a stage.
func (e Example) Capabilities() []string {
	if e.Lang == "assemblyscript" {
		return []string{"kv"}
	}
	return nil
}
