package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// Options configure a Verifier.
type Options struct {
	// Config is the authn section; New validates it.
	Config Config
	// HTTPClient fetches the issuer's metadata and keys and calls introspection; nil = a client
	// with a 10s timeout.
	HTTPClient *http.Client
	// JWKSRefresh bounds how often the key set is refetched: at most every JWKSRefresh on a
	// token whose key id is unknown (the issuer rotated its keys), and in the background at
	// least every 15 minutes; 0 = 30s.
	JWKSRefresh time.Duration
	// Logger receives lifecycle (Info) and per-request refusals (Debug); nil = discard.
	Logger *slog.Logger
}

// Verifier checks access tokens for one resource. It is safe for concurrent use; Close it
// to stop the key set's background refresh.
type Verifier struct {
	c        Config
	hc       *http.Client
	log      *slog.Logger
	jwksURL  string // "" when tokens are only introspected
	introURL string // "" without introspection
	cache    *jwk.Cache
	cancel   context.CancelFunc
	refresh  time.Duration

	mu          sync.Mutex
	lastRefresh time.Time
}

// New validates o.Config, discovers the issuer's metadata when it needs to (no jwks_url, or
// introspection without a url), and fetches the key set once, so a wrong issuer or an
// unreachable JWKS fails here, not on the first call.
//
// # Notes
//
// ctx bounds only this setup; the key set refreshes in the background until Close.
func New(ctx context.Context, o Options) (*Verifier, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	c := o.Config.withDefaults()
	v := &Verifier{c: c, hc: o.HTTPClient, log: o.Logger, refresh: o.JWKSRefresh, jwksURL: c.JWKSURL}
	if v.hc == nil {
		v.hc = &http.Client{Timeout: 10 * time.Second}
	}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	if v.refresh <= 0 {
		v.refresh = 30 * time.Second
	}
	if c.Introspection != nil {
		v.introURL = c.Introspection.URL
	}
	if v.jwksURL == "" || (c.Introspection != nil && v.introURL == "") {
		m, err := discover(ctx, v.hc, c.Issuer)
		if err != nil {
			return nil, fmt.Errorf("authn: %w", err)
		}
		if v.jwksURL == "" {
			v.jwksURL = m.JWKSURI
		}
		if c.Introspection != nil && v.introURL == "" {
			v.introURL = m.IntrospectionEndpoint
		}
		if v.jwksURL == "" && c.Introspection == nil {
			return nil, fmt.Errorf("authn: issuer %s publishes no jwks_uri: set authn.jwks_url or authn.introspection", c.Issuer)
		}
		if c.Introspection != nil && v.introURL == "" {
			return nil, fmt.Errorf("authn: issuer %s publishes no introspection_endpoint: set authn.introspection.url", c.Issuer)
		}
	}
	if v.jwksURL != "" {
		bg, cancel := context.WithCancel(context.Background())
		cache, err := jwk.NewCache(bg, httprc.NewClient())
		if err != nil {
			cancel()
			return nil, fmt.Errorf("authn: jwks cache: %w", err)
		}
		maxInterval := max(15*time.Minute, v.refresh)
		if err := cache.Register(ctx, v.jwksURL, jwk.WithHTTPClient(v.hc), jwk.WithMinInterval(v.refresh), jwk.WithMaxInterval(maxInterval)); err != nil {
			cancel()
			return nil, fmt.Errorf("authn: jwks %s: %w", v.jwksURL, err)
		}
		if _, err := cache.Lookup(ctx, v.jwksURL); err != nil {
			cache.Shutdown(ctx)
			cancel()
			return nil, fmt.Errorf("authn: jwks %s: %w", v.jwksURL, err)
		}
		v.cache, v.cancel = cache, cancel
	}
	v.log.Info("authn ready", "issuer", c.Issuer, "resource", c.Resource, "jwks_url", v.jwksURL, "introspection_url", v.introURL)
	return v, nil
}

// Close stops the key set's background refresh.
func (v *Verifier) Close() error {
	if v.cache == nil {
		return nil
	}
	err := v.cache.Shutdown(context.Background())
	v.cancel()
	return err
}

// Config returns the configuration in force, defaults applied.
func (v *Verifier) Config() Config { return v.c }

// Verify checks an access token and returns its principal. A JWT is verified locally
// (signature against the issuer's JWKS, alg allowed, iss, aud, exp, nbf); any other token is
// introspected when introspection is configured. Errors wrap ErrInvalidToken, or are a
// *ScopeError (ErrInsufficientScope) for a valid token lacking a required scope; any other
// error (the key set or introspection unreachable) says nothing about the token.
//
// # Notes
//
// With a *ScopeError the principal is returned too (who was refused, for the audit); check
// the error before using it.
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	var (
		p   *Principal
		err error
	)
	switch {
	case strings.Count(token, ".") == 2 && v.cache != nil:
		p, err = v.verifyJWT(ctx, token)
	case v.introURL != "":
		p, err = v.introspect(ctx, token)
	default:
		err = fmt.Errorf("%w: not a JWT, and no introspection is configured", ErrInvalidToken)
	}
	if err != nil {
		return nil, err
	}
	if missing := missingScopes(v.c.Scopes, p.Scopes); len(missing) > 0 {
		return p, &ScopeError{Principal: p, Missing: missing}
	}
	return p, nil
}

func (v *Verifier) verifyJWT(ctx context.Context, token string) (*Principal, error) {
	_, err := jwt.ParseString(token,
		jwt.WithKeyProvider(jws.KeyProviderFunc(v.fetchKey)),
		jwt.WithContext(ctx),
		jwt.WithValidate(true),
		jwt.WithIssuer(v.c.Issuer),
		jwt.WithRequiredClaim("exp"),
		jwt.WithAcceptableSkew(v.c.Leeway),
		jwt.WithValidator(jwt.ValidatorFunc(v.checkAudience)),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	// Verified: read the claims for the principal.
	msg, err := jws.ParseString(token)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	var claims map[string]any
	if err := json.Unmarshal(msg.Payload(), &claims); err != nil {
		return nil, fmt.Errorf("%w: claims: %w", ErrInvalidToken, err)
	}
	return v.principal(claims), nil
}

// fetchKey gives jwx the issuer's key for the token's kid, after checking the token's alg is
// allowed: the alg comes from the token, so it is checked against the configured list and
// against the key's own alg and type before any verification. An unknown kid refetches the key
// set, at most once per JWKSRefresh.
func (v *Verifier) fetchKey(ctx context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
	h := sig.ProtectedHeaders()
	alg, ok := h.Algorithm()
	if !ok || alg == jwa.NoSignature() || !slices.Contains(v.c.Algorithms, alg.String()) {
		return fmt.Errorf("alg %q is not allowed", alg.String())
	}
	kid, _ := h.KeyID()
	set, err := v.cache.Lookup(ctx, v.jwksURL)
	if err != nil {
		return err
	}
	key, found := lookupKey(set, kid)
	if !found && v.mayRefresh() {
		if set, err = v.cache.Refresh(ctx, v.jwksURL); err != nil {
			return err
		}
		key, found = lookupKey(set, kid)
	}
	if !found {
		return fmt.Errorf("no key %q in the issuer's key set", kid)
	}
	if ka, ok := key.Algorithm(); ok && ka.String() != alg.String() {
		return fmt.Errorf("key %q is for %s, the token says %s", kid, ka, alg)
	}
	if !keyFits(key.KeyType().String(), alg.String()) {
		return fmt.Errorf("key %q is %s, which cannot verify %s", kid, key.KeyType(), alg)
	}
	sink.Key(alg, key)
	return nil
}

func (v *Verifier) mayRefresh() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if time.Since(v.lastRefresh) < v.refresh {
		return false
	}
	v.lastRefresh = time.Now()
	return true
}

// lookupKey finds the key with id kid; a token without kid is taken only by a set of one key.
func lookupKey(set jwk.Set, kid string) (jwk.Key, bool) {
	if kid != "" {
		return set.LookupKeyID(kid)
	}
	if set.Len() == 1 {
		return set.Key(0)
	}
	return nil, false
}

func keyFits(kty, alg string) bool {
	switch {
	case strings.HasPrefix(alg, "RS"), strings.HasPrefix(alg, "PS"):
		return kty == "RSA"
	case strings.HasPrefix(alg, "ES"):
		return kty == "EC"
	case alg == "EdDSA":
		return kty == "OKP"
	}
	return false
}

func (v *Verifier) checkAudience(_ context.Context, t jwt.Token) error {
	aud, _ := t.Audience()
	for _, a := range aud {
		if slices.Contains(v.c.Audience, a) {
			return nil
		}
	}
	return fmt.Errorf("aud %q names none of %q", aud, v.c.Audience)
}

// principal builds the principal from verified claims (a JWT's, or an introspection answer's).
func (v *Verifier) principal(claims map[string]any) *Principal {
	p := &Principal{Issuer: str(claims["iss"]), Subject: str(claims["sub"])}
	if p.Issuer == "" {
		p.Issuer = v.c.Issuer
	}
	for _, k := range []string{"client_id", "azp", "cid", "appid"} { // RFC 9068, OIDC, Okta, Entra v1
		if s := str(claims[k]); s != "" {
			p.ClientID = s
			break
		}
	}
	if p.Subject == "" {
		p.Subject = p.ClientID
	}
	p.Scopes = scopes(claims)
	for _, name := range v.c.Claims {
		if val, ok := claims[name]; ok {
			if p.Claims == nil {
				p.Claims = make(map[string]any, len(v.c.Claims))
			}
			p.Claims[name] = val
		}
	}
	return p
}

// scopes reads `scope` (space-separated, RFC 9068 and RFC 7662) or `scp` (an array, or a
// space-separated string: Okta, Entra).
func scopes(claims map[string]any) []string {
	for _, k := range []string{"scope", "scp"} {
		switch s := claims[k].(type) {
		case string:
			if f := strings.Fields(s); len(f) > 0 {
				return f
			}
		case []any:
			out := make([]string, 0, len(s))
			for _, e := range s {
				if es, ok := e.(string); ok && es != "" {
					out = append(out, es)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	return nil
}

func missingScopes(required, granted []string) []string {
	var missing []string
	for _, r := range required {
		if !slices.Contains(granted, r) {
			missing = append(missing, r)
		}
	}
	return missing
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// drain reads and closes a response body so its connection is reused.
func drain(r io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(r, 64<<10))
	r.Close()
}
