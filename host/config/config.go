package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is palisade.yaml.
type Config struct {
	Listen  string `yaml:"listen"`   // host:port of the gateway; "" = 127.0.0.1:8420
	DataDir string `yaml:"data_dir"` // state: NATS store, audit spool, plugin cache, tokens; "" = ./.palisade
	// Socket is the engine's Unix socket (e.g. /run/palisade/engine.sock): thin clients such as
	// `palisade hook` ask the engine there. Its folder must be writable by the engine's user
	// alone (host/enginesock). "" = none.
	Socket    string     `yaml:"socket"`
	Bundle    string     `yaml:"bundle"` // bundle folder, archive, http(s) URL or nats://bucket source
	Upstreams []Upstream `yaml:"upstreams"`
	Aggregate Aggregate  `yaml:"aggregate"` // /mcp over several upstreams
	Limits    Limits     `yaml:"limits"`
	HTTP      HTTP       `yaml:"http"`
	NATS      NATS       `yaml:"nats"`
	Audit     Audit      `yaml:"audit"`
	Plugins   Plugins    `yaml:"plugins"`
	Log       Log        `yaml:"log"`
	Admin     Admin      `yaml:"admin"`
	// BaseDir is the folder of the file the config was loaded from ("" = the working
	// directory); relative paths in feature sections resolve against it (Resolve).
	BaseDir string `yaml:"-"`
	// Path is the config file this was loaded from ("" = none): one of the engine's own files
	// that the guard refuses to let an agent read or change.
	Path string `yaml:"-"`
}

// Upstream is one MCP server behind the gateway: a Streamable HTTP endpoint (URL) or a local
// stdio server the gateway launches and supervises (Command). Exactly one of the two is set.
type Upstream struct {
	Name    string            `yaml:"name"`
	URL     string            `yaml:"url"`     // Streamable HTTP endpoint
	Timeout Duration          `yaml:"timeout"` // per request; 0 = Limits.UpstreamTimeout
	Headers map[string]string `yaml:"headers"` // added to every forwarded request (e.g. Authorization); URL only
	// OAuth gives the gateway its own access token for this upstream (OAuth 2.1 client
	// credentials), sent as Authorization on every request to it; URL only. The client's
	// token is never forwarded.
	OAuth *UpstreamOAuth `yaml:"oauth"`
	// Command is a stdio MCP server the gateway starts, restarts with backoff when it exits
	// (0.5 s doubling to 30 s) and stops with the gateway (SIGTERM, then SIGKILL after 5 s).
	// Its stderr goes to the gateway log, one line at a time.
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"` // Command's arguments
	// Env is added to Command's environment: the gateway's own, less every PALISADE_* variable
	// (the gateway's tokens stay with it).
	Env map[string]string `yaml:"env"`
	Cwd string            `yaml:"cwd"` // Command's working directory, relative to the config file; "" = the gateway's
}

// Aggregate configures /mcp when there are several upstreams: the gateway serves them all as
// one MCP server (each upstream keeps its own /mcp/<name>).
type Aggregate struct {
	// Names keeps tool and prompt names of different servers apart: "prefix" exposes every
	// name as <server>__<name>; "refuse" exposes names as given and fails a list that finds a
	// name two servers offer, naming both. "" = prefix.
	Names string `yaml:"names"`
}

// UpstreamOAuth is an upstream's client credentials grant (RFC 6749 §4.4; the resource
// indicator of RFC 8707 when set).
type UpstreamOAuth struct {
	TokenURL         string   `yaml:"token_url"`
	ClientID         string   `yaml:"client_id"`
	ClientSecretFile string   `yaml:"client_secret_file"` // read at start; never in the config itself
	Scopes           []string `yaml:"scopes"`
	Resource         string   `yaml:"resource"` // RFC 8707: the token's audience; "" = none asked
	// TokenExchange asks for a token on behalf of the caller instead (RFC 8693: the caller's
	// verified access token as the subject token, this client as the actor), so the upstream
	// sees who is calling; it needs the gateway's authn: section.
	TokenExchange bool `yaml:"token_exchange"`
}

// Limits bound what one request may cost.
type Limits struct {
	BodyBytes       int64    `yaml:"body_bytes"`       // request body cap; 0 = 4 MiB
	ResponseBytes   int64    `yaml:"response_bytes"`   // JSON response cap for the response phase; 0 = 16 MiB
	UpstreamTimeout Duration `yaml:"upstream_timeout"` // 0 = 60s (streams: time to first byte)
	// UpstreamIdleTimeout ends an upstream answer stream (the SSE answer to a POST) that sends
	// nothing, not even a keepalive comment, for this long; 0 = 5m.
	UpstreamIdleTimeout Duration `yaml:"upstream_idle_timeout"`
	// StreamBufferBytes is the memory all upstream SSE events, whole upstream answers and
	// request bodies being read or held at once may take together, past 64 KiB each (each is
	// also capped by ResponseBytes or BodyBytes): an event past it ends its stream with an
	// error, an answer past it is answered with an error, a body past it gets 503. 0 = 256 MiB.
	StreamBufferBytes int64 `yaml:"stream_buffer_bytes"`
	// BatchElements is how many messages one JSON-RPC batch (a POST body that is an array) may
	// hold; a larger batch is refused whole (413, -32003) before any element is judged or
	// forwarded. 0 = 100.
	BatchElements int `yaml:"batch_elements"`
	// UpstreamTotalTimeout bounds one exchange with an upstream, from forwarding the request to
	// the last byte of its answer, whatever it sends meanwhile (keepalive comments included);
	// the client then gets a -32002 error and the audit event records it. The time a call is
	// held for a person's approval comes before and does not count. 0 = 5m.
	UpstreamTotalTimeout Duration `yaml:"upstream_total_timeout"`
	// PerPrincipal limits each principal's tools/call on /mcp and /mcp/<name> (all callers
	// without a principal share one budget); nil = no limit.
	PerPrincipal *RateLimit `yaml:"per_principal"`
	// Tools override PerPrincipal for the tools they match (first match wins): each principal
	// gets its own budget per tool.
	Tools []ToolRateLimit `yaml:"tools"`
	// Self are the own MCP server's limits per principal per tool, calls per minute.
	Self SelfLimits `yaml:"self"`
}

// RateLimit is a token bucket: PerMinute calls a minute, Burst at once (0 = PerMinute, at
// least 1).
type RateLimit struct {
	PerMinute float64 `yaml:"per_minute"`
	Burst     int     `yaml:"burst"`
}

// ToolRateLimit is a RateLimit for the tools matching Tool (a glob) on the servers matching
// Server ("" = any).
type ToolRateLimit struct {
	Tool      string  `yaml:"tool"`
	Server    string  `yaml:"server"`
	PerMinute float64 `yaml:"per_minute"`
	Burst     int     `yaml:"burst"`
}

// SelfLimits are the own MCP server's calls per minute per principal; 0 = the default.
type SelfLimits struct {
	CheckIntent       int `yaml:"check_intent"`       // 0 = 100
	RequestPermission int `yaml:"request_permission"` // 0 = 10
	ReportAction      int `yaml:"report_action"`      // 0 = 1000
	GetPolicy         int `yaml:"get_policy"`         // 0 = 600
}

// HTTP configures the gateway's HTTP listener: timeouts, a connection limit and who may call.
type HTTP struct {
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"` // request line and headers; 0 = 10s
	// ReadTimeout bounds reading one request, headers and body; net/http lifts it once the
	// body is read, so a long answer stream is not cut. 0 = 30s.
	ReadTimeout Duration `yaml:"read_timeout"`
	IdleTimeout Duration `yaml:"idle_timeout"` // keep-alive connection between requests; 0 = 120s
	// SendTimeout bounds each write to a client (an SSE event, a flush, 64 KiB of an answer),
	// not the whole answer: a client that stops reading its stream is cut after this long
	// instead of pinning the stream's buffers and goroutines. 0 = 30s.
	SendTimeout Duration `yaml:"send_timeout"`
	// MaxConnections is how many connections the listener holds at once. Past it a new
	// connection is answered at once and closed: GET /healthz with 200, anything else with 503
	// and Retry-After (it is not left waiting in the kernel's queue). 0 = 16384, lowered to
	// the process's file limit less 512.
	MaxConnections int `yaml:"max_connections"`
	// MaxHeaderBytes caps a request's headers; 0 = 32 KiB.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// AllowedHosts are the Host header values accepted besides the loopback names (localhost,
	// 127.0.0.1, [::1], any port): "name" (any port) or "name:port".
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AllowedOrigins are the browser origins (scheme://host[:port]) accepted besides loopback
	// origins and the gateway's own (an Origin matching the request's allowed Host).
	AllowedOrigins []string `yaml:"allowed_origins"`
	// ClientToken is the bearer token /mcp and /v1/hook require (agents.hook_token, when set,
	// is the one /v1/hook takes). Off loopback the gateway needs it or an `authn:` section
	// (gateway.Sections.Validate checks). "" = none.
	ClientToken string `yaml:"client_token"`
}

// NATS says where audit events and fleet state go.
type NATS struct {
	URL  string `yaml:"url"`  // external server or cluster; "" = embedded server
	Host string `yaml:"host"` // embedded server host; "" = 127.0.0.1
	Port int    `yaml:"port"` // embedded server client port; 0 = 4222, -1 = random
	// Creds is the gateway's creds file for an external server (mode 0600); "" = none. The
	// embedded server always requires the role keys under DATA_DIR/nats-auth.
	Creds string `yaml:"creds"`
	// ApproverCreds lets the gateway sign decisions made on its admin API so that other
	// gateways accept them (external servers; embedded uses DATA_DIR/nats-auth/approver.nk).
	ApproverCreds string `yaml:"approver_creds"`
	// Approvers are approver nkey public keys ("U...") whose signed decisions are accepted,
	// besides the approver key of the embedded server and ApproverCreds.
	Approvers []string `yaml:"approvers"`
}

// Audit configures audit events.
type Audit struct {
	Arguments string `yaml:"arguments"` // hash (default) | full | none
	Stream    string `yaml:"stream"`    // JetStream stream; "" = PALISADE_AUDIT
}

// Plugins configures the plugin runtime.
type Plugins struct {
	CacheDir string `yaml:"cache_dir"` // compiled modules; "" = DATA_DIR/cache
}

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`  // debug | info (default) | warn | error
	Format string `yaml:"format"` // text (default) | json
}

// Admin configures the admin API.
type Admin struct {
	// Token is the break-glass bearer token, held by the engine's user; "" = generated on first
	// start into DATA_DIR/admin.token. Every use is logged.
	Token string `yaml:"token"`
	// OIDC lets people sign in to the dashboard with the identity provider; nil = token only.
	OIDC *AdminOIDC `yaml:"oidc"`
	// Passkeys lets people sign in to the dashboard with a passkey (WebAuthn); nil = none.
	Passkeys *AdminPasskeys `yaml:"passkeys"`
}

// AdminPasskeys is the dashboard's sign-in with a passkey (WebAuthn). A person signed in
// (identity provider, or the one-time login with the admin token) registers a passkey for
// themselves with the role they hold; an admin may register one for another person with a role.
// Registered passkeys live in DATA_DIR/passkeys.json, which only the engine's user can read.
//
//	admin:
//	  passkeys:
//	    rp_id: gateway.example.com                 # "" = the host of the first origin
//	    origins: [https://gateway.example.com]     # where the dashboard is opened; required
//	    session: 8h
type AdminPasskeys struct {
	RPID    string   `yaml:"rp_id"`
	Origins []string `yaml:"origins"`
	Session Duration `yaml:"session"`
}

// AdminOIDC is the dashboard's sign-in with an OpenID provider (authorization code with PKCE).
//
//	admin:
//	  oidc:
//	    issuer: https://login.example.com/realms/eng   # "" = authn.issuer
//	    name: Keycloak                                 # the button says "Sign in with Keycloak"
//	    client_id: palisade-dashboard
//	    client_secret_file: /etc/palisade/dashboard.secret   # "" = a public client (PKCE only)
//	    redirect_url: https://gateway.example.com/admin/oidc/callback
//	    scopes: [openid, email, profile]
//	    session: 8h
//	    roles:
//	      claim: groups
//	      viewer: [eng]
//	      approver: [sre]
//	      admin: [platform]
type AdminOIDC struct {
	Issuer           string    `yaml:"issuer"`
	Name             string    `yaml:"name"`
	ClientID         string    `yaml:"client_id"`
	ClientSecretFile string    `yaml:"client_secret_file"`
	RedirectURL      string    `yaml:"redirect_url"`
	Scopes           []string  `yaml:"scopes"`
	Session          Duration  `yaml:"session"`
	Roles            RoleClaim `yaml:"roles"`
}

// RoleClaim maps the values of one claim (a string or a list of strings) to the admin API's
// roles. Roles nest: admin can do what approver can, approver what viewer can.
type RoleClaim struct {
	Claim    string   `yaml:"claim"` // "" = groups
	Viewer   []string `yaml:"viewer"`
	Approver []string `yaml:"approver"`
	Admin    []string `yaml:"admin"`
}

// Duration is a time.Duration written as "30s".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		// A TypeError with the line lets Decode name the field (upstreams[0].timeout).
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: column %d: invalid duration %q (write 30s, 5m, 250ms)", n.Line, n.Column, s)}}
	}
	*d = Duration(v)
	return nil
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// FieldError names the configuration field that is wrong.
type FieldError struct {
	Path string // e.g. upstreams[1].url
	Err  error
}

func (e *FieldError) Error() string { return fmt.Sprintf("config: %s: %v", e.Path, e.Err) }
func (e *FieldError) Unwrap() error { return e.Err }

// Defaults.
const (
	DefaultListen          = "127.0.0.1:8420"
	DefaultDataDir         = ".palisade"
	DefaultBodyBytes       = 4 << 20
	DefaultResponseBytes   = 16 << 20
	DefaultUpstreamTimeout = 60 * time.Second
	DefaultNATSPort        = 4222

	DefaultUpstreamIdleTimeout  = 5 * time.Minute
	DefaultStreamBufferBytes    = 256 << 20
	DefaultBatchElements        = 100
	DefaultUpstreamTotalTimeout = 5 * time.Minute
	DefaultReadHeaderTimeout    = 10 * time.Second
	DefaultReadTimeout          = 30 * time.Second
	DefaultIdleTimeout          = 120 * time.Second
	DefaultSendTimeout          = 30 * time.Second
	DefaultMaxConnections       = 16384
	DefaultMaxHeaderBytes       = 32 << 10
)

// Parse decodes the core config strictly: any key it does not know, at any depth, is an error
// naming its path (*FieldError). Feature sections (bundles, approvals, llm, ...) are not part of
// Config: the composition root embeds Config in one typed struct with them and decodes that
// with Decode.
func Parse(b []byte) (*Config, error) {
	var c Config
	if err := Decode(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// Load reads a YAML file into Config (Parse, then RelativeTo the file's folder); path ""
// returns an empty config.
func Load(path string) (*Config, error) {
	c := &Config{}
	if err := LoadInto(path, c, c); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadInto reads the YAML file at path into v (a struct that embeds Config inline, or Config
// itself) with Decode, then makes core's paths relative to the file (RelativeTo). Path "" leaves
// v alone.
func LoadInto(path string, v any, core *Config) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := Decode(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	core.RelativeTo(filepath.Dir(path))
	if abs, err := filepath.Abs(path); err == nil {
		core.Path = abs
	}
	return nil
}

// RelativeTo records base as the config file's folder (BaseDir) and makes DataDir, Bundle and
// Plugins.CacheDir, when relative, relative to it.
func (c *Config) RelativeTo(base string) {
	c.BaseDir = base
	rel := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) && !strings.Contains(*p, "://") {
			*p = filepath.Join(base, *p)
		}
	}
	rel(&c.DataDir)
	rel(&c.Bundle)
	rel(&c.Plugins.CacheDir)
	for i := range c.Upstreams {
		rel(&c.Upstreams[i].Cwd)
	}
}

// Resolve returns p relative to the config file's folder when p is a relative path that exists
// there, and p unchanged otherwise (absolute paths, inline values, no config file).
func (c *Config) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || c.BaseDir == "" || strings.Contains(p, "://") {
		return p
	}
	q := filepath.Join(c.BaseDir, p)
	if _, err := os.Stat(q); err == nil {
		return q
	}
	return p
}

// WithDefaults returns a copy with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.Limits.BodyBytes == 0 {
		c.Limits.BodyBytes = DefaultBodyBytes
	}
	if c.Limits.ResponseBytes == 0 {
		c.Limits.ResponseBytes = DefaultResponseBytes
	}
	if c.Limits.UpstreamTimeout == 0 {
		c.Limits.UpstreamTimeout = Duration(DefaultUpstreamTimeout)
	}
	if c.Limits.UpstreamIdleTimeout == 0 {
		c.Limits.UpstreamIdleTimeout = Duration(DefaultUpstreamIdleTimeout)
	}
	if c.Limits.StreamBufferBytes == 0 {
		c.Limits.StreamBufferBytes = DefaultStreamBufferBytes
	}
	if c.Limits.BatchElements == 0 {
		c.Limits.BatchElements = DefaultBatchElements
	}
	if c.Limits.UpstreamTotalTimeout == 0 {
		c.Limits.UpstreamTotalTimeout = Duration(DefaultUpstreamTotalTimeout)
	}
	if c.HTTP.ReadHeaderTimeout == 0 {
		c.HTTP.ReadHeaderTimeout = Duration(DefaultReadHeaderTimeout)
	}
	if c.HTTP.ReadTimeout == 0 {
		c.HTTP.ReadTimeout = Duration(DefaultReadTimeout)
	}
	if c.HTTP.IdleTimeout == 0 {
		c.HTTP.IdleTimeout = Duration(DefaultIdleTimeout)
	}
	if c.HTTP.SendTimeout == 0 {
		c.HTTP.SendTimeout = Duration(DefaultSendTimeout)
	}
	if c.HTTP.MaxConnections == 0 {
		c.HTTP.MaxConnections = DefaultMaxConnections
	}
	if c.HTTP.MaxHeaderBytes == 0 {
		c.HTTP.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.NATS.Host == "" {
		c.NATS.Host = "127.0.0.1"
	}
	if c.NATS.Port == 0 {
		c.NATS.Port = DefaultNATSPort
	}
	if c.Audit.Arguments == "" {
		c.Audit.Arguments = "hash"
	}
	if c.Audit.Stream == "" {
		c.Audit.Stream = "PALISADE_AUDIT"
	}
	if c.Plugins.CacheDir == "" {
		c.Plugins.CacheDir = filepath.Join(c.DataDir, "cache")
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "text"
	}
	if c.Aggregate.Names == "" {
		c.Aggregate.Names = "prefix"
	}
	for i := range c.Upstreams {
		if c.Upstreams[i].Timeout == 0 {
			c.Upstreams[i].Timeout = c.Limits.UpstreamTimeout
		}
	}
	return c
}

// Validate checks the config and names the first bad field.
func (c *Config) Validate() error {
	fe := func(path, format string, a ...any) error {
		return &FieldError{Path: path, Err: fmt.Errorf(format, a...)}
	}
	if c.Socket != "" && !filepath.IsAbs(c.Socket) {
		return fe("socket", "%q is not an absolute path", c.Socket)
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fe("listen", "%q is not host:port", c.Listen)
	}
	if c.Bundle == "" {
		return fe("bundle", "required: a bundle folder, archive or URL")
	}
	if len(c.Upstreams) == 0 && c.Socket == "" {
		// An engine with a socket may serve only thin clients (the hook).
		return fe("upstreams", "at least one upstream is required (or a socket, for an engine that serves only hooks)")
	}
	seen := map[string]bool{}
	for i, u := range c.Upstreams {
		p := fmt.Sprintf("upstreams[%d]", i)
		if u.Name == "" || strings.ContainsAny(u.Name, "/ ?#") {
			return fe(p+".name", "%q must be non-empty without / ? # or spaces", u.Name)
		}
		if seen[u.Name] {
			return fe(p+".name", "%q is repeated", u.Name)
		}
		seen[u.Name] = true
		switch {
		case u.URL != "" && u.Command != "":
			return fe(p, "set url or command, not both")
		case u.URL == "" && u.Command == "":
			return fe(p, "set url (a Streamable HTTP server) or command (a stdio server)")
		case u.Command != "":
			if len(u.Headers) > 0 {
				return fe(p+".headers", "only an url upstream takes headers")
			}
			if u.OAuth != nil {
				return fe(p+".oauth", "only an url upstream takes oauth")
			}
			for k := range u.Env {
				if k == "" || strings.ContainsAny(k, "=\x00") {
					return fe(p+".env", "%q is not a variable name", k)
				}
			}
		default:
			if len(u.Args) > 0 || len(u.Env) > 0 || u.Cwd != "" {
				return fe(p+".url", "args, env and cwd go with command, not url")
			}
			pu, err := url.Parse(u.URL)
			if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return fe(p+".url", "%q is not an http(s) URL", u.URL)
			}
			if o := u.OAuth; o != nil {
				tu, err := url.Parse(o.TokenURL)
				switch {
				case err != nil || (tu.Scheme != "https" && tu.Scheme != "http") || tu.Host == "":
					return fe(p+".oauth.token_url", "%q is not an http(s) URL", o.TokenURL)
				case tu.Scheme == "http" && !LoopbackHost(tu.Host):
					return fe(p+".oauth.token_url", "%q: a client secret goes over https only (http on loopback)", o.TokenURL)
				case o.ClientID == "":
					return fe(p+".oauth.client_id", "required")
				case o.ClientSecretFile == "":
					return fe(p+".oauth.client_secret_file", "required: a file holding the client secret")
				}
				for k := range u.Headers {
					if strings.EqualFold(k, "Authorization") {
						return fe(p+".headers", "Authorization is set by oauth; not both")
					}
				}
			}
		}
		if u.Timeout < 0 {
			return fe(p+".timeout", "must not be negative")
		}
	}
	if n := c.Aggregate.Names; n != "" && n != "prefix" && n != "refuse" {
		return fe("aggregate.names", "%q: want prefix or refuse", n)
	}
	if c.Limits.BodyBytes < 0 {
		return fe("limits.body_bytes", "must not be negative")
	}
	if c.Limits.ResponseBytes < 0 {
		return fe("limits.response_bytes", "must not be negative")
	}
	if c.Limits.UpstreamTimeout < 0 {
		return fe("limits.upstream_timeout", "must not be negative")
	}
	for _, f := range []struct {
		path string
		v    Duration
	}{{"limits.upstream_idle_timeout", c.Limits.UpstreamIdleTimeout},
		{"limits.upstream_total_timeout", c.Limits.UpstreamTotalTimeout}, {"http.read_header_timeout", c.HTTP.ReadHeaderTimeout},
		{"http.read_timeout", c.HTTP.ReadTimeout}, {"http.idle_timeout", c.HTTP.IdleTimeout}, {"http.send_timeout", c.HTTP.SendTimeout}} {
		if f.v < 0 {
			return fe(f.path, "must not be negative")
		}
	}
	if c.Limits.StreamBufferBytes < 0 {
		return fe("limits.stream_buffer_bytes", "must not be negative")
	}
	if c.Limits.BatchElements < 0 {
		return fe("limits.batch_elements", "must not be negative")
	}
	if c.HTTP.MaxConnections < 0 {
		return fe("http.max_connections", "must not be negative")
	}
	if c.HTTP.MaxHeaderBytes < 0 {
		return fe("http.max_header_bytes", "must not be negative")
	}
	for i, h := range c.HTTP.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			return fe(fmt.Sprintf("http.allowed_hosts[%d]", i), "%q is not a host or host:port", h)
		}
	}
	for i, o := range c.HTTP.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fe(fmt.Sprintf("http.allowed_origins[%d]", i), "%q is not an origin (scheme://host[:port])", o)
		}
	}
	if c.NATS.URL != "" {
		if u, err := url.Parse(c.NATS.URL); err != nil || u.Host == "" {
			return fe("nats.url", "%q is not a NATS URL", c.NATS.URL)
		}
	}
	if c.NATS.Port < -1 || c.NATS.Port > 65535 {
		return fe("nats.port", "%d is not a port", c.NATS.Port)
	}
	switch c.Audit.Arguments {
	case "hash", "full", "none":
	default:
		return fe("audit.arguments", "%q must be hash, full or none", c.Audit.Arguments)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fe("log.level", "%q must be debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return fe("log.format", "%q must be text or json", c.Log.Format)
	}
	if r := c.Limits.PerPrincipal; r != nil && (r.PerMinute <= 0 || r.Burst < 0) {
		return fe("limits.per_principal", "per_minute must be > 0 and burst >= 0")
	}
	for i, r := range c.Limits.Tools {
		if r.Tool == "" || r.PerMinute <= 0 || r.Burst < 0 {
			return fe(fmt.Sprintf("limits.tools[%d]", i), "tool is required, per_minute must be > 0 and burst >= 0")
		}
	}
	if o := c.Admin.OIDC; o != nil {
		switch {
		case o.ClientID == "":
			return fe("admin.oidc.client_id", "required")
		case o.RedirectURL == "":
			return fe("admin.oidc.redirect_url", "required: this gateway's {prefix}/oidc/callback as the browser reaches it")
		case len(o.Roles.Viewer)+len(o.Roles.Approver)+len(o.Roles.Admin) == 0:
			return fe("admin.oidc.roles", "map at least one claim value to viewer, approver or admin")
		}
	}
	return nil
}

// Override applies environment variables (PALISADE_*) and then explicit flag values; a flag
// value wins over the environment, which wins over the file. getenv is os.Getenv in production.
func (c *Config) Override(getenv func(string) string, flags map[string]string) error {
	get := func(flag, env string) (string, bool) {
		if v, ok := flags[flag]; ok && v != "" {
			return v, true
		}
		if v := getenv(env); v != "" {
			return v, true
		}
		return "", false
	}
	if v, ok := get("listen", "PALISADE_LISTEN"); ok {
		c.Listen = v
	}
	if v, ok := get("socket", "PALISADE_SOCKET"); ok {
		c.Socket = v
	}
	if v, ok := get("data-dir", "PALISADE_DATA_DIR"); ok {
		c.DataDir = v
	}
	if v, ok := get("bundle", "PALISADE_BUNDLE"); ok {
		c.Bundle = v
	}
	if v, ok := get("nats-url", "PALISADE_NATS_URL"); ok {
		c.NATS.URL = v
	}
	if v, ok := get("nats-creds", "PALISADE_NATS_CREDS"); ok {
		c.NATS.Creds = v
	}
	if v, ok := get("nats-port", "PALISADE_NATS_PORT"); ok {
		p, err := strconv.Atoi(v)
		if err != nil {
			return &FieldError{Path: "nats.port", Err: fmt.Errorf("%q is not a number", v)}
		}
		c.NATS.Port = p
	}
	if v, ok := get("log-level", "PALISADE_LOG_LEVEL"); ok {
		c.Log.Level = v
	}
	if v, ok := get("admin-token", "PALISADE_ADMIN_TOKEN"); ok {
		c.Admin.Token = v
	}
	if v, ok := get("client-token", "PALISADE_CLIENT_TOKEN"); ok {
		c.HTTP.ClientToken = v
	}
	// --upstream name=url[,name=url] replaces the file's upstreams.
	if v, ok := get("upstream", "PALISADE_UPSTREAM"); ok {
		var ups []Upstream
		for _, part := range strings.Split(v, ",") {
			name, u, found := strings.Cut(strings.TrimSpace(part), "=")
			if !found {
				return &FieldError{Path: "upstreams", Err: fmt.Errorf("%q is not name=url", part)}
			}
			ups = append(ups, Upstream{Name: name, URL: u})
		}
		c.Upstreams = ups
	}
	return nil
}

// LoopbackHost reports whether hostport (a Listen address or a Host header, port optional)
// names only the loopback interface: localhost, 127.0.0.0/8 or ::1. An empty host (":8420")
// listens on every interface and is not loopback.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
