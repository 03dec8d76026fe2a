package policytest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/policytest"
)

// bundleDir writes the agents test bundle (host/proxy/testdata/agents) with the rules plugin.
func bundleDir(t *testing.T) string {
	t.Helper()
	return testenv.AgentsBundle(t, nil)
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	dir := bundleDir(t)
	for _, tc := range []struct {
		name     string
		o        policytest.Options
		n, fails int
	}{
		{"dir all pass", policytest.Options{FixtureDir: "testdata/fixtures"}, 3, 0},
		{"wrong expectation", policytest.Options{Fixtures: []string{"testdata/wrong.json"}}, 1, 1},
		{"no expectation passes", policytest.Options{Fixtures: []string{"testdata/noexpect.json"}}, 1, 0},
		{"--expect applies", policytest.Options{Fixtures: []string{"testdata/noexpect.json"}, Expect: "allow"}, 1, 1},
		{"--expect does not override", policytest.Options{Fixtures: []string{"testdata/wrong.json"}, Expect: "deny"}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Bundle, tc.o.CacheDir = dir, testenv.CacheDir()
			rs, err := policytest.Run(ctx, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != tc.n || policytest.Failed(rs) != tc.fails {
				t.Fatalf("%d results, %d failed; want %d, %d: %+v", len(rs), policytest.Failed(rs), tc.n, tc.fails, rs)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	dir := bundleDir(t)
	for _, tc := range []struct {
		name  string
		o     policytest.Options
		usage bool
	}{
		{"no bundle", policytest.Options{FixtureDir: "testdata/fixtures"}, true},
		{"no fixtures", policytest.Options{Bundle: dir}, true},
		{"bad expect", policytest.Options{Bundle: dir, FixtureDir: "testdata/fixtures", Expect: "maybe"}, true},
		{"bundle missing", policytest.Options{Bundle: t.TempDir(), FixtureDir: "testdata/fixtures"}, false},
		{"fixture missing", policytest.Options{Bundle: dir, Fixtures: []string{"testdata/none.json"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.CacheDir = testenv.CacheDir()
			_, err := policytest.Run(ctx, tc.o)
			if err == nil || errors.Is(err, policytest.ErrUsage) != tc.usage {
				t.Fatalf("err = %v, usage %v", err, tc.usage)
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	rs, err := policytest.Run(context.Background(), policytest.Options{Bundle: bundleDir(t), FixtureDir: "testdata/fixtures", CacheDir: testenv.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := policytest.WriteJSON(&buf, rs); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	n := 0
	for sc.Scan() {
		var v struct {
			Fixture, Expected, Decision, Reason string
			Stages                              []struct {
				Stage  string   `json:"stage"`
				Action string   `json:"action"`
				Score  *float64 `json:"score"`
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if v.Fixture == "" || v.Decision == "" || len(v.Stages) != 1 || v.Stages[0].Stage != "rules" || v.Stages[0].Score == nil {
			t.Errorf("line %s lacks fixture, decision or stage action/score", sc.Bytes())
		}
		if v.Fixture == "rm-rf-root" && (v.Decision != "deny" || *v.Stages[0].Score != 1) {
			t.Errorf("rm-rf-root: %s", sc.Bytes())
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d lines, want 3", n)
	}
	var txt bytes.Buffer
	_ = policytest.WriteText(&txt, rs)
	if !strings.Contains(txt.String(), "3 fixtures, 3 passed, 0 failed") {
		t.Errorf("text summary: %s", txt.String())
	}
}

// TestRunReportsABadManifest checks that with no fixtures named, a bundle.yaml that does not
// parse or validate is reported as itself (naming the field), not as "no fixtures folder".
func TestRunReportsABadManifest(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"bad value", "name: b\nversion: \"1\"\ndefault_action: maybe\ncoverage: {uncovered: pass}\nstages: [{name: s, plugin: p.wasm, sha256: " + strings.Repeat("0", 64) + "}]\n", "default_action"},
		{"bad yaml", "name: [\n", "bundle.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := policytest.Run(context.Background(), policytest.Options{Bundle: dir})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "fixtures folder") || errors.Is(err, policytest.ErrUsage) {
				t.Fatalf("err = %v, want the bundle.yaml error naming %s", err, tc.want)
			}
		})
	}
}

// Only group sre may call deploy_*, tested as a policy author would: fixtures that name who
// calls, through the real rules plugin.
func TestPrincipalFixtures(t *testing.T) {
	rules := []byte(`rules:
  - id: sre-deploys
    priority: 10
    action: allow
    when: {tool: ["deploy_*"], principal: {claims: {groups: sre}}}
  - id: no-deploys
    priority: 20
    action: deny
    reason: only sre may deploy
    when: {tool: ["deploy_*"]}
`)
	rs, err := policytest.Run(context.Background(), policytest.Options{Bundle: testenv.AgentsBundle(t, rules),
		Fixtures: []string{"testdata/principal.json"}, CacheDir: testenv.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || policytest.Failed(rs) != 0 {
		t.Fatalf("%d results, %d failed; want 3 passing: %+v", len(rs), policytest.Failed(rs), rs)
	}
}
