package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/pin"
	"github.com/added060/palisade/host/proxy"
	"github.com/added060/palisade/host/wrap"
)

func init() {
	register(command{name: "proxy", summary: "run a stdio MCP server behind the chain: palisade proxy [--server NAME] -- CMD ARGS", run: runProxy})
}

// localFlags are the flags of the one-process modes (proxy, hook, mcp): they decide in this
// process with the bundle folder, and publish audit to NATS or spool it.
type localFlags struct {
	config, bundle, dataDir, natsURL, natsCreds, logLevel *string
}

func addLocalFlags(fs *flag.FlagSet) *localFlags {
	return &localFlags{
		config:    fs.String("config", "", "YAML config file (env PALISADE_CONFIG)"),
		bundle:    fs.String("bundle", "", "policy bundle folder (env PALISADE_BUNDLE)"),
		dataDir:   fs.String("data-dir", "", "state directory: compile cache, pins, audit spool (env PALISADE_DATA_DIR; default ~/.palisade)"),
		natsURL:   fs.String("nats-url", "", "NATS for audit (env PALISADE_NATS_URL; default a local gateway's embedded server)"),
		natsCreds: fs.String("nats-creds", "", "gateway creds or nkey seed file for NATS (env PALISADE_NATS_CREDS; default DATA_DIR/nats-auth/gateway.nk)"),
		logLevel:  fs.String("log-level", "", "debug, info, warn or error (env PALISADE_LOG_LEVEL; default warn)"),
	}
}

// load returns the configuration the flags, environment and config file give. A data dir nobody
// named is ~/.palisade (these modes run from any working directory), and relative paths are made
// absolute.
func (f *localFlags) load(env *cliEnv) (config.Config, *slog.Logger, error) {
	cfg, err := loadConfig(env, *f.config, map[string]string{"bundle": *f.bundle, "data-dir": *f.dataDir, "nats-url": *f.natsURL, "nats-creds": *f.natsCreds, "log-level": *f.logLevel})
	if err != nil {
		return config.Config{}, nil, err
	}
	if cfg.DataDir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cfg.DataDir = filepath.Join(home, ".palisade")
		}
	}
	for _, p := range []*string{&cfg.DataDir, &cfg.Bundle, &cfg.Plugins.CacheDir} {
		if *p != "" && !strings.Contains(*p, "://") {
			if abs, err := filepath.Abs(*p); err == nil {
				*p = abs
			}
		}
	}
	level := cfg.Log.Level
	if level == "" {
		level = "warn"
	}
	return *cfg, newLogger(env, level, cfg.Log.Format), nil
}

func runProxy(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) > 0 && (args[0] == "pins" || args[0] == "approve") {
		return runPins(env, args[0], args[1:])
	}
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: palisade proxy [flags] -- COMMAND [ARGS...]\n       palisade proxy pins [--data-dir D] SERVER        list pinned tools and pending changes\n       palisade proxy approve [--data-dir D] SERVER TOOL  accept a changed tool definition\n\nRuns the MCP server COMMAND as a child and relays stdio through the policy chain.\n\nflags:")
		fs.PrintDefaults()
	}
	lf := addLocalFlags(fs)
	server := fs.String("server", "", "upstream name in envelopes and audit events (default: the command's base name)")
	_ = fs.Bool(strings.TrimPrefix(wrap.InsertedArgs, "--"), false, "set by palisade wrap; ignored")
	pinning := fs.Bool("pin", true, "pin tool definitions and deny calls to changed tools")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		fs.Usage()
		return exitUsage
	}
	cfg, log, err := lf.load(env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitUsage
	}
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: cfg, Name: "stdio", Pinning: *pinning, Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitFail
	}
	defer l.Close(context.WithoutCancel(ctx))
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go l.WatchBundle(wctx, 0)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	o := proxy.StdioOptions{Engine: l.Engine, Command: rest[0], Args: rest[1:], Server: *server,
		Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Signals: sigs, Logger: log}
	if l.Pinner != nil {
		o.Tools = l.Pinner
	}
	// The child outlives a cancelled ctx only for its grace period; signals reach it directly.
	code, err := proxy.RunStdio(context.WithoutCancel(ctx), o)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitFail
	}
	return code
}

// runPins lists a server's pinned tools and pending changes, or approves one change.
func runPins(env *cliEnv, verb string, args []string) int {
	fs := flag.NewFlagSet("proxy "+verb, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	lf := addLocalFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	want := 1
	if verb == "approve" {
		want = 2
	}
	if fs.NArg() != want {
		fmt.Fprintf(env.Stderr, "usage: palisade proxy %s [--data-dir D] SERVER%s\n", verb, map[bool]string{true: " TOOL"}[verb == "approve"])
		return exitUsage
	}
	cfg, log, err := lf.load(env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitUsage
	}
	p, err := pin.New(pin.Options{Dir: filepath.Join(cfg.WithDefaults().DataDir, "pins"), Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitFail
	}
	server := fs.Arg(0)
	if verb == "approve" {
		if err := p.Approve(server, fs.Arg(1)); err != nil {
			fmt.Fprintln(env.Stderr, "palisade proxy approve:", err)
			return exitFail
		}
		fmt.Fprintf(env.Stdout, "approved the new definition of %s/%s\n", server, fs.Arg(1))
		return exitOK
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string]any{"pins": p.Pins(server), "pending": p.Pending(server)})
	return exitOK
}
