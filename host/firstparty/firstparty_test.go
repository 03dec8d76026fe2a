package firstparty

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// Natives gives the first-party module for the digest the build linked in, nothing without
// one, and refuses a malformed one instead of running anything natively.
func TestNatives(t *testing.T) {
	defer func(d string) { Digest = d }(Digest)
	Digest = ""
	if n, err := Natives(); err != nil || n != nil {
		t.Fatalf("no digest: %v, %v", n, err)
	}
	sum := sha256.Sum256([]byte("module"))
	Digest = hex.EncodeToString(sum[:])
	n, err := Natives()
	if err != nil || len(n) != 1 || n[0].Digest != sum || n[0].New == nil {
		t.Fatalf("digest %s: %v, %v", Digest, n, err)
	}
	Digest = "$(sha256sum build/plugins/firstparty.wasm)" // a Makefile that did not expand it
	if _, err := Natives(); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Fatalf("malformed digest: %v", err)
	}
}
