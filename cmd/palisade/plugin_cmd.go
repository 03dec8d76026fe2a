package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/added060/palisade/host/conformance"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/host/scaffold"
)

func init() {
	register(command{name: "plugin", summary: "plugin authoring: `plugin new --lang L NAME`, `plugin test PLUGIN.wasm`", cmd: &pluginCmd{}})
}

type pluginCmd struct {
	New  pluginNewCmd  `cmd:"" help:"Scaffold a plugin project (source, fixtures, Makefile) in DIR."`
	Test pluginTestCmd `cmd:"" help:"Run the conformance checks and fixtures on a built plugin."`
}

type pluginNewCmd struct {
	Lang string `default:"go" help:"Language: ${plugin_langs}."`
	Dir  string `help:"Where to write the project (default ./NAME)." placeholder:"DIR"`
	Name string `arg:"" help:"Plugin name."`
}

func (p *pluginNewCmd) Run(env *cliEnv) error {
	lang, dir := &p.Lang, &p.Dir
	pos := []string{p.Name}
	name := pos[0]
	if *dir == "" {
		*dir = name
	}
	if err := scaffold.New(*lang, name, *dir); err != nil {
		fmt.Fprintln(env.Stderr, "palisade plugin new:", err)
		if errors.Is(err, scaffold.ErrLang) || errors.Is(err, scaffold.ErrName) {
			return exitCode(exitUsage)
		}
		return exitCode(exitFail)
	}
	fmt.Fprintf(env.Stdout, "created %s (%s) in %s\nnext: cd %s && make build test && palisade plugin test build/%s.wasm --fixtures testdata/fixtures --config testdata/config.json\n",
		name, *lang, *dir, *dir, name)
	return nil
}

type pluginTestCmd struct {
	Fixtures string        `help:"Folder of *.json fixtures ({envelope|method+params, expected})." placeholder:"DIR"`
	Config   string        `help:"Stage config JSON file, given to the plugin as config key \"config\"." placeholder:"FILE"`
	JSON     bool          `name:"json" help:"Print the report as JSON."`
	Timeout  time.Duration `default:"2s" help:"Per-call limit."`
	Wasm     string        `arg:"" help:"The plugin's .wasm file." placeholder:"PLUGIN.wasm"`
}

func (p *pluginTestCmd) Run(ctx context.Context, env *cliEnv) error {
	fixtures, cfgFile, asJSON, timeout := &p.Fixtures, &p.Config, &p.JSON, &p.Timeout
	pos := []string{p.Wasm}
	wasm, err := os.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade plugin test:", err)
		return exitCode(exitFail)
	}
	o := conformance.Options{Fixtures: *fixtures, Timeout: *timeout}
	if *cfgFile != "" {
		b, err := os.ReadFile(*cfgFile)
		if err != nil {
			fmt.Fprintln(env.Stderr, "palisade plugin test:", err)
			return exitCode(exitFail)
		}
		if !json.Valid(b) {
			fmt.Fprintf(env.Stderr, "palisade plugin test: %s is not JSON\n", *cfgFile)
			return exitCode(exitUsage)
		}
		o.Config = map[string]string{"config": string(b)}
	}
	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade plugin test:", err)
		return exitCode(exitFail)
	}
	defer rt.Close(context.WithoutCancel(ctx))
	rep, err := conformance.Check(ctx, rt, wasm, o)
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade plugin test %s: %v\n", filepath.Base(pos[0]), err)
		return exitCode(exitFail)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		rep.WriteText(env.Stdout)
	}
	if !rep.Passed() {
		return exitCode(exitFail)
	}
	return nil
}
