package token

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Version is the token format version carried in every payload as "v".
const Version = 1

// MetaKey is the key under params._meta where the gateway puts the token.
const MetaKey = "palisade/token"

// WellKnownPath is where the gateway publishes its public key as a JWK.
const WellKnownPath = "/.well-known/palisade-token-key"

// Sentinel errors returned by Verify and Claims.Check; match them with errors.Is.
var (
	ErrMalformed   = errors.New("token: malformed")
	ErrSignature   = errors.New("token: bad signature")
	ErrExpired     = errors.New("token: expired")
	ErrNotYetValid = errors.New("token: not yet valid")
	ErrMismatch    = errors.New("token: claims do not match the call")
)

// maxTokenLen bounds the input Verify will decode.
const maxTokenLen = 8 << 10

// Claims is the signed payload. Times are Unix seconds.
type Claims struct {
	V          int    `json:"v"`
	Kid        string `json:"kid"`         // key id: KeyID of the signing public key
	Iss        string `json:"iss"`         // issuing gateway instance
	Aud        string `json:"aud"`         // upstream server name the call is forwarded to
	Tool       string `json:"tool"`        // tools/call params.name
	ArgsSHA256 string `json:"args_sha256"` // ArgsDigest of params.arguments
	AuditID    string `json:"audit_id"`    // the decision's audit event id
	Iat        int64  `json:"iat"`
	Exp        int64  `json:"exp"`
	Jti        string `json:"jti"` // unique id, for replay protection by the tool server
}

// Signer issues tokens with one private key. It is safe for concurrent use.
type Signer struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	kid  string
	ttl  time.Duration
	now  func() time.Time
}

// NewSigner returns a Signer for priv whose tokens live for ttl (0 = 60s).
func NewSigner(priv ed25519.PrivateKey, ttl time.Duration) (*Signer, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("token: new signer: private key is %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	if ttl <= 0 {
		ttl = 60 * time.Second
	}
	pub := priv.Public().(ed25519.PublicKey)
	return &Signer{priv: priv, pub: pub, kid: KeyID(pub), ttl: ttl, now: time.Now}, nil
}

// PublicKey returns the key tool servers verify with.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.pub }

// KeyID returns the signer's key id (also in every token's kid).
func (s *Signer) KeyID() string { return s.kid }

// Issue signs c and returns the token and its hash (Hash(tok), the only form audit stores).
// Issue fills V, Kid, Iat, Exp (Iat+ttl) and Jti when they are zero.
func (s *Signer) Issue(c Claims) (tok string, hash string, err error) {
	now := s.now()
	c.V = Version
	c.Kid = s.kid
	if c.Iat == 0 {
		c.Iat = now.Unix()
	}
	if c.Exp == 0 {
		c.Exp = time.Unix(c.Iat, 0).Add(s.ttl).Unix()
	}
	if c.Jti == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", "", fmt.Errorf("token: issue: jti: %w", err)
		}
		c.Jti = hex.EncodeToString(b[:])
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", "", fmt.Errorf("token: issue: %w", err)
	}
	p := base64.RawURLEncoding.EncodeToString(payload)
	sig := ed25519.Sign(s.priv, []byte(p))
	tok = p + "." + base64.RawURLEncoding.EncodeToString(sig)
	return tok, Hash(tok), nil
}

// Verify checks tok's signature with pub and its validity window at now (with no leeway), and
// returns its claims. It does not check which call the token is for: use Claims.Check.
func Verify(pub ed25519.PublicKey, tok string, now time.Time) (Claims, error) {
	var c Claims
	if len(pub) != ed25519.PublicKeySize {
		return c, fmt.Errorf("%w: public key is %d bytes", ErrMalformed, len(pub))
	}
	if len(tok) > maxTokenLen {
		return c, fmt.Errorf("%w: %d bytes", ErrMalformed, len(tok))
	}
	p, s, ok := strings.Cut(tok, ".")
	if !ok || p == "" || s == "" || strings.Contains(s, ".") {
		return c, fmt.Errorf("%w: want payload.signature", ErrMalformed)
	}
	sig, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return c, fmt.Errorf("%w: signature encoding", ErrMalformed)
	}
	if !ed25519.Verify(pub, []byte(p), sig) {
		return c, ErrSignature
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return c, fmt.Errorf("%w: payload encoding", ErrMalformed)
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, fmt.Errorf("%w: payload: %v", ErrMalformed, err)
	}
	if c.V != Version {
		return Claims{}, fmt.Errorf("%w: version %d", ErrMalformed, c.V)
	}
	if now.Unix() >= c.Exp {
		return c, fmt.Errorf("%w at %s", ErrExpired, time.Unix(c.Exp, 0).UTC().Format(time.RFC3339))
	}
	if now.Unix() < c.Iat {
		return c, ErrNotYetValid
	}
	return c, nil
}

// Check reports whether the claims are for this call: the server name, the tool and the
// arguments (hashed with ArgsDigest). It returns an error wrapping ErrMismatch naming the field.
func (c Claims) Check(server, tool string, arguments json.RawMessage) error {
	if c.Aud != server {
		return fmt.Errorf("%w: aud %q, call to %q", ErrMismatch, c.Aud, server)
	}
	if c.Tool != tool {
		return fmt.Errorf("%w: tool %q, call to %q", ErrMismatch, c.Tool, tool)
	}
	d, err := ArgsDigest(arguments)
	if err != nil {
		return fmt.Errorf("%w: arguments: %v", ErrMismatch, err)
	}
	if d != c.ArgsSHA256 {
		return fmt.Errorf("%w: arguments digest", ErrMismatch)
	}
	return nil
}

// Hash returns the hex sha256 of the token: what the audit event stores instead of the token.
func Hash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// KeyID returns a short stable id for pub: base64url of the first 8 bytes of sha256(pub).
func KeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return base64.RawURLEncoding.EncodeToString(h[:8])
}

// ArgsDigest returns the hex sha256 of the canonical form of a tools/call arguments value:
// object keys sorted, no insignificant whitespace, numbers as written, no HTML escaping.
// Absent, empty or null arguments hash as "{}".
func ArgsDigest(arguments json.RawMessage) (string, error) {
	canon, err := Canonical(arguments)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(canon)
	return hex.EncodeToString(h[:]), nil
}

// Canonical returns the canonical JSON ArgsDigest hashes (see ArgsDigest).
func Canonical(arguments json.RawMessage) ([]byte, error) {
	t := bytes.TrimSpace(arguments)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("token: canonical arguments: %w", err)
	}
	if len(bytes.TrimSpace(t[dec.InputOffset():])) != 0 {
		return nil, fmt.Errorf("token: canonical arguments: trailing data")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return nil, fmt.Errorf("token: canonical arguments: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// JWK is the public key as served at WellKnownPath (RFC 8037 OKP key).
type JWK struct {
	Kty string `json:"kty"` // "OKP"
	Crv string `json:"crv"` // "Ed25519"
	X   string `json:"x"`   // base64url public key
	Kid string `json:"kid"`
	Alg string `json:"alg"` // "EdDSA"
	Use string `json:"use"` // "sig"
}

// PublicJWK returns pub as a JWK.
func PublicJWK(pub ed25519.PublicKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub), Kid: KeyID(pub), Alg: "EdDSA", Use: "sig"}
}

// ParseJWK returns the public key in a JWK document as served by KeyHandler.
func ParseJWK(b []byte) (ed25519.PublicKey, error) {
	var k JWK
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("token: parse jwk: %w", err)
	}
	if k.Kty != "OKP" || k.Crv != "Ed25519" {
		return nil, fmt.Errorf("token: parse jwk: kty %q crv %q, want OKP Ed25519", k.Kty, k.Crv)
	}
	x, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("token: parse jwk: bad x")
	}
	return ed25519.PublicKey(x), nil
}

// KeyHandler serves pub as a JWK (GET or HEAD), for the gateway route WellKnownPath.
func KeyHandler(pub ed25519.PublicKey) http.Handler {
	body, _ := json.Marshal(PublicJWK(pub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/jwk+json")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(body)
	})
}

// GenerateKey returns a new ed25519 key pair from crypto/rand.
func GenerateKey() (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("token: generate key: %w", err)
	}
	return priv, nil
}

// LoadOrCreateKey reads a PKCS#8 PEM ed25519 private key from path, or, when the file does not
// exist, generates one and writes it there with mode 0600.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		priv, err := GenerateKey()
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return nil, fmt.Errorf("token: marshal key: %w", err)
		}
		out := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("token: create key %s: %w", path, err)
		}
		if _, err := f.Write(out); err != nil {
			f.Close()
			return nil, fmt.Errorf("token: write key %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("token: write key %s: %w", path, err)
		}
		return priv, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token: read key %s: %w", path, err)
	}
	return ParsePrivateKey(b)
}

// ParsePrivateKey parses a PKCS#8 PEM ed25519 private key.
func ParsePrivateKey(pemBytes []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(pemBytes)
	if blk == nil {
		return nil, fmt.Errorf("token: parse key: no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("token: parse key: %w", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("token: parse key: %T is not ed25519", k)
	}
	return priv, nil
}
