package bundle

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SignatureFile is the signature's name inside a bundle; it is excluded from the digest.
const SignatureFile = "signature.json"

// AlgEd25519 is the only signature algorithm.
const AlgEd25519 = "ed25519"

// signingContext separates bundle signatures from any other use of the same key.
const signingContext = "palisade-bundle-v1\x00"

// Signature and trust errors. Verify wraps one of them with the detail.
var (
	ErrUnsigned        = errors.New("bundle: unsigned")
	ErrBadSignature    = errors.New("bundle: bad signature")
	ErrUntrustedKey    = errors.New("bundle: signed by an untrusted key")
	ErrDigestMismatch  = errors.New("bundle: contents do not match the signed digest")
	ErrBadKey          = errors.New("bundle: bad key")
	ErrNoTrustedKeys   = errors.New("bundle: no trusted keys configured")
	errUnknownAlgoritm = errors.New("bundle: unknown signature algorithm")
)

// Signature is signature.json: an ed25519 signature over the bundle's canonical digest.
type Signature struct {
	Algorithm string    `json:"algorithm"` // ed25519
	KeyID     string    `json:"key_id"`    // KeyID of the public key
	Digest    string    `json:"digest"`    // "sha256:<hex>", the canonical digest (see Digest)
	Signature string    `json:"signature"` // base64 (std) of ed25519.Sign(key, "palisade-bundle-v1\x00" + Digest)
	Name      string    `json:"name,omitempty"`
	Version   string    `json:"version,omitempty"`
	SignedAt  time.Time `json:"signed_at,omitzero"`
}

// KeyID is the short, stable name of a public key: the first 16 hex digits of its sha256.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// GenerateKey returns a new ed25519 key pair.
func GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("bundle: generate key: %w", err)
	}
	return pub, priv, nil
}

// Key files are one line of base64: the 32-byte public key, or the 32-byte seed of the private
// key. A line may carry a "palisade-ed25519-pub " or "palisade-ed25519-priv " prefix, which is
// what WriteKeyPair writes so the two are told apart.
const (
	pubPrefix  = "palisade-ed25519-pub "
	privPrefix = "palisade-ed25519-priv "
)

// EncodePublicKey returns the text form of pub (what a public key file and config hold).
func EncodePublicKey(pub ed25519.PublicKey) string {
	return pubPrefix + base64.StdEncoding.EncodeToString(pub)
}

// EncodePrivateKey returns the text form of priv (its seed).
func EncodePrivateKey(priv ed25519.PrivateKey) string {
	return privPrefix + base64.StdEncoding.EncodeToString(priv.Seed())
}

// ParsePublicKey reads the text form of a public key: base64 of 32 bytes, with or without the
// "palisade-ed25519-pub " prefix.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, privPrefix) {
		return nil, fmt.Errorf("%w: this is a private key; trust its public half", ErrBadKey)
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, pubPrefix))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: public key must be base64 of %d bytes", ErrBadKey, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// ParsePrivateKey reads the text form of a private key: base64 of its 32-byte seed (or of the
// 64-byte key), with or without the "palisade-ed25519-priv " prefix.
func ParsePrivateKey(s string) (ed25519.PrivateKey, error) {
	s = strings.TrimSpace(s)
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, privPrefix))
	if err != nil {
		return nil, fmt.Errorf("%w: private key is not base64", ErrBadKey)
	}
	switch len(b) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(b), nil
	case ed25519.PrivateKeySize:
		return ed25519.PrivateKey(b), nil
	}
	return nil, fmt.Errorf("%w: private key must be %d or %d bytes", ErrBadKey, ed25519.SeedSize, ed25519.PrivateKeySize)
}

// WriteKeyPair writes priv to privPath (mode 0600) and its public key to privPath's name with
// ".pub" appended (mode 0644), refusing to overwrite either.
func WriteKeyPair(privPath string, priv ed25519.PrivateKey) (pubPath string, err error) {
	pubPath = privPath + ".pub"
	for _, p := range []string{privPath, pubPath} {
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("bundle: %s exists; not overwriting a key", p)
		}
	}
	if d := filepath.Dir(privPath); d != "" {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("bundle: key dir: %w", err)
		}
	}
	if err := os.WriteFile(privPath, []byte(EncodePrivateKey(priv)+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("bundle: write key: %w", err)
	}
	pub := priv.Public().(ed25519.PublicKey)
	if err := os.WriteFile(pubPath, []byte(EncodePublicKey(pub)+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("bundle: write public key: %w", err)
	}
	return pubPath, nil
}

// ReadPrivateKey reads a private key file.
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bundle: read key: %w", err)
	}
	k, err := ParsePrivateKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// KeySet is the set of trusted public keys, by KeyID.
type KeySet map[string]ed25519.PublicKey

// Add trusts pub.
func (k KeySet) Add(pub ed25519.PublicKey) { k[KeyID(pub)] = pub }

// LoadKeys builds a KeySet from config entries: each is a path to a public key file, or the
// public key's text itself (base64, optionally prefixed "palisade-ed25519-pub ").
func LoadKeys(entries []string) (KeySet, error) {
	ks := KeySet{}
	for i, e := range entries {
		e = strings.TrimSpace(e)
		pub, err := ParsePublicKey(e)
		if err != nil {
			b, rerr := os.ReadFile(e)
			if rerr != nil {
				return nil, fmt.Errorf("trusted_keys[%d]: neither a public key nor a readable file: %w", i, err)
			}
			if pub, err = ParsePublicKey(string(b)); err != nil {
				return nil, fmt.Errorf("trusted_keys[%d] (%s): %w", i, e, err)
			}
		}
		ks.Add(pub)
	}
	return ks, nil
}

// Sign computes dir's canonical digest, signs it with priv and writes dir/signature.json.
func Sign(dir string, priv ed25519.PrivateKey) (*Signature, error) {
	m, err := LoadManifest(dir)
	if err != nil {
		return nil, err
	}
	d, err := Digest(dir)
	if err != nil {
		return nil, err
	}
	pub := priv.Public().(ed25519.PublicKey)
	sig := &Signature{
		Algorithm: AlgEd25519,
		KeyID:     KeyID(pub),
		Digest:    "sha256:" + d,
		Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte(signingContext+"sha256:"+d))),
		Name:      m.Name,
		Version:   m.Version,
		SignedAt:  time.Now().UTC().Truncate(time.Second),
	}
	b, err := json.MarshalIndent(sig, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, SignatureFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("bundle: write signature: %w", err)
	}
	return sig, nil
}

// ReadSignature reads dir/signature.json; a missing file is ErrUnsigned.
func ReadSignature(dir string) (*Signature, error) {
	b, err := os.ReadFile(filepath.Join(dir, SignatureFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrUnsigned
	}
	if err != nil {
		return nil, fmt.Errorf("bundle: read signature: %w", err)
	}
	var s Signature
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: signature.json: %v", ErrBadSignature, err)
	}
	return &s, nil
}

// Verify checks that dir's signature.json is a valid signature, by a key in keys, over the
// digest of exactly the files now in dir. It returns the signature and the digest (hex). A
// bundle without signature.json is ErrUnsigned; the caller decides whether that is allowed.
func Verify(dir string, keys KeySet) (*Signature, string, error) {
	d, err := Digest(dir)
	if err != nil {
		return nil, "", err
	}
	sig, err := ReadSignature(dir)
	if err != nil {
		return nil, d, err
	}
	if err := sig.check(d, keys); err != nil {
		return sig, d, err
	}
	return sig, d, nil
}

func (s *Signature) check(digest string, keys KeySet) error {
	if s.Algorithm != AlgEd25519 {
		return fmt.Errorf("%w: %w %q", ErrBadSignature, errUnknownAlgoritm, s.Algorithm)
	}
	if len(keys) == 0 {
		return fmt.Errorf("%w: %w", ErrUntrustedKey, ErrNoTrustedKeys)
	}
	pub, ok := keys[s.KeyID]
	if !ok {
		return fmt.Errorf("%w: key id %q", ErrUntrustedKey, s.KeyID)
	}
	raw, err := base64.StdEncoding.DecodeString(s.Signature)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signature is not base64 of %d bytes", ErrBadSignature, ed25519.SignatureSize)
	}
	if !ed25519.Verify(pub, []byte(signingContext+s.Digest), raw) {
		return fmt.Errorf("%w: does not verify with key %s", ErrBadSignature, s.KeyID)
	}
	if s.Digest != "sha256:"+digest {
		return fmt.Errorf("%w: signed %s, files hash to sha256:%s (a file was changed, added or removed after signing)", ErrDigestMismatch, s.Digest, digest)
	}
	return nil
}
