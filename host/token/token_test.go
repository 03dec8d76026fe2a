package token_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/token"
)

func newSigner(t *testing.T) *token.Signer {
	t.Helper()
	priv, err := token.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s, err := token.NewSigner(priv, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestIssueVerifyCheck(t *testing.T) {
	s := newSigner(t)
	args := json.RawMessage(`{"to":"acct-9","amount":120.50}`)
	digest, err := token.ArgsDigest(args)
	if err != nil {
		t.Fatal(err)
	}
	tok, hash, err := s.Issue(token.Claims{Iss: "gw-1", Aud: "bank", Tool: "transfer", ArgsSHA256: digest, AuditID: "01AUDIT"})
	if err != nil {
		t.Fatal(err)
	}
	if hash != token.Hash(tok) || len(hash) != 64 {
		t.Fatalf("hash = %q, want sha256 hex of the token", hash)
	}
	c, err := token.Verify(s.PublicKey(), tok, time.Now())
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if c.Tool != "transfer" || c.Aud != "bank" || c.AuditID != "01AUDIT" || c.Kid != s.KeyID() || c.Jti == "" {
		t.Fatalf("claims = %+v", c)
	}
	if c.Exp-c.Iat != 60 {
		t.Fatalf("exp-iat = %d, want 60", c.Exp-c.Iat)
	}
	// Same arguments, other key order and whitespace: still matches.
	if err := c.Check("bank", "transfer", json.RawMessage("{ \"amount\": 120.50,\n \"to\": \"acct-9\" }")); err != nil {
		t.Fatalf("Check reordered args: %v", err)
	}
	for name, tc := range map[string]struct {
		server, tool, args string
	}{
		"other server": {"shop", "transfer", `{"to":"acct-9","amount":120.50}`},
		"other tool":   {"bank", "transfer_all", `{"to":"acct-9","amount":120.50}`},
		"other args":   {"bank", "transfer", `{"to":"acct-6","amount":120.50}`},
		"number form":  {"bank", "transfer", `{"to":"acct-9","amount":120.5}`},
		"bad args":     {"bank", "transfer", `{"to":`},
	} {
		t.Run(name, func(t *testing.T) {
			if err := c.Check(tc.server, tc.tool, json.RawMessage(tc.args)); !errors.Is(err, token.ErrMismatch) {
				t.Fatalf("Check = %v, want ErrMismatch", err)
			}
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	s := newSigner(t)
	other := newSigner(t)
	now := time.Now()
	tok, _, err := s.Issue(token.Claims{Aud: "a", Tool: "t", ArgsSHA256: "x"})
	if err != nil {
		t.Fatal(err)
	}
	p, sig, _ := strings.Cut(tok, ".")
	// A payload re-signed by nobody: swap the tool but keep the signature.
	forged := strings.Replace(p, p[:4], "eyJ2", 1) + "X." + sig
	for _, tc := range []struct {
		name string
		pub  ed25519.PublicKey
		tok  string
		at   time.Time
		want error
	}{
		{"wrong key", other.PublicKey(), tok, now, token.ErrSignature},
		{"expired", s.PublicKey(), tok, now.Add(61 * time.Second), token.ErrExpired},
		{"exactly at exp", s.PublicKey(), tok, now.Add(60 * time.Second).Truncate(time.Second).Add(time.Second), token.ErrExpired},
		{"from the future", s.PublicKey(), tok, now.Add(-time.Hour), token.ErrNotYetValid},
		{"no dot", s.PublicKey(), p, now, token.ErrMalformed},
		{"three parts", s.PublicKey(), tok + ".x", now, token.ErrMalformed},
		{"empty", s.PublicKey(), "", now, token.ErrMalformed},
		{"bad sig encoding", s.PublicKey(), p + ".!!", now, token.ErrMalformed},
		{"tampered payload", s.PublicKey(), forged, now, token.ErrSignature},
		{"short key", ed25519.PublicKey{1, 2}, tok, now, token.ErrMalformed},
		{"huge", s.PublicKey(), strings.Repeat("a", 9000) + "." + sig, now, token.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := token.Verify(tc.pub, tc.tok, tc.at); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{` {"b":1, "a":[true,null,"<x>"]} `, `{"a":[true,null,"<x>"],"b":1}`},
		{`{"n":1.0e3,"z":{"y":2,"x":1}}`, `{"n":1.0e3,"z":{"x":1,"y":2}}`},
		{`"s"`, `"s"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := token.Canonical(json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("Canonical(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	for _, bad := range []string{`{"a":1} {}`, `{"a":1}]`, `{"a":1}}`, `{"a":`} {
		if _, err := token.Canonical(json.RawMessage(bad)); err == nil {
			t.Fatalf("Canonical(%s) accepted", bad)
		}
	}
}

func TestKeyHandlerServesJWK(t *testing.T) {
	s := newSigner(t)
	mux := http.NewServeMux()
	mux.Handle(token.WellKnownPath, token.KeyHandler(s.PublicKey()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + token.WellKnownPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jwk+json" {
		t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	pub, err := token.ParseJWK(body)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, _ := s.Issue(token.Claims{Tool: "t"})
	if _, err := token.Verify(pub, tok, time.Now()); err != nil {
		t.Fatalf("verify with served key: %v", err)
	}
	resp, err = http.Post(srv.URL+token.WellKnownPath, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST status %d", resp.StatusCode)
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token.key")
	k1, err := token.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
	k2, err := token.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !k1.Equal(k2) {
		t.Fatal("reloaded key differs")
	}
	if err := os.WriteFile(path, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := token.LoadOrCreateKey(path); err == nil {
		t.Fatal("junk key accepted")
	}
}

func FuzzVerify(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	s, _ := token.NewSigner(priv, time.Minute)
	tok, _, _ := s.Issue(token.Claims{Tool: "t", Iat: 1, Exp: 2, Jti: "j1"}) // deterministic: fuzz workers rebuild it
	f.Add(tok)
	f.Add("")
	f.Add(".")
	f.Add("e30.AAAA")
	f.Add(tok[:len(tok)/2])
	f.Fuzz(func(t *testing.T, in string) {
		c, err := token.Verify(s.PublicKey(), in, time.Unix(1, 0))
		if err == nil && in != tok {
			t.Fatalf("accepted a token the signer did not issue: %q -> %+v", in, c)
		}
	})
}

func BenchmarkIssue(b *testing.B) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	s, _ := token.NewSigner(priv, time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Issue(token.Claims{Aud: "bank", Tool: "transfer", ArgsSHA256: "ab", AuditID: "x"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	s, _ := token.NewSigner(priv, time.Minute)
	tok, _, _ := s.Issue(token.Claims{Aud: "bank", Tool: "transfer", ArgsSHA256: "ab", AuditID: "x"})
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := token.Verify(s.PublicKey(), tok, now); err != nil {
			b.Fatal(err)
		}
	}
}
