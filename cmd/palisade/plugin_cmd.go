package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/added060/palisade/host/conformance"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/host/scaffold"
)

func init() {
	register(command{name: "plugin", summary: "plugin authoring: `plugin new --lang L NAME`, `plugin test PLUGIN.wasm`", run: runPlugin})
}

func runPlugin(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "new":
			return runPluginNew(env, args[1:])
		case "test":
			return runPluginTest(ctx, env, args[1:])
		}
	}
	fmt.Fprintln(env.Stderr, "usage: palisade plugin new --lang go|rust|c|assemblyscript [--dir DIR] NAME\n       palisade plugin test [--fixtures DIR] [--config FILE] [--json] PLUGIN.wasm")
	return exitUsage
}

// parseInterspersed parses flags that may come before or after the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runPluginNew(env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("plugin new", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	lang := fs.String("lang", "go", "language: "+strings.Join(scaffold.Langs, ", "))
	dir := fs.String("dir", "", "where to write the project (default ./NAME)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(env.Stderr, "usage: palisade plugin new --lang go|rust|c|assemblyscript [--dir DIR] NAME")
		return exitUsage
	}
	name := pos[0]
	if *dir == "" {
		*dir = name
	}
	if err := scaffold.New(*lang, name, *dir); err != nil {
		fmt.Fprintln(env.Stderr, "palisade plugin new:", err)
		if errors.Is(err, scaffold.ErrLang) || errors.Is(err, scaffold.ErrName) {
			return exitUsage
		}
		return exitFail
	}
	fmt.Fprintf(env.Stdout, "created %s (%s) in %s\nnext: cd %s && make build test && palisade plugin test build/%s.wasm --fixtures testdata/fixtures --config testdata/config.json\n",
		name, *lang, *dir, *dir, name)
	return exitOK
}

func runPluginTest(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("plugin test", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fixtures := fs.String("fixtures", "", "folder of *.json fixtures ({envelope|method+params, expected})")
	cfgFile := fs.String("config", "", "stage config JSON file, given to the plugin as config key \"config\"")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	timeout := fs.Duration("timeout", 2*time.Second, "per-call limit")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(env.Stderr, "usage: palisade plugin test [--fixtures DIR] [--config FILE] [--json] PLUGIN.wasm")
		return exitUsage
	}
	wasm, err := os.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade plugin test:", err)
		return exitFail
	}
	o := conformance.Options{Fixtures: *fixtures, Timeout: *timeout}
	if *cfgFile != "" {
		b, err := os.ReadFile(*cfgFile)
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade plugin test:", err)
			return exitFail
		}
		if !json.Valid(b) {
			fmt.Fprintf(env.Stderr, "palisade plugin test: %s is not JSON\n", *cfgFile)
			return exitUsage
		}
		o.Config = map[string]string{"config": string(b)}
	}
	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade plugin test:", err)
		return exitFail
	}
	defer rt.Close(context.WithoutCancel(ctx))
	rep, err := conformance.Check(ctx, rt, wasm, o)
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade plugin test %s: %v\n", filepath.Base(pos[0]), err)
		return exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		rep.WriteText(env.Stdout)
	}
	if !rep.Passed() {
		return exitFail
	}
	return exitOK
}
