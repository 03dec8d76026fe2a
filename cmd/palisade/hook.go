package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/proxy"
	"github.com/added060/palisade/sdk/go/abi"
)

func init() {
	register(command{name: "hook", summary: "Claude Code PreToolUse hook (stdin JSON → decision); hook install writes it into settings", run: runHook})
}

func runHook(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) > 0 && args[0] == "install" {
		return runHookInstall(env, args[1:])
	}
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	lf := addLocalFlags(fs)
	gw := fs.String("gateway", envOr(env, "PALISADE_GATEWAY", ""), "delegate to a running gateway at this URL (env PALISADE_GATEWAY); falls back to deciding in process")
	gwToken := fs.String("gateway-token", envOr(env, "PALISADE_HOOK_TOKEN", ""), "bearer token for the gateway's hook endpoint (env PALISADE_HOOK_TOKEN)")
	timing := fs.Bool("timing", false, "print the decision time on stderr")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	start := time.Now()
	raw, err := io.ReadAll(io.LimitReader(env.Stdin, 8<<20))
	if err != nil {
		return hookBlock(env, "reading stdin: "+err.Error())
	}
	// Invalid input blocks the call (exit 2, the reason on stderr): exit 1 would be a
	// non-blocking error, and Claude Code would run the call unjudged.
	in, err := proxy.ParseHookInput(raw)
	if err != nil {
		return hookBlock(env, err.Error())
	}
	out, how, err := decideHook(ctx, env, lf, in, raw, *gw, *gwToken)
	if err != nil {
		// Palisade could not judge a valid call: a person decides, never a silent allow.
		out = proxy.HookAnswer(abi.ActionAsk, "Palisade could not judge this call: "+err.Error())
		fmt.Fprintln(env.Stderr, "palisade hook:", err)
		how = "error"
	}
	// No decision prints nothing: Claude Code's own permission flow applies.
	if out.HookSpecificOutput != nil {
		b, err := json.Marshal(out)
		if err != nil {
			return hookBlock(env, "encoding the answer: "+err.Error())
		}
		fmt.Fprintln(env.Stdout, string(b))
	}
	if *timing {
		d := out.Decision()
		if d == "" {
			d = "no decision"
		}
		fmt.Fprintf(env.Stderr, "palisade hook: %s in %s (%s)\n", d, time.Since(start).Round(time.Microsecond), how)
	}
	return exitOK
}

// hookBlock blocks the tool call: Claude Code reads exit 2 as "deny" and shows stderr to the
// model as the reason.
func hookBlock(env *cliEnv, reason string) int {
	fmt.Fprintln(env.Stderr, "palisade hook: blocked:", reason)
	return exitHookBlock
}

// exitHookBlock is the exit status Claude Code reads as a blocking error (the call is denied).
const exitHookBlock = 2

func decideHook(ctx context.Context, env *cliEnv, lf *localFlags, in *proxy.HookInput, raw []byte, gw, token string) (proxy.HookOutput, string, error) {
	if gw != "" {
		out, err := proxy.HookClient{URL: gw, Token: token}.Decide(ctx, raw)
		if err == nil {
			return out, "gateway", nil
		}
		if !errors.Is(err, proxy.ErrGatewayUnreachable) {
			return proxy.HookOutput{}, "", err
		}
		fmt.Fprintln(env.Stderr, "palisade hook: gateway unreachable, deciding in process:", err)
	}
	if *lf.logLevel == "" && env.Getenv("PALISADE_LOG_LEVEL") == "" {
		*lf.logLevel = "error" // once per tool call: spooling notices would be noise
	}
	cfg, log, err := lf.load(env)
	if err != nil {
		return proxy.HookOutput{}, "", err
	}
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: cfg, Name: "hook", Pinning: true, OneCall: true, Logger: log})
	if err != nil {
		return proxy.HookOutput{}, "", err
	}
	defer l.Close(context.WithoutCancel(ctx))
	out, err := l.Engine.Hook(ctx, in)
	return out, "in process", err
}

// runHookInstall adds `palisade hook` as a PreToolUse hook to Claude Code's settings, keeping a
// .bak; running it again changes nothing.
func runHookInstall(env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("hook install", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	user := fs.Bool("user", false, "install in ~/.claude/settings.json")
	project := fs.Bool("project", false, "install in ./.claude/settings.json (the default)")
	local := fs.Bool("local", false, "install in ./.claude/settings.local.json")
	settings := fs.String("settings", "", "the settings file to edit (overrides --user/--project/--local)")
	bundle := fs.String("bundle", "", "bundle folder the hook uses (written into the command)")
	gw := fs.String("gateway", "", "gateway URL the hook delegates to (written into the command)")
	matcher := fs.String("matcher", "*", "tool name matcher")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if n := btoi(*user) + btoi(*project) + btoi(*local); n > 1 {
		fmt.Fprintln(env.Stderr, "palisade hook install: choose one of --user, --project, --local")
		return exitUsage
	}
	path := *settings
	if path == "" {
		switch {
		case *user:
			home, err := os.UserHomeDir()
			if err != nil {
				fmt.Fprintln(env.Stderr, "palisade hook install:", err)
				return exitFail
			}
			path = filepath.Join(home, ".claude", "settings.json")
		case *local:
			path = filepath.Join(".claude", "settings.local.json")
		default:
			path = filepath.Join(".claude", "settings.json")
		}
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade hook install:", err)
		return exitFail
	}
	cmd := shellQuote(exe) + " hook"
	if *bundle != "" {
		abs, _ := filepath.Abs(*bundle)
		cmd += " --bundle " + shellQuote(abs)
	}
	if *gw != "" {
		cmd += " --gateway " + shellQuote(*gw)
	}
	if *bundle == "" && *gw == "" {
		fmt.Fprintln(env.Stderr, "palisade hook install: no --bundle or --gateway: the hook will need PALISADE_BUNDLE (or PALISADE_CONFIG) in Claude Code's environment, or it answers ask")
	}
	changed, err := installHook(path, *matcher, cmd)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade hook install:", err)
		return exitFail
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "already installed in %s\n", path)
		return exitOK
	}
	fmt.Fprintf(env.Stdout, "installed PreToolUse hook %q in %s\n", cmd, path)
	return exitOK
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// installHook edits the settings file: hooks.PreToolUse gets {matcher, hooks: [{type: command,
// command, timeout}]}, unless an entry already runs `palisade ... hook` (then it is updated in
// place only if its command differs). It reports whether it wrote.
func installHook(path, matcher, command string) (bool, error) {
	var settings map[string]any
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		settings = map[string]any{}
	case err != nil:
		return false, err
	default:
		if len(bytes.TrimSpace(old)) == 0 {
			settings = map[string]any{}
		} else if err := json.Unmarshal(old, &settings); err != nil {
			return false, fmt.Errorf("%s is not valid JSON (not touched): %w", path, err)
		}
	}
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		if _, ok := settings["hooks"]; ok {
			return false, fmt.Errorf("%s: hooks is not an object (not touched)", path)
		}
		hooks = map[string]any{}
	}
	pre, _ := hooks["PreToolUse"].([]any)
	entry := map[string]any{"type": "command", "command": command, "timeout": 30}
	for _, g := range pre {
		gm, _ := g.(map[string]any)
		hs, _ := gm["hooks"].([]any)
		for i, h := range hs {
			hm, _ := h.(map[string]any)
			c, _ := hm["command"].(string)
			if isPalisadeHook(c) {
				if c == command && gm["matcher"] == matcher {
					return false, nil
				}
				hs[i] = entry
				gm["matcher"] = matcher
				return true, writeSettings(path, old, settings)
			}
		}
	}
	pre = append(pre, map[string]any{"matcher": matcher, "hooks": []any{entry}})
	hooks["PreToolUse"] = pre
	settings["hooks"] = hooks
	return true, writeSettings(path, old, settings)
}

func isPalisadeHook(cmd string) bool {
	f := strings.Fields(cmd)
	return len(f) >= 2 && strings.Contains(filepath.Base(strings.Trim(f[0], `'"`)), "palisade") && f[1] == "hook"
}

func writeSettings(path string, old []byte, settings map[string]any) error {
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if !json.Valid(b) {
		return errors.New("internal: settings would not be valid JSON")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if old != nil {
		if err := os.WriteFile(path+".bak", old, 0o600); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	tmp := path + ".palisade.tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
