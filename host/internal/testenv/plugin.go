package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
)

// RepoRoot returns the repository root (the folder holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: go.mod not found")
		}
		dir = parent
	}
}

// BuildPlugin builds the Go plugin package pkg (import path relative to the repo root, such as
// "./plugins/rules") for wasip1 and returns the .wasm path. Builds are cached per test binary, and
// go's build cache makes repeats cheap.
func BuildPlugin(t testing.TB, pkg string) string {
	t.Helper()
	return BuildPluginTags(t, pkg, "")
}

// BuildPluginTags is BuildPlugin with build tags (go build -tags).
func BuildPluginTags(t testing.TB, pkg, tags string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	key := pkg + " " + tags
	if p, ok := buildCache[key]; ok {
		return p
	}
	root := RepoRoot(t)
	dir := filepath.Join(os.TempDir(), "palisade-test-plugins-"+strings.ReplaceAll(root, "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer("./", "", "/", "_").Replace(pkg)
	if tags != "" {
		name += "-" + strings.NewReplacer(",", "_", " ", "_").Replace(tags)
	}
	out := filepath.Join(dir, name+".wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-tags="+tags, "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testenv: build plugin %s: %v\n%s", pkg, err, b)
	}
	buildCache[key] = out
	return out
}

// ReadPlugin builds pkg and returns its bytes and sha256.
func ReadPlugin(t testing.TB, pkg string) ([]byte, string) {
	t.Helper()
	b, err := os.ReadFile(BuildPlugin(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// CacheDir is the wazero compilation cache shared by every test binary of the repository: a Go
// plugin compiles once (minutes under -race) instead of once per test.
func CacheDir() string { return filepath.Join(os.TempDir(), "palisade-test-wazero-cache") }
