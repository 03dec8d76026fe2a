package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/token"
	"github.com/labstack/echo/v4"
)

// TokensConfig is the `tokens:` section: execution tokens attached to calls that require one.
type TokensConfig struct {
	KeyFile string          `yaml:"key_file"` // ed25519 private key (PEM); "" = DATA_DIR/token.key, generated on first start
	TTL     config.Duration `yaml:"ttl"`      // token lifetime; 0 = 60s
}

// KeyPath is where tool servers fetch the public key (JWK).
const KeyPath = "/.well-known/palisade-token-key"

// tokens issues a short-lived signed token for every allowed call whose decision requires one
// (risk: HIGH criticality with low risk) and attaches it at params._meta["palisade/token"].
type tokens struct {
	signer *token.Signer
}

func (t *tokens) Name() string { return "tokens" }

func (t *tokens) Init(ctx context.Context, g *Gateway) error {
	c := g.Sections().Tokens
	if c.KeyFile == "" {
		c.KeyFile = filepath.Join(g.DataDir(), "token.key")
	}
	priv, err := token.LoadOrCreateKey(c.KeyFile)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	if t.signer, err = token.NewSigner(priv, time.Duration(c.TTL)); err != nil {
		return err
	}
	g.AddHook(&tokenHook{signer: t.signer, issuer: g.Instance()})
	return nil
}

func (t *tokens) Start(ctx context.Context, g *Gateway) error {
	g.Echo().GET(KeyPath, echo.WrapHandler(token.KeyHandler(t.signer.PublicKey())))
	return nil
}

func (t *tokens) Close(context.Context) error { return nil }

type tokenHook struct {
	signer *token.Signer
	issuer string
}

// AfterRequest implements engine.Hook.
func (h *tokenHook) AfterRequest(_ context.Context, o *engine.Outcome) error {
	if !o.Allowed() || !o.Decision.RequireToken {
		return nil
	}
	args := o.Envelope.Arguments
	if len(o.Decision.Arguments) > 0 {
		args = o.Decision.Arguments
	}
	digest, err := token.ArgsDigest(args)
	if err != nil {
		return err
	}
	tok, hash, err := h.signer.Issue(token.Claims{Iss: h.issuer, Aud: o.Envelope.Server, Tool: o.Envelope.Tool, ArgsSHA256: digest, AuditID: o.AuditID})
	if err != nil {
		return err
	}
	if o.Meta == nil {
		o.Meta = map[string]any{}
	}
	o.Meta[token.MetaKey] = tok
	o.TokenSHA256 = hash
	return nil
}
