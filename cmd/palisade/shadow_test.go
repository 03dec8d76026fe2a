package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/admin"
	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/engine"
)

// fakeShadowAPI answers the shadow admin routes as host/admin does, recording each call as
// "METHOD PATH" and whether its body was a bundle archive (a real gateway runs them in
// host/gateway's TestShadowPromote).
func fakeShadowAPI(t *testing.T, calls *[]string) string {
	t.Helper()
	beta := bundle.Entry{Name: "beta", Version: "2", Digest: "abcd"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		call := r.Method + " " + strings.TrimPrefix(r.URL.RequestURI(), admin.DefaultPrefix)
		if body, _ := io.ReadAll(r.Body); len(body) > 0 {
			if err := bundle.Unpack(strings.NewReader(string(body)), filepath.Join(t.TempDir(), "u")); err != nil {
				call += " (not an archive: " + err.Error() + ")"
			} else {
				call += " archive"
			}
		}
		*calls = append(*calls, call)
		w.Header().Set("Content-Type", "application/json")
		var out any
		switch {
		case r.URL.Path == admin.DefaultPrefix+"/shadow/disagreements":
			out = admin.ShadowDisagreements{Stats: engine.ShadowStats{Loaded: true, Judged: 3, Disagreements: 1},
				Disagreements: []engine.Disagreement{{AuditID: "A1", Time: time.Unix(0, 0).UTC(), Tool: "echo", Active: audit.Bundle{Name: "alpha"},
					Shadow: audit.Bundle{Name: "beta"}, ActiveAction: "allow", ShadowAction: "deny", Rule: "beta-2", Stage: "s2"}}}
		case r.Method == http.MethodGet:
			out = admin.ShadowStatus{Shadow: &beta, Stats: engine.ShadowStats{Loaded: true, Judged: 3}}
		default:
			out = admin.BundleResult{Bundle: beta, Changed: true}
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestShadowCLI: bundle shadow DIR packs the folder and PUTs it, bundle shadow none DELETEs,
// bundle shadow shows it, bundle promote-shadow POSTs, and audit disagreements lists the
// admin API's disagreements.
func TestShadowCLI(t *testing.T) {
	var calls []string
	url := fakeShadowAPI(t, &calls)
	dir := filepath.Join(t.TempDir(), "b")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte("name: beta\nversion: \"2\"\n"), 0o644)
	flags := []string{"--url", url, "--token", "t"}
	for _, tc := range []struct {
		args       []string
		call, want string
	}{
		{[]string{"bundle", "shadow", dir}, "PUT /bundles/shadow archive", "shadow: beta 2"},
		{[]string{"bundle", "shadow"}, "GET /bundles/shadow", "judged 3"},
		{[]string{"bundle", "shadow", "none"}, "DELETE /bundles/shadow", "shadow cleared: beta 2"},
		{[]string{"bundle", "promote-shadow"}, "POST /bundles/shadow/promote", "active: beta 2"},
		{[]string{"audit", "disagreements", "--limit", "5"}, "GET /shadow/disagreements?limit=5", "alpha:allow  beta:deny  beta-2"},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			calls = nil
			code, out, errs := runKong(t, append(tc.args, flags...), nil)
			if code != exitOK || len(calls) != 1 || calls[0] != tc.call || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, calls %q, out %q, stderr %q; want call %q and output with %q", code, calls, out, errs, tc.call, tc.want)
			}
		})
	}
}
