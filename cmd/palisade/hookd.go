package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/config"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/gateway"
	"gopkg.in/yaml.v3"
)

// The hook engine: `palisade hook` is a new process per tool call, and building the chain
// (Wasm, ONNX) costs it ~400 ms each time. The first call starts `palisade hook serve` in the
// background and decides in process; later calls send the hook input over a Unix socket to the
// engine, which keeps the bundle built. The socket's name carries a hash of everything the
// answer depends on (the effective config, the bundle folder, this binary), the engine checks
// that identity again on every request, rebuilds when the bundle folder changed (verifying it
// with the same Core as the in-process path), and any trouble sends the hook back to deciding
// in process. Only the same user reaches it: the folder is 0700, the socket 0600, and both ends
// check the other's uid (SO_PEERCRED).

// hookEngineReadTimeout bounds the wait for the engine's answer (a judge call may be slow);
// past it the hook decides in process. Claude Code's hook timeout, as installed, is 30 s.
const hookEngineReadTimeout = 20 * time.Second

// hookServeCmd is `palisade hook serve` (hidden): the background engine a hook starts.
type hookServeCmd struct {
	localFlags `embed:""`
	Socket     string        `required:"" help:"Unix socket to listen on." placeholder:"PATH"`
	Identity   string        `required:"" help:"The identity hook clients expect (refuses to start on another)."`
	Idle       time.Duration `default:"10m" help:"Exit after this long without a request."`
}

// hookRequest and hookResponse are the socket protocol: one request per connection, the
// client half-closes after writing it.
type hookRequest struct {
	Identity string          `json:"identity"`
	Input    json.RawMessage `json:"input"`
}

type hookResponse struct {
	Output *engine.HookOutput `json:"output,omitempty"`
	Error  string             `json:"error,omitempty"`
}

// hookSocketFolder is hookSocketDir's path, without creating it: one of the engine's own
// paths (gateway.SelfPaths) whether or not an engine runs.
func hookSocketFolder(env *cliEnv) (string, error) {
	base := env.Getenv("XDG_RUNTIME_DIR")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "palisade"), nil
}

// hookIdentity is the hash of what a hook answer depends on besides the input: the effective
// config, every section of it (its log settings aside), and this binary (path, size, mtime).
func hookIdentity(f *gateway.File, exe string) (string, error) {
	c := *f
	c.Log = config.Log{}
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(b)
	if exe != "" {
		fi, err := os.Stat(exe)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "\n%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hookSocketDir is $XDG_RUNTIME_DIR/palisade, else ~/.cache/palisade; it must be a folder this
// user owns that nobody else can enter.
func hookSocketDir(env *cliEnv) (string, error) {
	dir, err := hookSocketFolder(env)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := ownedPrivateDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// hookSocketPath is the engine's socket for identity id.
func hookSocketPath(dir, id string) (string, error) {
	p := filepath.Join(dir, "hook-"+id[:24]+".sock")
	if len(p) >= 104 { // sun_path: 108 bytes on Linux, 104 on the BSDs
		return "", fmt.Errorf("socket path %s is too long", p)
	}
	return p, nil
}

// errEngineDown: no engine answered (none running, or one starting); the hook decides in process.
var errEngineDown = errors.New("hook engine not running")

// hookViaEngine asks the engine at sock. When none listens and none is starting, it returns
// errEngineDown at once and sets *start to a func that starts one (detached): the caller calls
// it once it has decided in process, so the two builds do not compete for the CPU.
func hookViaEngine(ctx context.Context, env *cliEnv, lf *localFlags, sock, id string, raw []byte, start *func()) (engine.HookOutput, error) {
	d := net.Dialer{Timeout: 100 * time.Millisecond}
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		if starting(sock) {
			return engine.HookOutput{}, fmt.Errorf("%w (one is starting)", errEngineDown)
		}
		*start = func() {
			if err := startHookEngine(env, lf, sock, id); err != nil {
				fmt.Fprintln(env.Stderr, "palisade hook: starting the hook engine:", err)
			}
		}
		return engine.HookOutput{}, fmt.Errorf("%w (starting one)", errEngineDown)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	if err := samePeer(uc, env.Exe); err != nil { // the engine must run this very binary
		return engine.HookOutput{}, err
	}
	_ = uc.SetDeadline(time.Now().Add(hookEngineReadTimeout))
	req, err := json.Marshal(hookRequest{Identity: id, Input: raw})
	if err != nil {
		return engine.HookOutput{}, err
	}
	if _, err := uc.Write(req); err != nil {
		return engine.HookOutput{}, err
	}
	_ = uc.CloseWrite()
	body, err := io.ReadAll(io.LimitReader(uc, 4<<20))
	if err != nil {
		return engine.HookOutput{}, err
	}
	var resp hookResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return engine.HookOutput{}, fmt.Errorf("engine answered %q: %w", bytes.TrimSpace(body), err)
	}
	if resp.Error != "" || resp.Output == nil {
		return engine.HookOutput{}, fmt.Errorf("engine: %s", resp.Error)
	}
	switch resp.Output.Decision() {
	case "", "allow", "deny", "ask":
	default:
		return engine.HookOutput{}, fmt.Errorf("engine answered decision %q", resp.Output.Decision())
	}
	return *resp.Output, nil
}

// starting reports whether an engine holds the socket's lock (it is starting or running).
func starting(sock string) bool {
	f, err := os.OpenFile(sock+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	return false // closing f releases the lock
}

// startHookEngine starts `palisade hook serve` in its own session, its output appended to a log
// file beside the socket, and does not wait for it.
func startHookEngine(env *cliEnv, lf *localFlags, sock, id string) error {
	args := []string{"hook", "serve", "--socket", sock, "--identity", id}
	for _, f := range []struct{ name, v string }{
		{"--config", lf.Config}, {"--bundle", lf.Bundle}, {"--data-dir", lf.DataDir},
		{"--nats-url", lf.NATSURL}, {"--nats-creds", lf.NATSCreds}, {"--log-level", lf.LogLevel},
	} {
		if f.v == "" {
			continue
		}
		v := f.v
		if f.name == "--config" || f.name == "--bundle" || f.name == "--data-dir" {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		args = append(args, f.name, v)
	}
	// What else the hook's flags put in the config (and so in the identity the engine checks).
	if lf.ONNXRuntime != "" {
		if abs, err := filepath.Abs(lf.ONNXRuntime); err == nil {
			args = append(args, "--onnxruntime", abs)
		}
	}
	for _, k := range trustKeyPaths(lf.TrustKey) {
		args = append(args, "--trust-key", k)
	}
	if lf.AllowUnsigned {
		args = append(args, "--allow-unsigned")
	}
	logf, err := os.OpenFile(sock[:len(sock)-len(".sock")]+".log", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(env.Exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

func (s *hookServeCmd) Run(ctx context.Context, env *cliEnv) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	if err := s.serve(ctx, env); err != nil {
		fmt.Fprintln(env.Stderr, "palisade hook serve:", err)
		return exitCode(exitFail)
	}
	return nil
}

func (s *hookServeCmd) serve(ctx context.Context, env *cliEnv) error {
	if err := ownedPrivateDir(filepath.Dir(s.Socket)); err != nil {
		return err
	}
	lock, err := os.OpenFile(s.Socket+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // another engine has this socket
	}
	cfg, log, err := s.load(env)
	if err != nil {
		return err
	}
	id, err := hookIdentity(cfg, env.Exe)
	if err != nil {
		return err
	}
	if id != s.Identity {
		return fmt.Errorf("identity %s differs from the one the hook expects (%s): config, environment or binary differ", id, s.Identity)
	}
	gateway.TuneRuntime()
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: cfg.Config, Sections: cfg.Sections, Name: "hook", Pinning: true, Logger: log,
		SelfPaths: []string{filepath.Dir(s.Socket)}})
	if err != nil {
		return err
	}
	defer l.Close(context.WithoutCancel(ctx))
	_ = os.Remove(s.Socket) // a dead engine's; we hold the lock
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.Socket, Net: "unix"})
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := os.Chmod(s.Socket, 0o600); err != nil {
		return err
	}
	self, err := os.Stat(s.Socket)
	if err != nil {
		return err
	}
	log.Info("hook engine listening", "socket", s.Socket, "bundle", cfg.Bundle, "idle", s.Idle)
	var last, inflight atomic.Int64
	last.Store(time.Now().UnixNano())
	go func() {
		t := time.NewTicker(min(s.Idle/4+time.Millisecond, 5*time.Second))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
			case <-t.C:
				// Gone when idle, or when the socket is no longer ours (removed by hand):
				// then no hook can reach this engine and a new one must get the lock.
				if inflight.Load() > 0 {
					continue
				}
				if fi, err := os.Stat(s.Socket); err == nil && os.SameFile(fi, self) && time.Since(time.Unix(0, last.Load())) < s.Idle {
					continue
				}
			}
			ln.Close()
			return
		}
	}()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			log.Info("hook engine stopping", "socket", s.Socket)
			return nil
		}
		inflight.Add(1)
		go func() {
			defer inflight.Add(-1)
			defer last.Store(time.Now().UnixNano())
			defer c.Close()
			resp := s.answer(ctx, c, l, id)
			b, _ := json.Marshal(resp)
			_, _ = c.Write(b)
		}()
	}
}

// answer decides one request: the peer must be this user and expect this engine's identity,
// and the bundle folder must still verify and build.
func (s *hookServeCmd) answer(ctx context.Context, c *net.UnixConn, l *gateway.Local, id string) hookResponse {
	if err := samePeer(c, ""); err != nil {
		return hookResponse{Error: err.Error()}
	}
	_ = c.SetDeadline(time.Now().Add(hookEngineReadTimeout))
	body, err := io.ReadAll(io.LimitReader(c, 9<<20))
	if err != nil {
		return hookResponse{Error: "reading the request: " + err.Error()}
	}
	var req hookRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return hookResponse{Error: "bad request: " + err.Error()}
	}
	if req.Identity != id {
		return hookResponse{Error: "this engine serves another config, bundle or binary"}
	}
	in, err := engine.ParseHookInput(req.Input)
	if err != nil {
		return hookResponse{Error: err.Error()}
	}
	if err := l.Refresh(ctx); err != nil {
		return hookResponse{Error: err.Error()}
	}
	if l.Pinner != nil {
		l.Pinner.Forget() // read what other processes pinned or approved since
	}
	in.Principal = authn.LocalPrincipal() // the per-user engine: its user is who calls
	out, err := l.Engine.Hook(ctx, in)
	if err != nil {
		return hookResponse{Error: err.Error()}
	}
	return hookResponse{Output: &out}
}
