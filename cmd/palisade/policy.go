package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	bundlepkg "github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/policytest"
)

func init() {
	register(command{name: "policy", summary: "policy CI: palisade policy test --bundle DIR [--fixture-dir DIR] (default: the bundle's fixtures)", run: runPolicy})
}

// fixtureFlags collects repeated --fixture flags.
type fixtureFlags []string

func (m *fixtureFlags) String() string     { return strings.Join(*m, ",") }
func (m *fixtureFlags) Set(v string) error { *m = append(*m, v); return nil }

func runPolicy(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprintln(env.Stderr, "usage: palisade policy test --bundle DIR [--fixture FILE ... | --fixture-dir DIR] [--expect ACTION] [--format text|json]")
		return exitUsage
	}
	fs := flag.NewFlagSet("policy test", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	bundle := fs.String("bundle", envOr(env, "PALISADE_BUNDLE", ""), "bundle folder (env PALISADE_BUNDLE)")
	var fixtures fixtureFlags
	fs.Var(&fixtures, "fixture", "fixture file (an object or an array); repeatable")
	dir := fs.String("fixture-dir", "", "folder of *.json fixtures")
	expect := fs.String("expect", "", "action every fixture without its own expected must reach")
	format := fs.String("format", "text", "text or json (one object per fixture)")
	dataDir := fs.String("data-dir", envOr(env, "PALISADE_DATA_DIR", ""), "compile cache under DIR/cache (default: none)")
	cfgPath := fs.String("config", "", "YAML config file (env PALISADE_CONFIG): bundles (trusted keys), infer and llm sections apply as in every mode")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintln(env.Stderr, "palisade policy test: --format must be text or json")
		return exitUsage
	}
	cfg, err := loadConfig(env, *cfgPath, map[string]string{"bundle": *bundle})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		return exitUsage
	}
	if *dataDir != "" {
		cfg.Plugins.CacheDir = filepath.Join(*dataDir, "cache")
	}
	lvl := cfg.Log.Level
	if lvl == "" {
		lvl = "warn"
	}
	// The same Core as serve, proxy, hook and mcp: models on ONNX Runtime, the llm: judge,
	// and the bundle trust policy.
	core, err := gateway.NewCore(ctx, gateway.CoreOptions{Config: *cfg, MemoryCache: *dataDir == "", Logger: newLogger(env, lvl, cfg.Log.Format)})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		return exitUsage
	}
	defer core.Close(context.WithoutCancel(ctx))
	o := policytest.Options{Bundle: cfg.Bundle, Fixtures: fixtures, FixtureDir: *dir, Expect: *expect,
		Build: func(ctx context.Context, dir string) (*bundlepkg.Bundle, error) { return core.Build(ctx, dir, true) }}
	rs, err := policytest.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		if errors.Is(err, policytest.ErrUsage) {
			fs.Usage()
		}
		return exitUsage
	}
	if *format == "json" {
		err = policytest.WriteJSON(env.Stdout, rs)
	} else {
		err = policytest.WriteText(env.Stdout, rs)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		return exitUsage
	}
	if policytest.Failed(rs) > 0 {
		return exitFail
	}
	return exitOK
}
