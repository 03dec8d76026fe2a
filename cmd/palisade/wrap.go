package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/added060/palisade/host/wrap"
)

func init() {
	register(command{name: "wrap", summary: "rewrite an MCP server entry (Claude Desktop, Cursor, Claude Code) to run through palisade proxy", run: runWrapCmd(false)})
	register(command{name: "unwrap", summary: "restore an MCP server entry that palisade wrap rewrote", run: runWrapCmd(true)})
}

func runWrapCmd(unwrap bool) func(context.Context, *cliEnv, []string) int {
	name := "wrap"
	if unwrap {
		name = "unwrap"
	}
	return func(_ context.Context, env *cliEnv, args []string) int {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(env.Stderr)
		fs.Usage = func() {
			fmt.Fprintf(env.Stderr, "usage: palisade %s [--config FILE] SERVER\n\nflags:\n", name)
			fs.PrintDefaults()
		}
		cfgFile := fs.String("config", "", "the MCP client config to edit (default: search Claude Desktop, Cursor and Claude Code configs)")
		palisade := fs.String("palisade", "", "palisade binary written into the entry (default: this executable)")
		bundle := fs.String("bundle", "", "wrap: bundle folder the proxy uses (written into the entry)")
		dataDir := fs.String("data-dir", "", "wrap: data dir the proxy uses (written into the entry)")
		// Flags may come before or after SERVER.
		var pos []string
		for rest := args; ; {
			if err := fs.Parse(rest); err != nil {
				return exitUsage
			}
			if fs.NArg() == 0 {
				break
			}
			pos = append(pos, fs.Arg(0))
			rest = fs.Args()[1:]
		}
		if len(pos) != 1 {
			fs.Usage()
			return exitUsage
		}
		o := wrap.Options{Server: pos[0], Config: *cfgFile, Palisade: *palisade}
		for _, f := range []struct{ flag, v string }{{"--bundle", *bundle}, {"--data-dir", *dataDir}} {
			if f.v != "" {
				abs, _ := filepath.Abs(f.v)
				o.ProxyArgs = append(o.ProxyArgs, f.flag, abs)
			}
		}
		var res wrap.Result
		var err error
		if unwrap {
			res, err = wrap.Unwrap(o)
		} else {
			res, err = wrap.Wrap(o)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "palisade %s: %v\n", name, err)
			return exitFail
		}
		fmt.Fprintf(env.Stdout, "%sped %s in %s (backup %s); restart the client to apply\n", name, res.Where, res.File, res.Backup)
		return exitOK
	}
}
