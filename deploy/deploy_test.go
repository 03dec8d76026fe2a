package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDockerfile(t *testing.T) {
	f, err := os.Open("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	findings, err := LintDockerfile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range findings {
		t.Errorf("Dockerfile %s", fd)
	}
	b, _ := os.ReadFile("../Dockerfile")
	ins, _ := parseDockerfile(strings.NewReader(string(b)))
	has := func(cmd, args string) bool {
		for _, in := range ins {
			if in.cmd == cmd && strings.Contains(in.args, args) {
				return true
			}
		}
		return false
	}
	for _, want := range []struct{ cmd, args string }{
		{"USER", "palisade"},
		{"EXPOSE", "8420"},
		{"VOLUME", "/var/lib/palisade"},
		{"HEALTHCHECK", "/healthz"},
		{"FROM", "golang:"},
	} {
		if !has(want.cmd, want.args) {
			t.Errorf("Dockerfile has no %s %s", want.cmd, want.args)
		}
	}
}

func TestLintDockerfileRules(t *testing.T) {
	const good = "FROM golang:1.26.0 AS build\nRUN true\nFROM debian:12.8-slim\nCOPY --from=build /a /a\nUSER app\nHEALTHCHECK CMD [\"true\"]\n"
	for _, tc := range []struct {
		name, file string
		want       []string // rules, in order
	}{
		{"good", good, nil},
		{"stage reference", "FROM golang:1.26.0 AS build\nFROM build\nUSER app\nHEALTHCHECK CMD true\n", nil},
		{"digest", "FROM debian@sha256:abc\nUSER app\nHEALTHCHECK CMD true\n", nil},
		{"registry port, no tag", "FROM reg.example:5000/debian\nUSER app\nHEALTHCHECK CMD true\n", []string{"pinned-base"}},
		{"latest", "FROM debian:latest\nUSER app\nHEALTHCHECK CMD true\n", []string{"pinned-base"}},
		{"variable", "ARG V=1\nFROM golang:${V}\nUSER app\nHEALTHCHECK CMD true\n", []string{"pinned-base"}},
		{"no user", "FROM debian:12\nHEALTHCHECK CMD true\n", []string{"user"}},
		{"root user", "FROM debian:12\nUSER root:root\nHEALTHCHECK CMD true\n", []string{"user"}},
		{"uid 0", "FROM debian:12\nUSER 0\nHEALTHCHECK CMD true\n", []string{"user"}},
		{"user only in builder", "FROM debian:12 AS b\nUSER app\nFROM debian:12\nHEALTHCHECK CMD true\n", []string{"user"}},
		{"no healthcheck", "FROM debian:12\nUSER app\n", []string{"healthcheck"}},
		{"healthcheck none", "FROM debian:12\nUSER app\nHEALTHCHECK NONE\n", []string{"healthcheck"}},
		{"add url, continued", "FROM debian:12\nADD --chmod=0755 \\\n  https://example.com/x /x\nUSER app\nHEALTHCHECK CMD true\n", []string{"add-url"}},
		{"add local", "FROM debian:12\nADD x.tar /x\nUSER app\nHEALTHCHECK CMD true\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LintDockerfile(strings.NewReader(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, f := range got {
				rules = append(rules, f.Rule)
			}
			if strings.Join(rules, ",") != strings.Join(tc.want, ",") {
				t.Errorf("rules %v, want %v (%v)", rules, tc.want, got)
			}
		})
	}
}

// unitDirectives reads key=value lines per section of a systemd unit.
func unitDirectives(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "["):
			section = strings.Trim(l, "[]")
		default:
			k, v, _ := strings.Cut(l, "=")
			out[section+"."+k] = append(out[section+"."+k], v)
		}
	}
	return out
}

func TestSystemdUnitDirectives(t *testing.T) {
	d := unitDirectives(t, "palisade.service")
	for key, want := range map[string]string{
		"Service.User":                  "palisade",
		"Service.StateDirectory":        "palisade",
		"Service.RuntimeDirectory":      "palisade",
		"Service.NoNewPrivileges":       "yes",
		"Service.ProtectSystem":         "strict",
		"Service.ReadWritePaths":        "/var/lib/palisade",
		"Service.ExecStart":             "/usr/local/bin/palisade serve --config /etc/palisade/palisade.yaml --socket /run/palisade/engine.sock",
		"Service.Environment":           "PALISADE_DATA_DIR=/var/lib/palisade",
		"Install.WantedBy":              "multi-user.target",
		"Service.CapabilityBoundingSet": "",
	} {
		vs, ok := d[key]
		found := false
		for _, v := range vs {
			found = found || v == want
		}
		if !ok || !found {
			t.Errorf("%s = %q, want %q among them", key, vs, want)
		}
	}
	// The engine socket's folder is the RuntimeDirectory: the engine's, reachable by all.
	if got := strings.Join(d["Service.RuntimeDirectoryMode"], " "); got != "0755" {
		t.Errorf("RuntimeDirectoryMode = %q, want 0755 (agents reach the socket; only the engine creates files)", got)
	}
}

// TestSystemdAnalyzeVerify runs `systemd-analyze verify` on the unit. The binary is not installed
// here, so ExecStart's path is pointed at a stub; everything else is verified as written, and any
// warning (an unknown or misspelt directive is only a warning) fails the test.
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("PALISADE_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal("systemd-analyze missing: run `make setup-deploy` (apt systemd)")
		}
		t.Skip("systemd-analyze missing (make setup-deploy)")
	}
	b, err := os.ReadFile("palisade.service")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stub := filepath.Join(dir, "palisade")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(b), "ExecStart=/usr/local/bin/palisade ", "ExecStart="+stub+" ")
	if unit == string(b) {
		t.Fatal("ExecStart does not run /usr/local/bin/palisade")
	}
	path := filepath.Join(dir, "palisade.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
