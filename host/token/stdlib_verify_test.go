package token_test

// This file holds, verbatim, the stdlib-only verifier printed in sdk/TOKENS.md, and checks it
// against tokens this package issues, so the document cannot drift from the format.

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/added060/palisade/host/token"
)

// --- begin TOKENS.md snippet ---

type palisadeClaims struct {
	V          int    `json:"v"`
	Kid        string `json:"kid"`
	Aud        string `json:"aud"`
	Tool       string `json:"tool"`
	ArgsSHA256 string `json:"args_sha256"`
	AuditID    string `json:"audit_id"`
	Iat        int64  `json:"iat"`
	Exp        int64  `json:"exp"`
	Jti        string `json:"jti"`
}

// verifyPalisadeToken checks a token from params._meta["palisade/token"] for a call to tool
// on this server with these arguments (argsCanonical: see "Arguments digest").
func verifyPalisadeToken(pub ed25519.PublicKey, tok, server, tool string, argsCanonical []byte, now time.Time) (palisadeClaims, error) {
	var c palisadeClaims
	payload, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return c, errors.New("malformed token")
	}
	rawSig, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !ed25519.Verify(pub, []byte(payload), rawSig) {
		return c, errors.New("bad signature")
	}
	rawPayload, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(rawPayload, &c) != nil || c.V != 1 {
		return c, errors.New("malformed payload")
	}
	if now.Unix() >= c.Exp || now.Unix() < c.Iat {
		return c, errors.New("token expired or not yet valid")
	}
	sum := sha256.Sum256(argsCanonical)
	if c.Aud != server || c.Tool != tool || c.ArgsSHA256 != hex.EncodeToString(sum[:]) {
		return c, errors.New("token is for another call")
	}
	return c, nil // then refuse c.Jti if seen before (keep seen ids until c.Exp)
}

// --- end TOKENS.md snippet ---

func TestStdlibVerifierFromDocs(t *testing.T) {
	s := newSigner(t)
	args := json.RawMessage(`{"path":"/srv/report.pdf","force":true}`)
	d, _ := token.ArgsDigest(args)
	tok, _, err := s.Issue(token.Claims{Aud: "files", Tool: "delete", ArgsSHA256: d, AuditID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	canon := []byte(`{"force":true,"path":"/srv/report.pdf"}`)
	c, err := verifyPalisadeToken(s.PublicKey(), tok, "files", "delete", canon, time.Now())
	if err != nil {
		t.Fatalf("doc verifier rejected a good token: %v", err)
	}
	if c.AuditID != "a1" {
		t.Fatalf("claims %+v", c)
	}
	if _, err := verifyPalisadeToken(s.PublicKey(), tok, "files", "delete", []byte(`{"path":"/etc"}`), time.Now()); err == nil {
		t.Fatal("doc verifier accepted other arguments")
	}
	if _, err := verifyPalisadeToken(newSigner(t).PublicKey(), tok, "files", "delete", canon, time.Now()); err == nil {
		t.Fatal("doc verifier accepted another key")
	}
}
