package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/added060/palisade/host/approval"
)

// fakeApprovalsAPI answers the admin API's approvals routes the way host/admin does for a
// gateway that holds no call: 404 with {"error": "<approval.ErrNotFound>: <id>"}. It records
// the by of each decision.
func fakeApprovalsAPI(t *testing.T, by *[]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			By string `json:"by"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		*by = append(*by, body.By)
		id := strings.Split(strings.TrimPrefix(r.URL.Path, "/admin/api/approvals/"), "/")[0]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf("%v: %s", approval.ErrNotFound, id)})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestApprovalsUnknownIDSaysItOnce: deciding an id no gateway holds prints one error line that
// names the id once, and exits 1.
func TestApprovalsUnknownIDSaysItOnce(t *testing.T) {
	var by []string
	url := fakeApprovalsAPI(t, &by)
	code, _, errs := runKong(t, []string{"approvals", "deny", "nope-123", "--url", url, "--token", "t", "--by", "ann"}, nil)
	if code != exitFail {
		t.Fatalf("exit %d, want 1; stderr %q", code, errs)
	}
	if lines := strings.Split(strings.TrimSpace(errs), "\n"); len(lines) != 1 || strings.Count(errs, approval.ErrNotFound.Error()) != 1 || strings.Count(errs, "nope-123") != 1 {
		t.Errorf("stderr = %q, want one line saying %q once with the id once", errs, approval.ErrNotFound)
	}
}

// TestApprovalsBy: --by is recorded as given; without it the OS user name (+@cli), never a
// made-up name; with no user name at all --by is required (exit 2).
func TestApprovalsBy(t *testing.T) {
	var by []string
	url := fakeApprovalsAPI(t, &by)
	args := []string{"approvals", "approve", "X", "--url", url, "--token", "t"}
	decide := func(env *cliEnv, extra ...string) (int, string) {
		var out, errb strings.Builder
		env.Stdin, env.Stdout, env.Stderr = strings.NewReader(""), &out, &errb
		return run(context.Background(), append(append([]string(nil), args...), extra...), env), errb.String()
	}
	noEnv := func(string) string { return "" }
	decide(&cliEnv{Getenv: noEnv}, "--by", "ann")
	decide(&cliEnv{Getenv: func(k string) string { return map[string]string{"USER": "bob"}[k] }})
	decide(&cliEnv{Getenv: noEnv, Username: func() string { return "carol" }})
	if strings.Join(by, ",") != "ann,bob@cli,carol@cli" {
		t.Errorf("by = %q, want ann, bob@cli, carol@cli", by)
	}
	code, errs := decide(&cliEnv{Getenv: noEnv, Username: func() string { return "" }})
	if code != exitUsage || !strings.Contains(errs, "--by is required") || len(by) != 3 {
		t.Errorf("no user name: exit %d, stderr %q, %d calls; want 2 asking for --by and no call", code, errs, len(by))
	}
}
