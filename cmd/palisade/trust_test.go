package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/gateway"
)

// TestEveryModeRefusesTheSameBundles: with bundles.trusted_keys set and allow_unsigned false,
// serve, proxy, hook and mcp refuse a tampered bundle (its deny rule deleted after signing, the
// old signature left in place) and an unsigned one, each with the same reason: the error
// bundle.CheckTrust gives for that folder. The signed bundle is accepted by the one-process
// modes (serve would then run until stopped).
func TestEveryModeRefusesTheSameBundles(t *testing.T) {
	natsURL, creds := startNATS(t)
	pub, priv, err := bundle.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keyDir := t.TempDir()
	pubPath, err := bundle.WriteKeyPair(filepath.Join(keyDir, "release.key"), priv)
	if err != nil {
		t.Fatal(err)
	}
	keys := bundle.KeySet{}
	keys.Add(pub)

	signed := agentsBundle(t, "")
	if _, err := bundle.Sign(signed, priv); err != nil {
		t.Fatal(err)
	}
	tampered := agentsBundle(t, "")
	if _, err := bundle.Sign(tampered, priv); err != nil {
		t.Fatal(err)
	}
	rules, _ := os.ReadFile(filepath.Join(tampered, "rules.yaml"))
	i := strings.Index(string(rules), "  - id: no-rm-rf-root")
	j := strings.Index(string(rules), "  - id: no-ssh-keys")
	if err := os.WriteFile(filepath.Join(tampered, "rules.yaml"), append(rules[:i:i], rules[j:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	unsigned := agentsBundle(t, "")

	config := func(t *testing.T, dir string) string {
		p := filepath.Join(t.TempDir(), "palisade.yaml")
		y := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
bundle: %s
bundles:
  trusted_keys: [%s]
  allow_unsigned: false
nats:
  url: %s
  creds: %s
plugins:
  cache_dir: %s
upstreams:
  - {name: none, url: "http://127.0.0.1:1/mcp"}
`, t.TempDir(), dir, pubPath, natsURL, creds, filepath.Join(os.TempDir(), "palisade-test-cache-cli"))
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rmRF, err := os.ReadFile("../../host/proxy/testdata/agents/hook/bash_rm_rf.json")
	if err != nil {
		t.Fatal(err)
	}
	type mode struct {
		name  string
		stdin string
		args  func(cfg string) []string
		// refused checks a refusal's exit code and stdout; the reason is checked on stderr.
		refused func(code int, stdout string) bool
	}
	modes := []mode{
		{"serve", "", func(c string) []string { return []string{"serve", "--config", c} },
			func(code int, out string) bool { return code != 0 }},
		{"proxy", "", func(c string) []string { return []string{"proxy", "--config", c, "--", "true"} },
			func(code int, out string) bool { return code != 0 }},
		{"hook", string(rmRF), func(c string) []string { return []string{"hook", "--config", c} },
			// The hook answers ask: a person decides a call Palisade cannot judge.
			func(code int, out string) bool {
				return code == 0 && strings.Contains(out, `"permissionDecision":"ask"`)
			}},
		{"mcp", "", func(c string) []string { return []string{"mcp", "--config", c} },
			func(code int, out string) bool { return code != 0 }},
	}
	for _, b := range []struct{ name, dir string }{{"tampered", tampered}, {"unsigned", unsigned}} {
		_, _, verr := bundle.CheckTrust(b.dir, keys, false)
		if verr == nil {
			t.Fatalf("%s bundle passes CheckTrust", b.name)
		}
		for _, m := range modes {
			t.Run(b.name+"/"+m.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var out, errb strings.Builder
				code := run(ctx, m.args(config(t, b.dir)), &cliEnv{Stdin: strings.NewReader(m.stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
				if !m.refused(code, out.String()) {
					t.Fatalf("not refused: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
				}
				if !strings.Contains(errb.String(), verr.Error()) {
					t.Errorf("stderr %q lacks the reason %q", errb.String(), verr.Error())
				}
			})
		}
	}
	// The signed bundle is served: the hook denies by its rule, mcp and proxy run.
	for _, m := range modes[1:] {
		t.Run("signed/"+m.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := run(context.Background(), m.args(config(t, signed)), &cliEnv{Stdin: strings.NewReader(m.stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
			if code != 0 || m.name == "hook" && !strings.Contains(out.String(), "no-rm-rf-root") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
			}
		})
	}
}

// TestServeRequiresATrustChoice: serve refuses a config that loads a local bundle without a
// bundles: section (it used to load it unsigned with only a warning), naming the setting that
// states the choice; --allow-unsigned or a bundles: section makes it explicit.
func TestServeRequiresATrustChoice(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "bundle")
	write := func(name, bundle, extra string) string {
		p := filepath.Join(dir, name)
		y := "listen: 127.0.0.1:0\nbundle: " + bundle + "\nupstreams: [{name: none, url: \"http://127.0.0.1:1/mcp\"}]\n" + extra
		if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	code, _, errs := runKong(t, []string{"serve", "--config", write("implicit.yaml", local, "")}, nil)
	if code != exitUsage || !strings.Contains(errs, "bundles.allow_unsigned") || !strings.Contains(errs, "trusted_keys") {
		t.Fatalf("no bundles: section: exit %d, stderr %q; want 2 naming bundles.allow_unsigned and trusted_keys", code, errs)
	}
	for _, tc := range []struct{ name, bundle, extra string }{
		{"allow_unsigned", local, "bundles: {allow_unsigned: true}\n"},
		{"trusted_keys", local, "bundles: {trusted_keys: [k.pub]}\n"},
		{"remote source", "nats://PALISADE_BUNDLES", ""}, // must be signed whatever the config says
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := gateway.LoadFile(write(tc.name+".yaml", tc.bundle, tc.extra))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.TrustChoice(); err != nil {
				t.Errorf("TrustChoice = %v, want nil", err)
			}
		})
	}
	// --allow-unsigned states the choice on the command line: serve gets past it (and then fails
	// on the missing bundle folder, exit 1, not 2).
	code, _, errs = runKong(t, []string{"serve", "--config", write("flag.yaml", local, ""), "--allow-unsigned", "--data-dir", t.TempDir(), "--nats-url", "nats://127.0.0.1:1"}, nil)
	if code == exitUsage || strings.Contains(errs, "bundles.allow_unsigned:") {
		t.Errorf("--allow-unsigned: exit %d, stderr %q; want past the trust check", code, errs)
	}
}
