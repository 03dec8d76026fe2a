package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/enginesock"
	"github.com/added060/palisade/host/proxy"
	"github.com/added060/palisade/host/selfmcp"
	"github.com/added060/palisade/host/version"
)

// The engine socket (config `socket`, `serve --socket`): the door thin clients use. It serves
// only what a client on this host needs from the engine:
//
//	POST /v1/hook    Claude Code's PreToolUse input → the engine's answer (no token: the
//	                 socket's folder is the credential, see host/enginesock)
//	POST /v1/stdio   a thin `palisade proxy`'s session (upgraded to enginesock.StdioProtocol):
//	                 the client's and the server's bytes in, what the engine passes out
//	POST /v1/self    a thin `palisade mcp`'s session (upgraded to enginesock.SelfProtocol):
//	                 Palisade's own MCP server (checkIntent, reportAction, getPolicy) on stdio
//	GET  /v1/engine  who answers: version, pid, uid, active bundle
//
// Each request carries its caller's uid and pid (SO_PEERCRED); the hook's audit event names
// the OS user who asked.

// EngineInfo is the answer to GET /v1/engine.
type EngineInfo struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
	UID     int    `json:"uid"`
	Bundle  string `json:"bundle,omitempty"`
}

// EngineInfoPath is the engine socket's self-description.
const EngineInfoPath = "/v1/engine"

func (g *Gateway) startSocket() error {
	if g.cfg.Socket == "" {
		return nil
	}
	ln, err := enginesock.Listen(g.cfg.Socket)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	hook := g.http.HookHandler()
	mux.HandleFunc("POST "+engine.HookPath, func(w http.ResponseWriter, r *http.Request) {
		p, ok := enginesock.PeerFrom(r.Context())
		if !ok {
			http.Error(w, "the caller's credentials could not be read", http.StatusForbidden)
			return
		}
		ctx := engine.WithCaller(r.Context(), engine.Caller{User: p.User(), UID: p.UID, PID: p.PID, Home: p.Home()})
		hook.ServeHTTP(w, r.WithContext(ctx))
	})
	mux.HandleFunc("POST "+enginesock.StdioPath, g.serveStdio)
	mux.HandleFunc("POST "+enginesock.SelfPath, g.serveSelf)
	mux.HandleFunc("GET "+EngineInfoPath, func(w http.ResponseWriter, r *http.Request) {
		info := EngineInfo{Version: version.String(), PID: os.Getpid(), UID: os.Geteuid()}
		if ch := g.active.Load(); ch != nil {
			info.Bundle = ch.Info().Version
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(info)
	})
	g.sockSrv = &http.Server{
		Handler:           mux,
		ConnContext:       enginesock.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	g.sockLn = ln
	go func() {
		if err := g.sockSrv.Serve(ln); err != nil && err != http.ErrServerClosed {
			g.log.Error("engine socket", "err", err)
		}
	}()
	g.log.Info("engine socket listening", "path", g.cfg.Socket)
	return nil
}

func (g *Gateway) closeSocket(ctx context.Context) {
	if g.sockSrv == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	g.sockSrv.Shutdown(sctx)
	cancel()
	os.Remove(g.cfg.Socket)
}

// serveStdio runs one thin proxy's session: the proxy runs the MCP server (?server=NAME) as the
// agent's user and carries both byte streams here; proxy.RelayStdio judges every line with this
// engine, exactly as the in-process proxy does, and records under the caller's OS user.
func (g *Gateway) serveStdio(w http.ResponseWriter, r *http.Request) {
	p, ok := enginesock.PeerFrom(r.Context())
	if !ok {
		http.Error(w, "the caller's credentials could not be read", http.StatusForbidden)
		return
	}
	server := r.URL.Query().Get("server")
	if server == "" {
		http.Error(w, "POST "+enginesock.StdioPath+"?server=NAME", http.StatusBadRequest)
		return
	}
	conn, brw, ok := upgrade(w, r, enginesock.StdioProtocol)
	if !ok {
		return
	}
	defer conn.Close()
	clientIn, serverOut, clientOut, serverIn := enginesock.EngineSide(brw.Reader, conn)
	ctx := engine.WithCaller(context.WithoutCancel(r.Context()), engine.Caller{User: p.User(), UID: p.UID, PID: p.PID, Home: p.Home()})
	o := proxy.StdioOptions{Engine: g.Engine(), Server: server, Stdin: clientIn, Stdout: clientOut, Logger: g.log,
		MaxBatch: g.cfg.Limits.BatchElements}
	if pn := g.Pinner(); pn != nil {
		o.Tools = pn
	}
	g.log.Info("stdio session", "upstream", server, "caller", p.User(), "pid", p.PID)
	if err := proxy.RelayStdio(ctx, o, serverIn, serverOut); err != nil {
		g.log.Warn("stdio session", "upstream", server, "err", err)
	}
}

// serveSelf runs Palisade's own MCP server for one thin `palisade mcp`, deciding with this
// engine and recording under the caller's OS user.
func (g *Gateway) serveSelf(w http.ResponseWriter, r *http.Request) {
	p, ok := enginesock.PeerFrom(r.Context())
	if !ok {
		http.Error(w, "the caller's credentials could not be read", http.StatusForbidden)
		return
	}
	s, err := selfmcp.New(selfmcp.Options{Engine: g.Engine(), Recent: g.Recent(), Logger: g.log, Permissions: g.permissions(), Limits: g.selfLimits()})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	conn, brw, ok := upgrade(w, r, enginesock.SelfProtocol)
	if !ok {
		return
	}
	defer conn.Close()
	ctx := engine.WithCaller(context.WithoutCancel(r.Context()), engine.Caller{User: p.User(), UID: p.UID, PID: p.PID, Home: p.Home()})
	if err := s.ServeStdio(ctx, brw.Reader, conn); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		g.log.Debug("self session", "caller", p.User(), "err", err)
	}
}

// upgrade answers 101 for protocol and hands back the connection, or answers 400.
func upgrade(w http.ResponseWriter, r *http.Request, protocol string) (net.Conn, *bufio.ReadWriter, bool) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), protocol) {
		http.Error(w, "Upgrade: "+protocol+" required", http.StatusBadRequest)
		return nil, nil, false
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no upgrade here", http.StatusInternalServerError)
		return nil, nil, false
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, false
	}
	conn.SetDeadline(time.Time{})
	if _, err := brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + protocol + "\r\n\r\n"); err != nil {
		conn.Close()
		return nil, nil, false
	}
	if err := brw.Flush(); err != nil {
		conn.Close()
		return nil, nil, false
	}
	return conn, brw, true
}
