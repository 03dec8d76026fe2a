package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/added060/palisade/host/admin"

	"github.com/added060/palisade/host/gateway"
)

func init() {
	register(command{name: "serve", summary: "run the HTTP gateway (Streamable HTTP) in front of MCP upstreams", cmd: &serveCmd{}})
}

// serveCmd is `palisade serve`. The flags override the config file; config.Override applies
// them (flag, then environment, then file).
type serveCmd struct {
	Config      string `help:"YAML config file." env:"PALISADE_CONFIG" placeholder:"FILE"`
	Listen      string `help:"Listen address host:port (default 127.0.0.1:8420)." env:"PALISADE_LISTEN"`
	DataDir     string `help:"State directory (default ./.palisade)." env:"PALISADE_DATA_DIR"`
	Socket      string `help:"The engine's Unix socket, where palisade hook asks (e.g. /run/palisade/engine.sock; its folder must be writable by this user alone)." env:"PALISADE_SOCKET" placeholder:"PATH"`
	Bundle      string `help:"Policy bundle folder." env:"PALISADE_BUNDLE"`
	NATSURL     string `name:"nats-url" help:"External NATS server or cluster (default: embedded)." env:"PALISADE_NATS_URL"`
	NATSPort    string `name:"nats-port" help:"Embedded NATS client port (default 4222, -1 random)." env:"PALISADE_NATS_PORT"`
	NATSCreds   string `name:"nats-creds" help:"Gateway creds file for an external NATS (the embedded one uses DATA_DIR/nats-auth)." env:"PALISADE_NATS_CREDS"`
	Upstream    string `help:"Upstreams as name=url[,name=url] (replaces the config's)." env:"PALISADE_UPSTREAM"`
	LogLevel    string `help:"debug, info, warn or error." env:"PALISADE_LOG_LEVEL"`
	AdminToken  string `help:"Admin API bearer token (default: generated in the data dir)." env:"PALISADE_ADMIN_TOKEN"`
	ClientToken string `help:"One shared bearer token /mcp and /v1/hook require; off loopback this or an authn: section." env:"PALISADE_CLIENT_TOKEN"`
	// AllowUnsigned is the one way to run a local bundle without signature.json when the config
	// has no bundles: section (gateway.File.TrustChoice).
	AllowUnsigned bool `name:"allow-unsigned" help:"Load a bundle without signature.json (bundles.allow_unsigned: true). Without it or a bundles: section, serve refuses a local bundle."`
}

func newLogger(env *cliEnv, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(env.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(env.Stderr, opts))
}

// loadConfig reads the config file (--config, bound to PALISADE_CONFIG) into the one typed
// struct, strictly (an unknown key in any section is refused, naming its path), and applies env
// and flag overrides.
func loadConfig(env *cliEnv, path string, flags map[string]string) (*gateway.File, error) {
	c, err := gateway.LoadFile(path)
	if err != nil {
		return nil, err
	}
	if err := c.Override(env.Getenv, flags); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *serveCmd) Run(ctx context.Context, env *cliEnv) error {
	cfg, err := loadConfig(env, s.Config, map[string]string{
		"listen": s.Listen, "socket": s.Socket, "data-dir": s.DataDir, "bundle": s.Bundle, "nats-url": s.NATSURL,
		"nats-port": s.NATSPort, "nats-creds": s.NATSCreds, "upstream": s.Upstream, "log-level": s.LogLevel,
		"admin-token": s.AdminToken, "client-token": s.ClientToken,
	})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade serve:", err)
		return exitCode(exitUsage)
	}
	if s.AllowUnsigned {
		if cfg.Sections.Bundles == nil {
			cfg.Sections.Bundles = &gateway.BundlesConfig{}
		}
		cfg.Sections.Bundles.AllowUnsigned = true
	}
	if err := cfg.TrustChoice(); err != nil {
		fmt.Fprintln(env.Stderr, "palisade serve:", err)
		return exitCode(exitUsage)
	}
	c := cfg.WithDefaults()
	log := newLogger(env, c.Log.Level, c.Log.Format)
	if b := cfg.Sections.Bundles; b != nil && b.AllowUnsigned {
		log.Warn("bundles.allow_unsigned is true: a bundle without signature.json is loaded (a badly signed one is still refused)")
	}
	gateway.TuneRuntime()
	g, err := gateway.New(ctx, gateway.Options{Config: cfg.Config, Sections: cfg.Sections, Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade serve:", err)
		return exitCode(exitFail)
	}
	if err := g.Start(ctx); err != nil {
		fmt.Fprintln(env.Stderr, "palisade serve:", err)
		g.Close(context.Background())
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stderr, "palisade: gateway on http://%s/mcp  audit on %s  admin token in %s\n", g.Addr(), g.Bus().ClientURL(), g.DataDir())
	if link, ok := g.DashboardLogin(); ok {
		fmt.Fprintf(env.Stderr, "palisade: dashboard %s  (this link logs in once, within %s)\n", link, admin.LoginTTL)
	}
	if c.Socket != "" {
		fmt.Fprintf(env.Stderr, "palisade: engine socket %s (palisade hook --engine-socket %s)\n", c.Socket, c.Socket)
	}
	if who, login := loginUser("/etc/passwd", os.Geteuid()); login {
		fmt.Fprintf(env.Stderr, "palisade: the engine runs as %s, a login user: an agent running as %s can read %s (its keys) and approve its own calls. `sudo palisade install` runs the engine as a user of its own (docs/DESIGN.md \"The process boundary\")\n", who, who, g.DataDir())
	}
	fmt.Fprintf(env.Stderr, "palisade: audit feed: palisade audit tail --data-dir %s\n", g.DataDir())
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g.Close(cctx)
	return nil
}

// loginUser reports the name of uid in the passwd file and whether it has a login shell (not
// nologin or false): a user an agent may run as. A system user made by palisade install has none.
func loginUser(passwd string, uid int) (string, bool) {
	b, err := os.ReadFile(passwd)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 7 || f[2] != strconv.Itoa(uid) {
			continue
		}
		shell := filepath.Base(strings.TrimSpace(f[6]))
		return f[0], shell != "nologin" && shell != "false" && shell != ""
	}
	return "", false
}
