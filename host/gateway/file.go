package gateway

import (
	"errors"
	"fmt"
	"strings"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/infer"
	"github.com/added060/palisade/host/llm"
	"github.com/added060/palisade/host/telemetry"
)

// Sections are palisade.yaml's feature sections, each typed by its feature. A nil pointer is an
// absent section where absence means something (bundles: the trust default; llm: no judge).
type Sections struct {
	Agents    AgentsConfig    `yaml:"agents"`
	Approvals ApprovalsConfig `yaml:"approvals"`
	AuditSink AuditSinkConfig `yaml:"audit_sink"`
	// Authn makes the gateway an OAuth resource server for /mcp, /mcp/<name> and /v1/hook
	// (host/authn); nil = no access tokens (loopback, or http.client_token off loopback).
	Authn   *authn.Config  `yaml:"authn"`
	Bundles *BundlesConfig `yaml:"bundles"`
	Infer   InferConfig    `yaml:"infer"`
	LLM     *llm.Config    `yaml:"llm"`
	Tokens  TokensConfig   `yaml:"tokens"`
	// Telemetry exports OpenTelemetry traces over OTLP (host/telemetry); the zero value is off.
	Telemetry telemetry.Config `yaml:"telemetry"`
}

// File is palisade.yaml as one typed struct: the core config (host/config) and every feature's
// section. ParseFile and LoadFile decode it once, strictly; Override (promoted from
// config.Config) applies environment and flags; Validate checks all of it up front.
type File struct {
	config.Config `yaml:",inline"`
	Sections      `yaml:",inline"`
}

// ParseFile decodes palisade.yaml strictly: an unknown key in any section, at any depth, is a
// *config.FieldError naming its path.
func ParseFile(b []byte) (*File, error) {
	var f File
	if err := config.Decode(b, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// LoadFile reads palisade.yaml (ParseFile) and makes its relative paths relative to the file;
// path "" returns an empty File.
func LoadFile(path string) (*File, error) {
	var f File
	if err := config.LoadInto(path, &f, &f.Config); err != nil {
		return nil, err
	}
	return &f, nil
}

// ErrNoTrustChoice is TrustChoice's error: the config loads a local bundle without saying
// whether it must be signed.
var ErrNoTrustChoice = errors.New("the config says nothing about bundle signatures")

// TrustChoice refuses a config that loads a local bundle (a folder or an archive) with no
// bundles: section. Without one, every mode's Core loads a local bundle unsigned with only a
// warning; `palisade serve` calls this so that the choice is written down instead:
// bundles.trusted_keys to require a signature, or bundles.allow_unsigned: true to run an unsigned
// bundle. The error is a *config.FieldError at bundles.allow_unsigned wrapping ErrNoTrustChoice.
func (f *File) TrustChoice() error {
	if f.Sections.Bundles != nil || f.Config.Bundle == "" || !localSource(f.Config.Bundle) {
		return nil
	}
	return &config.FieldError{Path: "bundles.allow_unsigned", Err: fmt.Errorf("%w: the bundle %s "+
		"would load without a signature check; add `bundles: {trusted_keys: [KEY.pub]}` to require "+
		"one, or `bundles: {allow_unsigned: true}` (--allow-unsigned) to run it unsigned", ErrNoTrustChoice, f.Config.Bundle)}
}

// Validate checks the whole file after defaults, the core config (config.Config.Validate) then
// every feature section, and names the first bad field (*config.FieldError).
func (f *File) Validate() error {
	c := f.Config.WithDefaults()
	if err := c.Validate(); err != nil {
		return err
	}
	return f.Sections.Validate(&c)
}

// Validate checks the feature sections up front, before anything starts; c resolves relative
// paths (trusted keys). Every mode calls it (New, NewLocal and policy test through NewCore).
func (s *Sections) Validate(c *config.Config) error {
	fe := func(path, format string, a ...any) error {
		return &config.FieldError{Path: path, Err: fmt.Errorf(format, a...)}
	}
	if s.Authn != nil {
		if err := s.Authn.Validate(); err != nil {
			var afe *authn.FieldError
			if errors.As(err, &afe) { // the first bad field, as every section names it
				return &config.FieldError{Path: afe.Path, Err: afe.Err}
			}
			return &config.FieldError{Path: "authn", Err: err}
		}
	}
	for i, u := range c.Upstreams {
		if u.OAuth != nil && u.OAuth.TokenExchange && s.Authn == nil {
			return fe(fmt.Sprintf("upstreams[%d].oauth.token_exchange", i), "needs the authn: section: without it no caller token is verified to exchange")
		}
	}
	if !config.LoopbackHost(c.Listen) && c.HTTP.ClientToken == "" && s.Authn == nil {
		return fe("authn", "required to listen on %q, which is not a loopback address: add an authn: section "+
			"(access tokens from your identity provider), or set http.client_token (PALISADE_CLIENT_TOKEN: one "+
			"shared secret, no identity), or listen on 127.0.0.1", c.Listen)
	}
	if b := s.Bundles; b != nil {
		keys := make([]string, len(b.TrustedKeys))
		for i, k := range b.TrustedKeys {
			keys[i] = c.Resolve(k)
		}
		if _, err := bundle.LoadKeys(keys); err != nil {
			return &config.FieldError{Path: "bundles.trusted_keys", Err: err}
		}
		if b.Keep < 0 {
			return fe("bundles.keep", "must not be negative")
		}
		if b.ShadowQueue < 0 {
			return fe("bundles.shadow_queue", "must not be negative")
		}
		if b.ShadowWorkers < 0 {
			return fe("bundles.shadow_workers", "must not be negative")
		}
		if b.ShadowMaxDelay < 0 {
			return fe("bundles.shadow_max_delay", "must not be negative")
		}
	}
	a := s.Approvals
	switch a.OnTimeout {
	case "", "allow", "deny":
	default:
		return fe("approvals.on_timeout", "%q must be allow or deny", a.OnTimeout)
	}
	for _, d := range []struct {
		path string
		v    config.Duration
	}{{"approvals.timeout", a.Timeout}, {"approvals.max_timeout", a.MaxTimeout}, {"approvals.progress_every", a.ProgressEvery}, {"tokens.ttl", s.Tokens.TTL}} {
		if d.v < 0 {
			return fe(d.path, "must not be negative")
		}
	}
	if a.FeedSize < 0 {
		return fe("approvals.feed_size", "must not be negative")
	}
	if a.AskURL != "" && !strings.HasPrefix(a.AskURL, "https://") && !strings.HasPrefix(a.AskURL, "http://") {
		return fe("approvals.ask_url", "%q must be an http(s) URL", a.AskURL)
	}
	switch s.Infer.Provider {
	case "", infer.ProviderCPU, infer.ProviderCUDA, infer.ProviderKServe:
	default:
		return fe("infer.provider", "%q must be cpu, cuda or kserve", s.Infer.Provider)
	}
	if s.Infer.MaxTexts < 0 {
		return fe("infer.max_texts", "must not be negative")
	}
	for i, st := range s.Agents.HookAllowStages {
		if st == "" {
			return fe(fmt.Sprintf("agents.hook_allow_stages[%d]", i), "must not be empty")
		}
	}
	if err := s.AuditSink.validate(); err != nil {
		return err
	}
	if err := validateTelemetry(s.Telemetry); err != nil {
		return err
	}
	if s.LLM != nil {
		if _, err := llm.New(s.LLM.Options()); err != nil { // resolves keys and checks providers; starts nothing
			return &config.FieldError{Path: "llm", Err: err}
		}
	}
	return nil
}
