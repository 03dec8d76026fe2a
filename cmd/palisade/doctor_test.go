package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDoctorReportsTheRuntime(t *testing.T) {
	var out, errb bytes.Buffer
	dir := t.TempDir()
	env := &cliEnv{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "PALISADE_DATA_DIR" {
			return dir
		}
		return os.Getenv(k)
	}}
	code := run(context.Background(), []string{"doctor", "--json", "--onnxruntime", filepath.Join(dir, "missing.so")}, env)
	var rep doctorReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out.String(), errb.String())
	}
	// A library that is not there: doctor says so, names where it looked, and exits 1.
	if code != exitFail || rep.Infer.LibraryError == "" || len(rep.Infer.LibraryCandidates) == 0 {
		t.Fatalf("code %d, report %+v", code, rep.Infer)
	}
	found := false
	for _, p := range rep.Problem {
		if strings.Contains(p, "ONNX Runtime") {
			found = true
		}
	}
	if !found || rep.DataDir["writable"] != true {
		t.Fatalf("problems %v, data dir %v", rep.Problem, rep.DataDir)
	}
}
