// Command palisade is the Palisade policy gateway for AI-agent tool calls. One binary, many modes:
// serve (HTTP gateway), proxy (stdio), hook (Claude Code), mcp (own MCP server), bundle, keys,
// audit, policy, plugin, approvals, doctor. `palisade --help` lists them.
//
// Flags, their environment variables, subcommands and --help come from
// github.com/alecthomas/kong: each command is a struct whose field tags name the flag, its
// default and its PALISADE_* variable in one place, and whose Run method does the work.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"regexp"
	"strings"
	"syscall"

	"github.com/added060/palisade/host/approval"
	"github.com/added060/palisade/host/bundle"
	"github.com/added060/palisade/host/scaffold"
	"github.com/added060/palisade/host/version"
	"github.com/alecthomas/kong"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	exe, _ := os.Executable()
	code := run(ctx, os.Args[1:], &cliEnv{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Exe: exe})
	stop()
	os.Exit(code)
}

// cliEnv is what a command may touch, so tests can drive run. Getenv also feeds every flag's
// `env:"PALISADE_..."` binding (see envResolver).
type cliEnv struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Username is the account's name when $USER is unset (approvals --by); nil = os/user.
	Username func() string
	// Exe is this binary, for the background hook engine a hook starts; "" (tests driving
	// run) = the hook never uses one.
	Exe string
}

// command is one `palisade <name>` command: cmd is a kong command struct (flags, args, nested
// `cmd:""` subcommands) with a `Run(ctx context.Context, env *cliEnv) error` method.
type command struct {
	name    string
	summary string
	cmd     any
}

var (
	commands []command
	seen     = map[string]bool{}
)

// register adds a command; it panics on a duplicate.
func register(c command) {
	if seen[c.name] {
		panic("palisade: command registered twice: " + c.name)
	}
	seen[c.name] = true
	commands = append(commands, c)
}

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// exitCode is the error a Run method returns to end with a status other than 0; whatever the
// user should read has been printed already.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// exitPanic carries kong's Exit (after --help, or a parse error it reports itself) out of
// Parse without ending the process, so tests can drive run.
type exitPanic struct{ code int }

// root is the kong model's root: the commands are added with kong.DynamicCommand.
type root struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
}

// newParser builds the kong parser for every registered command, writing to env.
func newParser(env *cliEnv, exit func(int)) (*kong.Kong, error) {
	opts := []kong.Option{
		kong.Name("palisade"),
		kong.Description("Palisade: a policy gateway for AI-agent tool calls. Exit codes: 0 ok, 1 failure, 2 usage."),
		kong.Writers(env.Stdout, env.Stderr),
		kong.Exit(exit),
		kong.Resolvers(envResolver(env.Getenv)),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.TypeMapper(reflect.TypeOf(""), negativeNumbers(reflect.TypeOf(""))),
		kong.TypeMapper(reflect.TypeOf(0), negativeNumbers(reflect.TypeOf(0))),
		kong.Vars{
			"bundle_bucket": bundle.DefaultBucket, "bundle_object": bundle.DefaultObject,
			"approvals_bucket": approval.DefaultBucket, "approvals_scope": approval.ScopeOnce,
			"plugin_langs": strings.Join(scaffold.Langs, ", "),
			"version":      version.String(),
		},
	}
	for _, c := range commands {
		opts = append(opts, kong.DynamicCommand(c.name, c.summary, "", c.cmd))
	}
	return kong.New(&root{}, opts...)
}

func run(ctx context.Context, args []string, env *cliEnv) (code int) {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if len(args) > 0 && args[0] == "help" { // `palisade help [COMMAND...]`
		args = append(args[1:len(args):len(args)], "--help")
	}
	bare := len(args) == 0 // prints the command list and exits 2
	if bare {
		args = []string{"--help"}
	}
	k, err := newParser(env, func(c int) { panic(exitPanic{c}) })
	if err != nil {
		panic("palisade: CLI model: " + err.Error())
	}
	defer func() {
		if r := recover(); r != nil {
			p, ok := r.(exitPanic)
			if !ok {
				panic(r)
			}
			code = p.code
			if bare {
				code = exitUsage
			}
		}
	}()
	kctx, err := k.Parse(args)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade:", err)
		var pe *kong.ParseError
		if errors.As(err, &pe) && pe.Context != nil {
			fmt.Fprintln(env.Stderr)
			k.Stdout = env.Stderr // usage after an error goes with the error
			_ = pe.Context.PrintUsage(true)
		}
		return exitUsage
	}
	kctx.BindTo(ctx, (*context.Context)(nil))
	if err := kctx.Run(env); err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			return int(ec)
		}
		fmt.Fprintf(env.Stderr, "palisade %s: %v\n", kctx.Command(), err)
		return exitFail
	}
	return exitOK
}

// negativeNumber is a flag value kong would otherwise read as a short flag ("-1").
var negativeNumber = regexp.MustCompile(`^-[0-9]+(\.[0-9]+)?$`)

// negativeNumbers wraps kong's default mapper for typ so that a flag takes a negative number
// as its value: `--nats-port -1` (a random port, as the help says), not a short flag `-1`. Any
// other value starting with "-" is still refused, so a flag never swallows the next flag.
func negativeNumbers(typ reflect.Type) kong.Mapper {
	next := kong.NewRegistry().RegisterDefaults().ForType(typ)
	return kong.MapperFunc(func(ctx *kong.DecodeContext, target reflect.Value) error {
		if t := ctx.Scan.Peek(); ctx.Value.Flag != nil && t.Type == kong.UntypedToken && negativeNumber.MatchString(t.String()) {
			ctx.Scan.Pop()
			ctx.Scan.PushTyped(t.Value, kong.FlagValueToken)
		}
		return next.Decode(ctx, target)
	})
}

// envResolver binds each flag's `env:"NAME"` to env.Getenv, not the process environment, so
// tests decide what a command sees. A set, non-blank variable wins over the flag's default; a
// flag given on the command line wins over both. Every env-bound flag is a string.
func envResolver(getenv func(string) string) kong.Resolver {
	return kong.ResolverFunc(func(_ *kong.Context, _ *kong.Path, f *kong.Flag) (any, error) {
		if len(f.Envs) == 0 {
			return nil, nil
		}
		for _, name := range f.Envs {
			if v := strings.TrimSpace(getenv(name)); v != "" {
				return v, nil
			}
		}
		// kong itself read the process environment into the flag: undo that when Getenv
		// says the variable is unset.
		return f.Default, nil
	})
}

// envOr returns the environment variable or def.
func envOr(env *cliEnv, key, def string) string {
	if v := strings.TrimSpace(env.Getenv(key)); v != "" {
		return v
	}
	return def
}
