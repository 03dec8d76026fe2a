package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/added060/palisade/host/enginesock"
	"github.com/added060/palisade/host/proxy"
)

// errNoEngine wraps why the engine socket could not be used before anything was relayed: the
// proxy then judges in its own process, as without an engine.
var errNoEngine = errors.New("no engine")

// thinGrace is how long the server may take to exit after its stdin closes, before SIGTERM and
// then SIGKILL (as the in-process proxy's StdioOptions.Grace).
const thinGrace = 5 * time.Second

// runThinProxy is `palisade proxy` with an engine process: it starts the MCP server as this
// user and carries the client's and the server's bytes over the engine socket; the engine
// judges every line and says what reaches each side (enginesock.StdioProtocol). It holds no key
// and reads no bundle. If the session ends before the server does (the engine went away), the
// server is stopped: nothing is relayed unjudged.
func runThinProxy(ctx context.Context, env *cliEnv, sock, server string, command []string) (int, error) {
	if server == "" {
		server = filepath.Base(command[0])
	}
	conn, br, err := dialSession(ctx, env, "palisade proxy", sock, enginesock.StdioPath+"?server="+url.QueryEscape(server), enginesock.StdioProtocol)
	if err != nil {
		return 1, err
	}
	defer conn.Close()

	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stderr = env.Stderr
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return 1, err
	}
	childOut, err := cmd.StdoutPipe()
	if err != nil {
		return 1, err
	}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("start %s: %w", command[0], err)
	}
	exited := make(chan struct{})
	var state *os.ProcessState
	var werr error
	// Process.Wait, not cmd.Wait: cmd.Wait would close the stdout pipe under the pump that is
	// still reading the server's last lines.
	go func() { state, werr = cmd.Process.Wait(); close(exited) }()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-exited:
				return
			}
		}
	}()

	serr := enginesock.ThinSide(br, conn, env.Stdin, env.Stdout, childIn, childOut)
	select {
	case <-exited:
	default:
		// The session ended first: the engine finished (it saw the client's EOF and closed the
		// server's stdin) or went away. Either way the server gets its grace, then is stopped.
		childIn.Close()
		proxy.StopWithin(cmd, exited, thinGrace)
		<-exited
	}
	if serr != nil {
		fmt.Fprintln(env.Stderr, "palisade proxy: the engine session failed; the server was stopped:", serr)
	}
	if werr != nil || state == nil {
		return 1, nil
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	if c := state.ExitCode(); c >= 0 {
		return c, nil
	}
	return 1, nil
}

// dialSession opens an upgraded session on the engine socket (checked by enginesock.Dial). An
// error wraps errNoEngine: nothing was relayed yet.
func dialSession(ctx context.Context, env *cliEnv, who, sock, path, protocol string) (net.Conn, *bufio.Reader, error) {
	conn, info, err := enginesock.Dial(ctx, sock)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errNoEngine, err)
	}
	if info.SharedUser {
		fmt.Fprintln(env.Stderr, who+": the engine on", sock, "runs as this user: an agent running as this user could answer in its place (palisade install runs it as its own user)")
	}
	br := bufio.NewReader(conn)
	req, _ := http.NewRequest(http.MethodPost, "http://engine"+path, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", protocol)
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("%w: %v", errNoEngine, err)
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("%w: %v", errNoEngine, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, nil, fmt.Errorf("%w: the engine answered %s", errNoEngine, resp.Status)
	}
	return conn, br, nil
}

// runThinSelf is `palisade mcp` (stdio) with an engine process: Palisade's own MCP server runs
// in the engine, and this process only carries the client's lines there and back.
func runThinSelf(ctx context.Context, env *cliEnv, sock string) error {
	conn, br, err := dialSession(ctx, env, "palisade mcp", sock, enginesock.SelfPath, enginesock.SelfProtocol)
	if err != nil {
		return err
	}
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, env.Stdin)
		if uc, ok := conn.(*net.UnixConn); ok {
			_ = uc.CloseWrite() // the client is done: the server sees EOF and ends the session
		}
	}()
	_, err = io.Copy(env.Stdout, br)
	return err
}
