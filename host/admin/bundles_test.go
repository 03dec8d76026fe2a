package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
	"github.com/labstack/echo/v4"
)

// signedBundle writes a one-stage rules bundle whose rule answers action, signs it and packs it.
func signedBundle(t *testing.T, priv []byte, version, action string) []byte {
	t.Helper()
	dir := t.TempDir()
	wasm, _ := testenv.ReadPlugin(t, "./plugins/rules")
	if err := os.WriteFile(filepath.Join(dir, "rules.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	y := fmt.Sprintf("name: t\nversion: %q\ncoverage: {uncovered: pass}\nstages:\n  - name: rules\n    plugin: rules.wasm\n    config: {rules: [{id: r, action: %s}]}\n", version, action)
	if err := os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Pin(dir); err != nil {
		t.Fatal(err)
	}
	if priv != nil {
		k, _ := bundle.ParsePrivateKey(string(priv))
		if _, err := bundle.Sign(dir, k); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := bundle.Pack(dir, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBundlesAPI(t *testing.T) {
	ctx := context.Background()
	// The compilation cache host/bundle's and host/gateway's tests share: compile once per machine.
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: filepath.Join(os.TempDir(), "palisade-test-wazero-cache")})
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, _ := bundle.GenerateKey()
	var active chain.Active
	data := t.TempDir()
	m, err := bundle.NewManager(bundle.ManagerOptions{Active: &active, Build: bundle.BuildOptions{Runtime: rt}, DataDir: data, Keys: bundle.KeySet{bundle.KeyID(pub): pub}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c := active.Swap(nil); c != nil {
			c.CloseWhenDrained(ctx)
		}
		m.Close(ctx)
	})
	e := echo.New()
	s, err := admin.New(admin.Options{Echo: e, DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	admin.RegisterBundles(s, m)
	ts := httptest.NewServer(e)
	defer ts.Close()
	tok, _ := os.ReadFile(filepath.Join(data, admin.TokenFile))
	if strings.TrimSpace(string(tok)) != s.Token() || len(s.Token()) != 64 {
		t.Fatalf("token file %q, server token %q", tok, s.Token())
	}
	do := func(method, path, token string, body []byte) (int, string) {
		req, _ := http.NewRequest(method, ts.URL+"/admin/api"+path, bytes.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if method == http.MethodPost && strings.HasSuffix(path, "activate") {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	privText := []byte(bundle.EncodePrivateKey(priv))
	for _, tc := range []struct {
		name, method, path, token string
		body                      []byte
		status                    int
		contains                  string
	}{
		{"no token", "GET", "/bundles", "", nil, 401, "bearer"},
		{"wrong token", "GET", "/bundles", "nope", nil, 401, "bearer"},
		{"empty list", "GET", "/bundles", s.Token(), nil, 200, `"active":null`},
		{"no active", "GET", "/bundles/active", s.Token(), nil, 404, "no active"},
		{"upload v1", "POST", "/bundles", s.Token(), signedBundle(t, privText, "1", "allow"), 200, `"version":"1"`},
		{"upload v1 again", "POST", "/bundles", s.Token(), signedBundle(t, privText, "1", "allow"), 200, `"changed":false`},
		{"upload unsigned", "POST", "/bundles", s.Token(), signedBundle(t, nil, "x", "allow"), 422, `"reason":"unsigned"`},
		{"upload garbage", "POST", "/bundles", s.Token(), []byte("not an archive"), 422, `"reason":"bad_archive"`},
		{"upload v2", "POST", "/bundles", s.Token(), signedBundle(t, privText, "2", "deny"), 200, `"version":"2"`},
		{"list", "GET", "/bundles", s.Token(), nil, 200, `"history":[{"name":"t","version":"2"`},
		{"activate kept v1", "POST", "/bundles/activate", s.Token(), []byte(`{"version":"1"}`), 200, `"version":"1"`},
		{"activate unknown", "POST", "/bundles/activate", s.Token(), []byte(`{"version":"9"}`), 404, "no kept bundle"},
		{"rollback", "POST", "/bundles/rollback", s.Token(), nil, 200, `"version":"2"`},
		{"active", "GET", "/bundles/active", s.Token(), nil, 200, `"version":"2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := do(tc.method, tc.path, tc.token, tc.body)
			if st != tc.status || !strings.Contains(strings.ToLower(body), strings.ToLower(tc.contains)) {
				t.Fatalf("%s %s: %d %s, want %d containing %s", tc.method, tc.path, st, body, tc.status, tc.contains)
			}
		})
	}
	var l admin.BundleList
	_, body := do("GET", "/bundles", s.Token(), nil)
	if err := json.Unmarshal([]byte(body), &l); err != nil || l.Active == nil || l.Active.Version != "2" || active.Load().Info().Version != "2" {
		t.Fatalf("list %s: %v", body, err)
	}
}
