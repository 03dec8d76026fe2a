package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/pin"
	"github.com/added060/palisade/host/proxy"
)

func init() {
	register(command{name: "proxy", summary: "run a stdio MCP server behind the chain: palisade proxy [--server NAME] -- CMD ARGS", cmd: &proxyCmd{}})
}

// localFlags are the flags of the one-process modes (proxy, hook, mcp): they decide in this
// process with the bundle folder, and publish audit to NATS or spool it.
type localFlags struct {
	Config    string `help:"YAML config file." env:"PALISADE_CONFIG" placeholder:"FILE"`
	Bundle    string `help:"Policy bundle folder." env:"PALISADE_BUNDLE" placeholder:"DIR"`
	DataDir   string `help:"State directory: compile cache, pins, audit spool (default ~/.palisade)." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	NATSURL   string `name:"nats-url" help:"NATS for audit (default a local gateway's embedded server)." env:"PALISADE_NATS_URL" placeholder:"URL"`
	NATSCreds string `name:"nats-creds" help:"Gateway creds or nkey seed file for NATS (default DATA_DIR/nats-auth/gateway.nk)." env:"PALISADE_NATS_CREDS" placeholder:"FILE"`
	LogLevel  string `help:"debug, info, warn or error (default warn)." env:"PALISADE_LOG_LEVEL"`
	// ONNXRuntime is infer.library: hook install and wrap write it into what they install, so
	// the detector runs wherever the client starts the hook or the proxy.
	ONNXRuntime string `name:"onnxruntime" help:"ONNX Runtime library (default: infer.library, $$PALISADE_ONNXRUNTIME_LIB, beside the binary, build/ort, /usr/local/lib)." placeholder:"FILE"`
	// TrustKey and AllowUnsigned are the bundles: trust policy from the command line: hook
	// install and wrap write them into what they install, so the bundle folder cannot be
	// edited at will by whoever can write it.
	TrustKey      []string `name:"trust-key" help:"Require the bundle to be signed by this public key (a .pub file or the key text; adds to bundles.trusted_keys). Repeatable." placeholder:"KEY"`
	AllowUnsigned bool     `name:"allow-unsigned" help:"Load an unsigned bundle (bundles.allow_unsigned: true); a bad signature by a trusted key still fails."`
}

// load returns the configuration the flags, environment and config file give. A data dir nobody
// named is ~/.palisade (these modes run from any working directory), and relative paths are made
// absolute.
func (f *localFlags) load(env *cliEnv) (*gateway.File, *slog.Logger, error) {
	if f.Config != "" {
		if abs, err := filepath.Abs(f.Config); err == nil {
			f.Config = abs // the same file gives the same config from any working directory
		}
	}
	cfg, err := loadConfig(env, f.Config, map[string]string{"bundle": f.Bundle, "data-dir": f.DataDir, "nats-url": f.NATSURL, "nats-creds": f.NATSCreds, "log-level": f.LogLevel})
	if err != nil {
		return nil, nil, err
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
	if f.ONNXRuntime != "" {
		abs, err := filepath.Abs(f.ONNXRuntime)
		if err != nil {
			return nil, nil, err
		}
		cfg.Infer.Library = abs
	}
	if len(f.TrustKey) > 0 || f.AllowUnsigned {
		// A bundles: section now exists: without one a local bundle loads unchecked.
		b := gateway.BundlesConfig{}
		if cfg.Bundles != nil {
			b = *cfg.Bundles
		}
		b.TrustedKeys = append(slices.Clip(b.TrustedKeys), trustKeyPaths(f.TrustKey)...)
		b.AllowUnsigned = b.AllowUnsigned || f.AllowUnsigned
		cfg.Bundles = &b
	}
	level := cfg.Log.Level
	if level == "" {
		level = "warn"
	}
	return cfg, newLogger(env, level, cfg.Log.Format), nil
}

// trustKeyPaths makes each --trust-key that names a file absolute (the key text is kept), so
// the same flags trust the same key from any working directory.
func trustKeyPaths(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k
		if _, err := bundle.ParsePublicKey(k); err != nil {
			if abs, aerr := filepath.Abs(k); aerr == nil {
				out[i] = abs
			}
		}
	}
	return out
}

// proxyCmd is `palisade proxy`: by default it runs COMMAND behind the chain; pins and approve
// manage tool pinning.
type proxyCmd struct {
	Run     proxyRunCmd     `cmd:"" default:"withargs" help:"Run the MCP server COMMAND as a child and relay stdio through the policy chain (the default)."`
	Pins    proxyPinsCmd    `cmd:"" help:"List a server's pinned tools and pending changes."`
	Approve proxyApproveCmd `cmd:"" help:"Accept a changed tool definition."`
}

type proxyRunCmd struct {
	localFlags `embed:""`
	Server     string `help:"Upstream name in envelopes and audit events (default: the command's base name)."`
	Inserted   bool   `name:"inserted-args" hidden:"" help:"Set by palisade wrap; ignored."`
	Pin        bool   `default:"true" negatable:"" help:"Pin tool definitions and deny calls to changed tools."`
	// EngineSocket: with an engine process installed, this proxy only runs the server and
	// carries bytes; the engine judges and records (thin.go).
	EngineSocket string   `name:"engine-socket" default:"/run/palisade/engine.sock" help:"Relay through the engine process on this Unix socket when it is there (checked like the hook's); the engine judges every line. \"\" = never." env:"PALISADE_ENGINE_SOCKET" placeholder:"PATH"`
	Command      []string `arg:"" passthrough:"" help:"The MCP server command and its arguments (after --)."`
}

func (p *proxyRunCmd) Run(ctx context.Context, env *cliEnv) error {
	rest := p.Command
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		fmt.Fprintln(env.Stderr, "usage: palisade proxy [flags] -- COMMAND [ARGS...] (palisade proxy --help)")
		return exitCode(exitUsage)
	}
	if p.EngineSocket != "" {
		if _, err := os.Lstat(p.EngineSocket); err == nil {
			code, err := runThinProxy(ctx, env, p.EngineSocket, p.Server, rest)
			if !errors.Is(err, errNoEngine) {
				if err != nil {
					fmt.Fprintln(env.Stderr, "palisade proxy:", err)
				}
				return exitCode(code)
			}
			fmt.Fprintln(env.Stderr, "palisade proxy: engine socket not used, judging here:", err)
		}
	}
	cfg, log, err := p.load(env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitCode(exitUsage)
	}
	gateway.TuneRuntime()
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: cfg.Config, Sections: cfg.Sections, Name: "stdio", Pinning: p.Pin, Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitCode(exitFail)
	}
	defer l.Close(context.WithoutCancel(ctx))
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go l.WatchBundle(wctx, 0)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	o := proxy.StdioOptions{Engine: l.Engine, Command: rest[0], Args: rest[1:], Server: p.Server,
		Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Signals: sigs, Logger: log,
		MaxBatch: cfg.Config.Limits.BatchElements, Principal: authn.LocalPrincipal()}
	if l.Pinner != nil {
		o.Tools = l.Pinner
	}
	// The child outlives a cancelled ctx only for its grace period; signals reach it directly.
	code, err := proxy.RunStdio(context.WithoutCancel(ctx), o)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return exitCode(exitFail)
	}
	return exitCode(code)
}

type proxyPinsCmd struct {
	localFlags `embed:""`
	Server     string `arg:"" help:"Upstream name."`
}

func (p *proxyPinsCmd) Run(env *cliEnv) error {
	pins, err := openPins(env, &p.localFlags)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string]any{"pins": pins.Pins(p.Server), "pending": pins.Pending(p.Server)})
	return nil
}

type proxyApproveCmd struct {
	localFlags `embed:""`
	Server     string `arg:"" help:"Upstream name."`
	Tool       string `arg:"" help:"Tool whose new definition to accept."`
}

func (p *proxyApproveCmd) Run(env *cliEnv) error {
	pins, err := openPins(env, &p.localFlags)
	if err != nil {
		return err
	}
	if err := pins.Approve(p.Server, p.Tool); err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy approve:", err)
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stdout, "approved the new definition of %s/%s\n", p.Server, p.Tool)
	return nil
}

// openPins opens the pin store under the data dir the flags name.
func openPins(env *cliEnv, lf *localFlags) (*pin.Pinner, error) {
	cfg, log, err := lf.load(env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return nil, exitCode(exitUsage)
	}
	p, err := pin.New(pin.Options{Dir: filepath.Join(cfg.WithDefaults().DataDir, "pins"), Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy:", err)
		return nil, exitCode(exitFail)
	}
	return p, nil
}
