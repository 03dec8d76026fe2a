package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
	"golang.org/x/mod/sumdb/tlog"
)

// The proof each event carries folds up to its batch's tree hash for every batch size and
// every leaf, the fold agrees with tlog's own verifier, and nothing else folds up to it:
// another event's data, another index, another size, a proof cut short or made longer.
func TestBatchProofs(t *testing.T) {
	for n := 1; n <= 70; n++ {
		data := make([][]byte, n)
		for i := range data {
			data[i] = fmt.Appendf(nil, `{"id":"e%d","n":%d}`, i, n)
		}
		root, proofs, err := batchTree(data)
		if err != nil {
			t.Fatal(err)
		}
		want := batchMessage(int64(n), root)
		for i := range data {
			msg, err := batchRoot(proofs[i], data[i])
			if err != nil || !bytes.Equal(msg, want) {
				t.Fatalf("n=%d leaf %d: batchRoot = %x, %v; want the batch's message", n, i, msg, err)
			}
			// tlog's verifier agrees with the fold.
			p := parseProof(t, proofs[i])
			if err := tlog.CheckRecord(p, int64(n), root, int64(i), tlog.RecordHash(data[i])); err != nil {
				t.Fatalf("n=%d leaf %d: tlog.CheckRecord: %v", n, i, err)
			}
			// Another event's data under this proof.
			other := data[(i+1)%n]
			if n > 1 {
				if msg, err := batchRoot(proofs[i], other); err == nil && bytes.Equal(msg, want) {
					t.Fatalf("n=%d: leaf %d's proof verified leaf %d's data", n, i, (i+1)%n)
				}
			}
			f := strings.Split(proofs[i], " ")
			for _, bad := range []string{
				strings.Join([]string{f[0], fmt.Sprint((i + 1) % n), f[2], f[3]}, " "),
				strings.Join([]string{f[0], f[1], fmt.Sprint(n + 1), f[3]}, " "),
				strings.Join([]string{f[0], f[1], f[2], trimProof(f[3])}, " "),
				strings.Join([]string{f[0], f[1], f[2], growProof(f[3])}, " "),
			} {
				if bad == proofs[i] {
					continue
				}
				if msg, err := batchRoot(bad, data[i]); err == nil && bytes.Equal(msg, want) {
					t.Fatalf("n=%d leaf %d: changed header %q still folds to the signed tree", n, i, bad)
				}
			}
		}
	}
}

func parseProof(t *testing.T, v string) tlog.RecordProof {
	t.Helper()
	f := strings.Split(v, " ")
	if f[3] == "-" {
		return nil
	}
	raw := mustB64(t, f[3])
	p := make(tlog.RecordProof, len(raw)/32)
	for i := range p {
		copy(p[i][:], raw[i*32:])
	}
	return p
}

func trimProof(p string) string {
	if p == "-" {
		return p
	}
	raw, _ := b64dec(p)
	if len(raw) == 32 {
		return "-"
	}
	return b64enc(raw[:len(raw)-32])
}

func growProof(p string) string {
	var raw []byte
	if p != "-" {
		raw, _ = b64dec(p)
	}
	return b64enc(append(raw, bytes.Repeat([]byte{7}, 32)...))
}

// Headers that cannot be read are errors naming the header, never a pass.
func TestBatchHeaderErrors(t *testing.T) {
	data := []byte(`{"id":"x"}`)
	for _, v := range []string{
		"", "1", "2 0 1 -", "1 0 1", "1 -1 1 -", "1 1 1 -", "1 0 0 -", "1 0 99999999 -",
		"1 0 2 !!!", "1 0 2 AAAA", "1 0 1 " + b64enc(nil), "1 x 1 -", "1 0 1 - extra",
	} {
		if _, err := batchRoot(v, data); err == nil || !strings.Contains(err.Error(), HeaderBatch) {
			t.Errorf("batchRoot(%q) = %v, want an error naming %s", v, err, HeaderBatch)
		}
	}
}

// Verify remembers a batch signature that verified, and only that: a bad signature over the
// same batch is still refused after a good one was seen.
func TestVerifiedRemembers(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s := &Signers{keys: map[string]bool{}, good: map[[32]byte]struct{}{}}
	kp := newTestKey(t)
	msg := []byte("palisade-audit-batch-1\x00m")
	sig, _ := kp.Sign(msg)
	pk, _ := kp.PublicKey()
	if !s.verified(pk, msg, b64enc(sig)) || len(s.good) != 1 {
		t.Fatalf("a good signature did not verify or was not remembered (%d)", len(s.good))
	}
	bad := ed25519.Sign(priv, msg)
	if s.verified(pk, msg, b64enc(bad)) {
		t.Fatal("another key's signature verified after a good one was remembered")
	}
	if s.verified(pk, append(msg, 'x'), b64enc(sig)) {
		t.Fatal("the remembered signature verified another message")
	}
}

func b64enc(b []byte) string          { return base64.StdEncoding.EncodeToString(b) }
func b64dec(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := b64dec(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newTestKey(t *testing.T) nkeys.KeyPair {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}
