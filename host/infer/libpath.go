package infer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LibraryEnv is the environment variable naming the ONNX Runtime shared library.
const LibraryEnv = "PALISADE_ONNXRUNTIME_LIB"

// LibraryFile is the file name `make setup-onnxruntime` writes under
// $PALISADE_BUILD/ort/ (ONNX Runtime 1.24.1 from onnxruntime-node@1.24.1).
const LibraryFile = "libonnxruntime.so.1.24.1"

// LibraryCandidate is one place FindLibrary looked.
type LibraryCandidate struct {
	Source string `json:"source"` // config, env, build, system
	Path   string `json:"path"`
	Found  bool   `json:"found"`
}

// binaryDirs is the folder of the running binary, symlinks resolved (none when unknown). A test
// binary's folder is a temporary one: harmless, nothing is there.
var binaryDirs = func() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return []string{filepath.Dir(exe)}
}

// FindLibrary picks the ONNX Runtime library: the configured path, then
// $PALISADE_ONNXRUNTIME_LIB, then $PALISADE_BUILD/ort/libonnxruntime.so.1.24.1, then beside the
// binary (DIR/ort/, DIR/../lib/), then ./build/ort/..., then /usr/local/lib. A configured or env path that
// does not exist is an error (it was asked for explicitly). It returns the
// path, and every candidate for doctor to print.
func FindLibrary(configured string) (string, []LibraryCandidate, error) {
	var tried []LibraryCandidate
	check := func(source, path string) bool {
		_, err := os.Stat(path)
		tried = append(tried, LibraryCandidate{Source: source, Path: path, Found: err == nil})
		return err == nil
	}
	if configured != "" {
		if check("config", configured) {
			return configured, tried, nil
		}
		return "", tried, fmt.Errorf("onnxruntime library %s (config): %w", configured, os.ErrNotExist)
	}
	if env := os.Getenv(LibraryEnv); env != "" {
		if check("env", env) {
			return env, tried, nil
		}
		return "", tried, fmt.Errorf("onnxruntime library %s ($%s): %w", env, LibraryEnv, os.ErrNotExist)
	}
	var builds []string
	if b := os.Getenv("PALISADE_BUILD"); b != "" {
		builds = append(builds, filepath.Join(b, "ort", LibraryFile))
	}
	// Beside the binary, whatever the working directory: build/palisade finds build/ort/, and
	// an installed bin/palisade finds lib/.
	for _, dir := range binaryDirs() {
		builds = append(builds, filepath.Join(dir, "ort", LibraryFile), filepath.Join(dir, "..", "lib", LibraryFile))
	}
	builds = append(builds, filepath.Join("build", "ort", LibraryFile))
	for _, p := range builds {
		if check("build", p) {
			abs, err := filepath.Abs(p)
			if err != nil {
				return p, tried, nil
			}
			return abs, tried, nil
		}
	}
	for _, p := range []string{"/usr/local/lib/" + LibraryFile, "/usr/local/lib/libonnxruntime.so"} {
		if check("system", p) {
			return p, tried, nil
		}
	}
	return "", tried, errors.Join(ErrUnavailable, fmt.Errorf("onnxruntime library not found (set %s or run make setup-onnxruntime)", LibraryEnv))
}
