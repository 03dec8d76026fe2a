package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	bundlepkg "github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/chain"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/policytest"
	"github.com/added060/palisade/sdk/go/abi"
)

func init() {
	register(command{name: "policy", summary: "policy CI: palisade policy test --bundle DIR [--fixture-dir DIR] (default: the bundle's fixtures)", cmd: &policyCmd{}})
}

type policyCmd struct {
	Test policyTestCmd `cmd:"" help:"Run fixtures (default: the bundle's own) through a bundle built as every mode builds it; exit 1 if one fails."`
}

type policyTestCmd struct {
	Bundle     string   `help:"Bundle folder." env:"PALISADE_BUNDLE" placeholder:"DIR"`
	Fixture    []string `help:"Fixture file (an object or an array); repeatable." placeholder:"FILE" sep:"none"`
	FixtureDir string   `help:"Folder of *.json fixtures." placeholder:"DIR"`
	Expect     string   `help:"Action every fixture without its own expected must reach." placeholder:"ACTION"`
	Format     string   `default:"text" enum:"text,json" help:"text or json (one object per fixture)."`
	DataDir    string   `help:"Compile cache under DIR/cache (default: none)." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
	Config     string   `help:"YAML config file: bundles (trusted keys), infer and llm sections apply as in every mode." env:"PALISADE_CONFIG" placeholder:"FILE"`
}

func (p *policyTestCmd) Run(ctx context.Context, env *cliEnv) error {
	bundle, fixtures, dir, expect, format, dataDir, cfgPath := &p.Bundle, p.Fixture, &p.FixtureDir, &p.Expect, &p.Format, &p.DataDir, &p.Config
	cfg, err := loadConfig(env, *cfgPath, map[string]string{"bundle": *bundle})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		return exitCode(exitUsage)
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
	core, err := gateway.NewCore(ctx, gateway.CoreOptions{Config: cfg.Config, Sections: cfg.Sections, MemoryCache: *dataDir == "", Logger: newLogger(env, lvl, cfg.Log.Format)})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		return exitCode(exitUsage)
	}
	defer core.Close(context.WithoutCancel(ctx))
	o := policytest.Options{Bundle: cfg.Bundle, Fixtures: fixtures, FixtureDir: *dir, Expect: *expect,
		Build: func(ctx context.Context, dir string) (*bundlepkg.Bundle, error) { return core.Build(ctx, dir, true) },
		// The same lifecycle as a call through serve (host/proxy Exchange), without a person.
		Serve: func(ctx context.Context, ch *chain.Chain, env *abi.Envelope) (string, error) {
			active := &chain.Active{}
			active.Swap(ch)
			o, err := engine.NewEngine(core.EngineOptions(active, nil, "policy-test")).Judge(ctx, env)
			if err != nil {
				return "", err
			}
			return o.Action, nil
		}}
	rs, err := policytest.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		if errors.Is(err, policytest.ErrUsage) {
			fmt.Fprintln(env.Stderr, "usage: palisade policy test --bundle DIR [--fixture FILE ... | --fixture-dir DIR] [--expect ACTION] [--format text|json]")
		}
		return exitCode(exitUsage)
	}
	if *format == "json" {
		err = policytest.WriteJSON(env.Stdout, rs)
	} else {
		err = policytest.WriteText(env.Stdout, rs)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade policy test:", err)
		return exitCode(exitUsage)
	}
	if policytest.Failed(rs) > 0 {
		return exitCode(exitFail)
	}
	return nil
}
