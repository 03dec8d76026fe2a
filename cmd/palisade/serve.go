package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
)

func init() {
	register(command{name: "serve", summary: "run the HTTP gateway (Streamable HTTP) in front of MCP upstreams", run: runServe})
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

// loadConfig reads --config (or PALISADE_CONFIG) and applies env and flag overrides.
func loadConfig(env *cliEnv, path string, flags map[string]string) (*config.Config, error) {
	if path == "" {
		path = env.Getenv("PALISADE_CONFIG")
	}
	c, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if err := c.Override(env.Getenv, flags); err != nil {
		return nil, err
	}
	return c, nil
}

func runServe(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "YAML config file (env PALISADE_CONFIG)")
	flags := map[string]*string{}
	for _, f := range []struct{ name, env, help string }{
		{"listen", "PALISADE_LISTEN", "listen address host:port (default 127.0.0.1:8420)"},
		{"data-dir", "PALISADE_DATA_DIR", "state directory (default ./.palisade)"},
		{"bundle", "PALISADE_BUNDLE", "policy bundle folder"},
		{"nats-url", "PALISADE_NATS_URL", "external NATS server or cluster (default: embedded)"},
		{"nats-port", "PALISADE_NATS_PORT", "embedded NATS client port (default 4222, -1 random)"},
		{"nats-creds", "PALISADE_NATS_CREDS", "gateway creds file for an external NATS (the embedded one uses DATA_DIR/nats-auth)"},
		{"upstream", "PALISADE_UPSTREAM", "upstreams as name=url[,name=url] (replaces the config's)"},
		{"log-level", "PALISADE_LOG_LEVEL", "debug, info, warn or error"},
		{"admin-token", "PALISADE_ADMIN_TOKEN", "admin API bearer token (default: generated in the data dir)"},
		{"client-token", "PALISADE_CLIENT_TOKEN", "bearer token /mcp and /v1/hook require (required off loopback)"},
	} {
		flags[f.name] = fs.String(f.name, "", f.help+" (env "+f.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fv := map[string]string{}
	for k, v := range flags {
		fv[k] = *v
	}
	cfg, err := loadConfig(env, *cfgPath, fv)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade serve:", err)
		return exitUsage
	}
	c := cfg.WithDefaults()
	log := newLogger(env, c.Log.Level, c.Log.Format)
	g, err := gateway.New(ctx, gateway.Options{Config: *cfg, Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade serve:", err)
		return exitFail
	}
	if err := g.Start(ctx); err != nil {
		fmt.Fprintln(env.Stderr, "palisade serve:", err)
		g.Close(context.Background())
		return exitFail
	}
	fmt.Fprintf(env.Stderr, "palisade: gateway on http://%s/mcp  audit on %s  admin token in %s\n", g.Addr(), g.Bus().ClientURL(), g.DataDir())
	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g.Close(cctx)
	_ = os.Stderr
	return exitOK
}
