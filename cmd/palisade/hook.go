package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/enginesock"
	"github.com/added060/palisade/host/infer"

	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/proxy"
	"github.com/added060/palisade/sdk/go/abi"
)

func init() {
	register(command{name: "hook", summary: "Claude Code PreToolUse hook (stdin JSON → decision); hook install writes it into settings", cmd: &hookCmd{}})
}

// hookCmd is `palisade hook`: by default it decides one call read from stdin.
type hookCmd struct {
	Decide  hookDecideCmd  `cmd:"" default:"withargs" help:"Read a PreToolUse event on stdin and print the decision (the default)."`
	Install hookInstallCmd `cmd:"" help:"Add palisade hook as a PreToolUse hook to Claude Code's settings (keeps a .bak; idempotent)."`
	Serve   hookServeCmd   `cmd:"" hidden:"" help:"The background hook engine a hook starts (see hookd.go)."`
}

type hookDecideCmd struct {
	localFlags   `embed:""`
	Gateway      string `help:"Delegate to a running gateway at this URL; falls back to deciding in process." env:"PALISADE_GATEWAY" placeholder:"URL"`
	GatewayToken string `help:"Bearer token for the gateway's hook endpoint." env:"PALISADE_HOOK_TOKEN"`
	EngineSocket string `name:"engine-socket" default:"/run/palisade/engine.sock" help:"Ask the engine process (palisade serve --socket) on this Unix socket when it is there; its folder must belong to the engine's user and be writable by nobody else, and the answering process must run as that user. \"\" = never." env:"PALISADE_ENGINE_SOCKET" placeholder:"PATH"`
	Engine       string `default:"on" help:"on: decide through a background engine kept per user and config (started on first use; in process until it is up); off: always in process." env:"PALISADE_HOOK_ENGINE"`
	Timing       bool   `help:"Print the decision time on stderr."`
}

func (h *hookDecideCmd) Run(ctx context.Context, env *cliEnv) error {
	start := time.Now()
	raw, err := io.ReadAll(io.LimitReader(env.Stdin, 8<<20))
	if err != nil {
		return hookBlock(env, "reading stdin: "+err.Error())
	}
	// Invalid input blocks the call (exit 2, the reason on stderr): exit 1 would be a
	// non-blocking error, and Claude Code would run the call unjudged.
	in, err := engine.ParseHookInput(raw)
	if err != nil {
		return hookBlock(env, err.Error())
	}
	var startEngine func()
	out, how, err := decideHook(ctx, env, &h.localFlags, in, raw, h.Gateway, h.GatewayToken, h.EngineSocket, h.Engine != "off", &startEngine)
	if startEngine != nil {
		defer startEngine() // after the answer is out: the engine's build would slow this one
	}
	if err != nil {
		// Palisade could not judge a valid call: a person decides, never a silent allow.
		out = engine.HookAnswer(abi.ActionAsk, "Palisade could not judge this call: "+err.Error())
		fmt.Fprintln(env.Stderr, "palisade hook:", err)
		how = strings.TrimSuffix("error; "+how, "; ")
	}
	// No decision prints nothing: Claude Code's own permission flow applies.
	if out.HookSpecificOutput != nil {
		b, err := json.Marshal(out)
		if err != nil {
			return hookBlock(env, "encoding the answer: "+err.Error())
		}
		fmt.Fprintln(env.Stdout, string(b))
	}
	if h.Timing {
		d := out.Decision()
		if d == "" {
			d = "no decision"
		}
		fmt.Fprintf(env.Stderr, "palisade hook: %s in %s (%s)\n", d, time.Since(start).Round(time.Microsecond), how)
	}
	return nil
}

// hookBlock blocks the tool call: Claude Code reads exit 2 as "deny" and shows stderr to the
// model as the reason.
func hookBlock(env *cliEnv, reason string) error {
	fmt.Fprintln(env.Stderr, "palisade hook: blocked:", reason)
	return exitCode(exitHookBlock)
}

// exitHookBlock is the exit status Claude Code reads as a blocking error (the call is denied).
const exitHookBlock = 2

func decideHook(ctx context.Context, env *cliEnv, lf *localFlags, in *engine.HookInput, raw []byte, gw, token, sock string, useEngine bool, startEngine *func()) (engine.HookOutput, string, error) {
	if sock != "" {
		if _, err := os.Lstat(sock); err == nil {
			out, err := decideViaSocket(ctx, env, sock, raw)
			if err == nil {
				return out, "engine socket", nil
			}
			if !errors.Is(err, proxy.ErrGatewayUnreachable) {
				return engine.HookOutput{}, "", err
			}
			fmt.Fprintln(env.Stderr, "palisade hook: engine socket not used, deciding here:", err)
		}
	}
	if gw != "" {
		out, err := proxy.HookClient{URL: gw, Token: token}.Decide(ctx, raw)
		if err == nil {
			return out, "gateway", nil
		}
		if !errors.Is(err, proxy.ErrGatewayUnreachable) {
			return engine.HookOutput{}, "", err
		}
		fmt.Fprintln(env.Stderr, "palisade hook: gateway unreachable, deciding in process:", err)
	}
	if lf.LogLevel == "" { // neither --log-level nor PALISADE_LOG_LEVEL
		lf.LogLevel = "error" // once per tool call: spooling notices would be noise
	}
	cfg, log, err := lf.load(env)
	if err != nil {
		return engine.HookOutput{}, "", err
	}
	how := "in process"
	if useEngine && hookEngineSupported && env.Exe != "" && cfg.Bundle != "" {
		out, err := decideViaEngine(ctx, env, lf, cfg, raw, startEngine)
		if err == nil {
			return out, "engine", nil
		}
		how = "in process; " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	var self []string
	if dir, err := hookSocketFolder(env); err == nil {
		self = append(self, dir)
	}
	stop := sayWhileSlow(env.Stderr, slowStart, "palisade hook: still starting: the first use compiles the bundle's plugins into the cache (about 15 s on 2 cores); later calls take milliseconds")
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: cfg.Config, Sections: cfg.Sections, Name: "hook", Pinning: true, OneCall: true, Logger: log,
		SelfPaths: self})
	stop()
	if err != nil {
		return engine.HookOutput{}, how, err
	}
	defer l.Close(context.WithoutCancel(ctx))
	in.Principal = authn.LocalPrincipal() // decided in this process: its user is who calls
	out, err := l.Engine.Hook(ctx, in)
	return out, how, err
}

// decideViaSocket asks the engine process on its socket (host/enginesock checks that the
// process answering runs as the user owning the socket's folder). An engine that shares this
// user is used, and said on stderr: an agent running as this user could answer in its place.
func decideViaSocket(ctx context.Context, env *cliEnv, sock string, raw []byte) (engine.HookOutput, error) {
	var shared bool
	hc := enginesock.Client(sock, hookEngineReadTimeout, func(i enginesock.Info) { shared = i.SharedUser })
	out, err := proxy.HookClient{URL: "http://engine", Client: hc, Timeout: hookEngineReadTimeout}.Decide(ctx, raw)
	if err == nil && shared {
		fmt.Fprintln(env.Stderr, "palisade hook: the engine on", sock, "runs as this user: an agent running as this user could answer in its place (palisade install runs it as its own user)")
	}
	return out, err
}

// decideViaEngine asks the background engine for cfg (hookd.go), starting one when none runs.
func decideViaEngine(ctx context.Context, env *cliEnv, lf *localFlags, cfg *gateway.File, raw []byte, start *func()) (engine.HookOutput, error) {
	id, err := hookIdentity(cfg, env.Exe)
	if err != nil {
		return engine.HookOutput{}, err
	}
	dir, err := hookSocketDir(env)
	if err != nil {
		return engine.HookOutput{}, err
	}
	sock, err := hookSocketPath(dir, id)
	if err != nil {
		return engine.HookOutput{}, err
	}
	return hookViaEngine(ctx, env, lf, sock, id, raw, start)
}

// hookInstallCmd adds `palisade hook` as a PreToolUse hook to Claude Code's settings, keeping a
// .bak; running it again changes nothing.
type hookInstallCmd struct {
	User     bool   `help:"Install in ~/.claude/settings.json." xor:"where"`
	Project  bool   `help:"Install in ./.claude/settings.json (the default)." xor:"where"`
	Local    bool   `help:"Install in ./.claude/settings.local.json." xor:"where"`
	Settings string `help:"The settings file to edit (overrides --user/--project/--local)." placeholder:"FILE"`
	Bundle   string `help:"Bundle folder the hook uses (written into the command)." placeholder:"DIR"`
	Gateway  string `help:"Gateway URL the hook delegates to (written into the command)." placeholder:"URL"`
	Config   string `help:"Palisade config file the hook reads (written into the command): its bundle, trust and infer settings." placeholder:"FILE"`
	Matcher  string `default:"*" help:"Tool name matcher."`
	// ONNXRuntime: the library written into the command (default: the one found now).
	ONNXRuntime string `name:"onnxruntime" help:"ONNX Runtime library written into the command (default: the one found now: $$PALISADE_ONNXRUNTIME_LIB, beside the binary, build/ort, /usr/local/lib)." placeholder:"FILE"`
	// TrustKey and AllowUnsigned: the trust policy written into the command (installTrust).
	TrustKey      []string `name:"trust-key" help:"Public key (a .pub file or the key text) the bundle must be signed by; its text is written into the command. Required for a signed --bundle. Repeatable." placeholder:"KEY"`
	AllowUnsigned bool     `name:"allow-unsigned" help:"Install for an unsigned --bundle (writes --allow-unsigned: whoever can write the folder sets the policy)."`
}

// runtimeFor is the ONNX Runtime library to write into an installed hook or wrapped entry:
// the one named, or the one found from here and now (absolute), so that the detector runs
// from whatever directory the client starts palisade in. None found: a warning, and "".
func runtimeFor(env *cliEnv, named, what string) string {
	lib, _, err := infer.FindLibrary(named)
	if err != nil {
		fmt.Fprintf(env.Stderr, "palisade %s: %v: a bundle whose models need ONNX Runtime will be refused there (the linear models tools/train writes run in Go without it; run `make setup-onnxruntime`, or pass --onnxruntime)\n", what, err)
		return ""
	}
	if abs, err := filepath.Abs(lib); err == nil {
		lib = abs
	}
	return lib
}

func (h *hookInstallCmd) Run(env *cliEnv) error {
	if h.Bundle == "" && h.Gateway == "" && h.Config == "" {
		// Without any, the installed hook could only answer ask to every call.
		fmt.Fprintln(env.Stderr, "palisade hook install: say what the hook decides with: --bundle DIR, --gateway URL or --config FILE (without one it would answer ask to every call)")
		return exitCode(exitUsage)
	}
	path := h.Settings
	// The project's settings.json is shared with everyone who clones the project: it must not
	// name paths of this machine only.
	shared := path == "" && !h.User && !h.Local
	if path == "" {
		switch {
		case h.User:
			home, err := os.UserHomeDir()
			if err != nil {
				fmt.Fprintln(env.Stderr, "palisade hook install:", err)
				return exitCode(exitFail)
			}
			path = filepath.Join(home, ".claude", "settings.json")
		case h.Local:
			path = filepath.Join(".claude", "settings.local.json")
		default:
			path = filepath.Join(".claude", "settings.json")
		}
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade hook install:", err)
		return exitCode(exitFail)
	}
	bin := exe
	if shared {
		if bin, err = onPath(exe); err != nil {
			fmt.Fprintf(env.Stderr, "palisade hook install: %v; install with --local (.claude/settings.local.json, yours only) or --user instead\n", err)
			return exitCode(exitUsage)
		}
	}
	cmd := shellQuote(bin) + " hook"
	if h.Config != "" {
		abs, _ := filepath.Abs(h.Config)
		cmd += " --config " + shellQuote(abs)
	}
	bundleDir := ""
	if h.Bundle != "" {
		bundleDir, _ = filepath.Abs(h.Bundle)
		cmd += " --bundle " + shellQuote(bundleDir)
	}
	trust, warn, err := installTrust(bundleDir, h.TrustKey, h.AllowUnsigned)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade hook install:", err)
		return exitCode(exitUsage)
	}
	if warn != "" {
		fmt.Fprintln(env.Stderr, "palisade hook install: warning:", warn)
	}
	for _, a := range trust {
		cmd += " " + shellQuote(a)
	}
	if h.Gateway != "" {
		cmd += " --gateway " + shellQuote(h.Gateway)
	}
	if shared && h.ONNXRuntime == "" {
		// A machine's runtime path does not belong in a shared file: palisade finds the
		// runtime beside itself (DIR/ort, DIR/../lib) or through PALISADE_ONNXRUNTIME_LIB.
		fmt.Fprintln(env.Stderr, "palisade hook install: the shared settings name no ONNX Runtime: each machine needs it beside palisade (DIR/ort/ or DIR/../lib/) or in PALISADE_ONNXRUNTIME_LIB")
	} else if lib := runtimeFor(env, h.ONNXRuntime, "hook install"); lib != "" {
		cmd += " --onnxruntime " + shellQuote(lib)
	}
	changed, err := installHook(path, h.Matcher, cmd)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade hook install:", err)
		return exitCode(exitFail)
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "already installed in %s\n", path)
		return nil
	}
	fmt.Fprintf(env.Stdout, "installed PreToolUse hook %q in %s\n", cmd, path)
	return nil
}

// slowStart is how long a start may take before sayWhileSlow says why it takes longer.
var slowStart = 2 * time.Second

// sayWhileSlow prints msg to w if the returned stop is not called within after: a start that
// compiles plugins is told to the person waiting, not left silent.
func sayWhileSlow(w io.Writer, after time.Duration, msg string) (stop func()) {
	var mu sync.Mutex
	stopped := false
	t := time.AfterFunc(after, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			fmt.Fprintln(w, msg)
		}
	})
	return func() {
		t.Stop()
		mu.Lock()
		stopped = true // a message being written finishes first; none starts after
		mu.Unlock()
	}
}

// onPath returns "palisade" when that name on PATH is exe itself: the command a shared settings
// file can carry. Otherwise it says why exe cannot be named there.
func onPath(exe string) (string, error) {
	found, err := exec.LookPath("palisade")
	if err != nil {
		return "", fmt.Errorf("palisade is not on PATH, and the project's shared .claude/settings.json would name %s, a path on this machine only", exe)
	}
	a, errA := filepath.EvalSymlinks(found)
	b, errB := filepath.EvalSymlinks(exe)
	if errA != nil || errB != nil || a != b {
		return "", fmt.Errorf("palisade on PATH is %s, not this binary (%s)", found, exe)
	}
	return "palisade", nil
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
