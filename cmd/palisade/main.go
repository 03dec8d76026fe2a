// Command palisade is the Palisade policy gateway for AI-agent tool calls. One binary, many modes:
// serve (HTTP gateway), proxy (stdio), hook (Claude Code), mcp (own MCP server), bundle, keys,
// audit, policy, plugin, approvals, doctor. `palisade help` lists them.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &cliEnv{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// cliEnv is what a command may touch, so tests can drive run.
type cliEnv struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// command is one `palisade <name>` command.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) int
}

var commands = map[string]command{}

// register adds a command; it panics on a duplicate.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("palisade: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func run(ctx context.Context, args []string, env *cliEnv) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "palisade: unknown command %q\n\n", args[0])
		usage(env.Stderr)
		return exitUsage
	}
	return c.run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: palisade <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'palisade <command> -h' for a command's flags.")
}

// envOr returns the environment variable or def.
func envOr(env *cliEnv, key, def string) string {
	if v := strings.TrimSpace(env.Getenv(key)); v != "" {
		return v
	}
	return def
}
