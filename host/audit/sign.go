package audit

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// Signature headers. Each published event carries the nkey public key of the identity that
// signed it and an ed25519 signature over the message data (the event JSON, exactly as
// stored).
const (
	HeaderSigner    = "Palisade-Signer"
	HeaderSignature = "Palisade-Signature" // standard base64
)

// DefaultSignersBucket is the KV bucket where publishers register their public keys, keyed by
// the key itself. Only gateway and admin identities may write it; readers trust what it holds.
const DefaultSignersBucket = "PALISADE_AUDIT_SIGNERS"

// Signer signs events: a gateway's NATS identity (*bus.Identity) satisfies it.
type Signer interface {
	PublicKey() string
	Sign(data []byte) ([]byte, error)
}

// Why an event failed verification (Verification.Problem).
const (
	ProblemUnsigned     = "unsigned"
	ProblemUntrusted    = "untrusted-signer"
	ProblemBadSignature = "bad-signature"
)

// ErrForged wraps a verification failure.
var ErrForged = errors.New("audit: forged event")

// VerifySignature checks that sig64 (standard base64) is pub's ed25519 signature of data.
func VerifySignature(pub string, data []byte, sig64 string) bool {
	sig, err := base64.StdEncoding.DecodeString(sig64)
	if err != nil {
		return false
	}
	kp, err := nkeys.FromPublicKey(pub)
	if err != nil {
		return false
	}
	return kp.Verify(data, sig) == nil
}

// Signers is the set of public keys a reader trusts: those given, plus those registered in
// the signers bucket (looked up when first seen, so gateways started later are trusted too).
// It is safe for concurrent use.
type Signers struct {
	kv jetstream.KeyValue // nil = only the given keys

	mu   sync.Mutex
	keys map[string]bool                // true = trusted, false = looked up and absent
	good map[[sha256.Size]byte]struct{} // signatures that verified (see verified)
}

// NewSigners trusts keys, plus the keys in bucket ("" = PALISADE_AUDIT_SIGNERS) when nc is not
// nil and the bucket exists.
func NewSigners(ctx context.Context, nc *nats.Conn, bucket string, keys ...string) *Signers {
	s := &Signers{keys: map[string]bool{}, good: map[[sha256.Size]byte]struct{}{}}
	for _, k := range keys {
		s.keys[k] = true
	}
	if nc != nil {
		if bucket == "" {
			bucket = DefaultSignersBucket
		}
		if js, err := jetstream.New(nc); err == nil {
			if kv, err := js.KeyValue(ctx, bucket); err == nil {
				s.kv = kv
			}
		}
	}
	return s
}

// Trusted reports whether pub is a trusted signer.
func (s *Signers) Trusted(ctx context.Context, pub string) bool {
	if !nkeys.IsValidPublicUserKey(pub) {
		return false
	}
	s.mu.Lock()
	t, seen := s.keys[pub]
	s.mu.Unlock()
	if t || s.kv == nil {
		return t
	}
	_ = seen // a key looked up before is looked up again: it may have registered since
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := s.kv.Get(cctx, pub)
	s.mu.Lock()
	s.keys[pub] = err == nil
	s.mu.Unlock()
	return err == nil
}

// Verify checks a stored message's signature headers against the trusted signers. It returns
// "" for a good event, else a Problem* constant. An event with HeaderBatch is checked by its
// inclusion proof up to its batch's tree hash, and the signature over that; one without it by
// the signature over its data (events published before batch signing). A batch signature that
// verified is remembered, so the other events of its batch cost a few hashes each.
func (s *Signers) Verify(ctx context.Context, h nats.Header, data []byte) string {
	pub, sig := h.Get(HeaderSigner), h.Get(HeaderSignature)
	if pub == "" || sig == "" {
		return ProblemUnsigned
	}
	signed := data
	if b := h.Get(HeaderBatch); b != "" {
		msg, err := batchRoot(b, data)
		if err != nil {
			return ProblemBadSignature
		}
		signed = msg
	} else if len(h.Values(HeaderBatch)) > 0 {
		return ProblemBadSignature // an empty batch header is not "signed alone"
	}
	switch {
	case !s.verified(pub, signed, sig):
		return ProblemBadSignature
	case !s.Trusted(ctx, pub):
		return ProblemUntrusted
	}
	return ""
}

// maxGoodSigs bounds Signers' memory of verified signatures; it is cleared when full.
const maxGoodSigs = 4096

// verified is VerifySignature(pub, msg, sig), remembering the signatures that verified.
func (s *Signers) verified(pub string, msg []byte, sig string) bool {
	k := sha256.New()
	k.Write([]byte(pub))
	k.Write([]byte{0})
	k.Write([]byte(sig))
	k.Write([]byte{0})
	k.Write(msg)
	var key [sha256.Size]byte
	k.Sum(key[:0])
	s.mu.Lock()
	_, ok := s.good[key]
	s.mu.Unlock()
	if ok {
		return true
	}
	if !VerifySignature(pub, msg, sig) {
		return false
	}
	s.mu.Lock()
	if len(s.good) >= maxGoodSigs {
		clear(s.good)
	}
	s.good[key] = struct{}{}
	s.mu.Unlock()
	return true
}

// signerRecord is the value a publisher registers under its key in the signers bucket.
type signerRecord struct {
	Gateway string    `json:"gateway,omitempty"`
	Time    time.Time `json:"time"`
}

// SignersBucketConfig is the signers bucket's configuration ("" = PALISADE_AUDIT_SIGNERS) with
// replicas copies (0 = 1).
func SignersBucketConfig(bucket string, replicas int) jetstream.KeyValueConfig {
	if bucket == "" {
		bucket = DefaultSignersBucket
	}
	return jetstream.KeyValueConfig{Bucket: bucket, Description: "Palisade audit signer public keys", History: 1, Replicas: max(replicas, 1)}
}

// RegisterSigner puts s's public key into the signers bucket ("" = PALISADE_AUDIT_SIGNERS),
// creating the bucket when missing, unless it is there already. On an authenticated bus only
// the admin identity may (the gateway's bootstrap registers the gateway key); a publisher
// whose key is already registered needs no write.
func RegisterSigner(ctx context.Context, js jetstream.JetStream, bucket string, s Signer, gateway string) error {
	if bucket == "" {
		bucket = DefaultSignersBucket
	}
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, SignersBucketConfig(bucket, 0))
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return fmt.Errorf("audit: signers bucket %s: %w", bucket, err)
	}
	if e, err := kv.Get(ctx, s.PublicKey()); err == nil && e != nil {
		return nil
	}
	b, _ := json.Marshal(signerRecord{Gateway: gateway, Time: time.Now().UTC()})
	if _, err := kv.Put(ctx, s.PublicKey(), b); err != nil {
		return fmt.Errorf("audit: register signer: %w", err)
	}
	return nil
}

// SignedEvent is a stored event with its signature: one NDJSON line of `palisade audit tail
// --json --signed`, which files can carry to a reader that checks them (`palisade tune
// --events`). Event holds the stored bytes exactly: the signature covers them, so a line whose
// event was edited, even by a byte, fails.
type SignedEvent struct {
	Signer    string          `json:"signer"`
	Signature string          `json:"signature"`       // standard base64
	Batch     string          `json:"batch,omitempty"` // HeaderBatch: the event's place in its signed batch
	Event     json.RawMessage `json:"event"`
}

// VerifyEvent checks se as Verify checks a stored message: "" for a good event, else a
// Problem* constant.
func (s *Signers) VerifyEvent(ctx context.Context, se SignedEvent) string {
	h := nats.Header{}
	if se.Signer != "" {
		h.Set(HeaderSigner, se.Signer)
	}
	if se.Signature != "" {
		h.Set(HeaderSignature, se.Signature)
	}
	if se.Batch != "" {
		h.Set(HeaderBatch, se.Batch)
	}
	return s.Verify(ctx, h, se.Event)
}
