package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/added060/palisade/host/policytest"
)

func init() {
	register(command{name: "policy", summary: "policy CI: palisade policy test --bundle DIR --fixture-dir DIR", run: runPolicy})
}

// fixtureFlags collects repeated --fixture flags.
type fixtureFlags []string

func (m *fixtureFlags) String() string     { return strings.Join(*m, ",") }
func (m *fixtureFlags) Set(v string) error { *m = append(*m, v); return nil }

func runPolicy(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprintln(env.Stderr, "usage: palisade policy test --bundle DIR (--fixture FILE ... | --fixture-dir DIR) [--expect ACTION] [--format text|json]")
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
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintln(env.Stderr, "palisade policy test: --format must be text or json")
		return exitUsage
	}
	o := policytest.Options{Bundle: *bundle, Fixtures: fixtures, FixtureDir: *dir, Expect: *expect}
	if *dataDir != "" {
		o.CacheDir = filepath.Join(*dataDir, "cache")
	}
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
