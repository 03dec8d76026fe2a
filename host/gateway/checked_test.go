package gateway_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/internal/testenv"
)

// Signed rules deny every call; the swapped-in rules allow every call.
const (
	signedRules  = "rules:\n  - id: signed-deny\n    action: deny\n    reason: the signed rules deny\n"
	swappedRules = "rules:\n  - id: unsigned-allow\n    action: allow\n    reason: the swapped rules allow\n"
)

// writeRulesBundle writes and signs (with priv) a one-stage rules bundle whose rules live in
// the data file rules.yaml.
func writeRulesBundle(t *testing.T, dir string, priv ed25519.PrivateKey, seq int) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	wasm, _ := testenv.ReadPlugin(t, "./plugins/rules")
	y := fmt.Sprintf("name: checked\nversion: v%d\nsequence: %d\nabi: \"1.0\"\ndefault_action: deny\ncoverage: {uncovered: pass}\n"+
		"stages:\n  - name: rules\n    plugin: plugins/rules.wasm\n    timeout: 2s\n    pool: 1\n    data:\n      rules: rules.yaml\n", seq, seq)
	for name, b := range map[string][]byte{"plugins/rules.wasm": wasm, "bundle.yaml": []byte(y), "rules.yaml": []byte(signedRules)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bundle.Pin(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Sign(dir, priv); err != nil {
		t.Fatal(err)
	}
	return dir
}

func trustingCore(t *testing.T, pub ed25519.PublicKey, bundleDir, sequences string) *gateway.Core {
	t.Helper()
	ctx := context.Background()
	core, err := gateway.NewCore(ctx, gateway.CoreOptions{
		Config:   config.Config{Bundle: bundleDir, Plugins: config.Plugins{CacheDir: testenv.CacheDir()}},
		Sections: gateway.Sections{Bundles: &gateway.BundlesConfig{TrustedKeys: []string{bundle.EncodePublicKey(pub)}}},
		MaxPool:  1, Sequences: sequences,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close(ctx) })
	return core
}

func decide(t *testing.T, ch *chain.Chain) string {
	t.Helper()
	env, err := bundle.Fixture{Method: "tools/call", Params: json.RawMessage(`{"name":"anything","arguments":{}}`)}.Envelope("checked")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ch.Evaluate(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return d.Action
}

// TestCoreBuildsWhatItChecked is a hammer: while Core.Build (proxy, hook, mcp, policy test)
// runs again and again on a signed bundle whose rules deny, another goroutine keeps swapping
// rules.yaml for unsigned rules that allow and back. A build either fails or its chain denies:
// none may decide with the swapped bytes, and a staged copy must not outlive its chain. On the
// old code (verify the folder, then build it again from the folder) the swapped rules got
// through in a few builds.
func TestCoreBuildsWhatItChecked(t *testing.T) {
	pub, priv, _ := bundle.GenerateKey()
	dir := writeRulesBundle(t, filepath.Join(t.TempDir(), "b"), priv, 1)
	core := trustingCore(t, pub, dir, "")
	ctx := context.Background()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Add(1)
	go func() { // the agent: swap rules.yaml (whole files, by rename) as fast as it can
		defer wg.Done()
		target := filepath.Join(dir, "rules.yaml")
		for i := 0; ; i++ {
			select {
			case <-stop:
				_ = os.WriteFile(target, []byte(signedRules), 0o644)
				return
			default:
			}
			body := signedRules
			if i%2 == 0 {
				body = swappedRules
			}
			tmp := filepath.Join(filepath.Dir(dir), fmt.Sprintf("rules-%d.tmp", i))
			if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, target); err != nil {
				t.Error(err)
				return
			}
			swaps.Add(1)
			time.Sleep(time.Duration(100+i%7*150) * time.Microsecond)
		}
	}()
	builds := 60
	if testing.Short() {
		builds = 20
	}
	var ok, refused int
	for i := 0; i < builds; i++ {
		b, err := core.Build(ctx, dir, false)
		if err != nil {
			refused++
			continue
		}
		ok++
		if got := decide(t, b.Chain); got != "deny" {
			t.Errorf("build %d decided %s: a chain was built from rules that were not signed", i, got)
		}
		b.Chain.CloseWhenDrained(ctx)
		if filepath.Clean(b.Dir) == filepath.Clean(dir) {
			t.Errorf("build %d built from the folder itself, not a private copy", i)
		} else if _, err := os.Stat(b.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("build %d: staged copy %s left after its chain closed (%v)", i, b.Dir, err)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d builds: %d built, %d refused; %d swaps", builds, ok, refused, swaps.Load())
	if ok == 0 {
		t.Error("no build succeeded: the hammer proved nothing")
	}
}

// TestLocalRefusesAnOlderBundle: the hook (NewLocal, one call) remembers the last sequence
// accepted under a bundle's name in the data dir: once a newer signed bundle was accepted, an
// older signed one is refused with the error serve's Manager gives (older_sequence), in a new
// process too, while the newer one still loads.
func TestLocalRefusesAnOlderBundle(t *testing.T) {
	ctx := context.Background()
	pub, priv, _ := bundle.GenerateKey()
	v1 := writeRulesBundle(t, filepath.Join(t.TempDir(), "v1"), priv, 1)
	v2 := writeRulesBundle(t, filepath.Join(t.TempDir(), "v2"), priv, 2)
	data := t.TempDir()
	local := func(dir string) (*gateway.Local, error) {
		return gateway.NewLocal(ctx, gateway.LocalOptions{
			Config:   config.Config{Bundle: dir, DataDir: data, Plugins: config.Plugins{CacheDir: testenv.CacheDir()}},
			Sections: gateway.Sections{Bundles: &gateway.BundlesConfig{TrustedKeys: []string{bundle.EncodePublicKey(pub)}}},
			Name:     "hook", OneCall: true, NoAudit: true,
		})
	}
	for _, dir := range []string{v1, v2} {
		l, err := local(dir)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(dir), err)
		}
		l.Close(ctx)
	}
	_, err := local(v1)
	if !errors.Is(err, bundle.ErrOlder) || bundle.RejectReason(err) != "older_sequence" || !strings.Contains(err.Error(), "sequence 1 is below checked v2 sequence 2") {
		t.Fatalf("v1 after v2: %v, want ErrOlder (older_sequence)", err)
	}
	l, err := local(v2)
	if err != nil {
		t.Fatalf("v2 again: %v", err)
	}
	l.Close(ctx)
	seen, err := (&bundle.Sequences{Path: filepath.Join(data, "bundles", "sequences.json")}).Seen()
	if err != nil || seen["checked"].Sequence != 2 {
		t.Fatalf("state file: %+v %v", seen, err)
	}
}
