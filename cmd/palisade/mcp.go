package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/selfmcp"
)

func init() {
	register(command{name: "mcp", summary: "Palisade's own MCP server (checkIntent, reportAction, getPolicy) on stdio or --http", cmd: &mcpCmd{}})
}

type mcpCmd struct {
	localFlags `embed:""`
	HTTP       bool   `name:"http" help:"Serve Streamable HTTP instead of stdio."`
	Host       string `default:"127.0.0.1" help:"HTTP listen host."`
	Port       int    `default:"8421" help:"HTTP listen port (0 = any free port)."`
	Token      string `help:"HTTP bearer token (default: generated and printed)." env:"PALISADE_MCP_TOKEN"`
	// EngineSocket: with an engine process installed, the stdio server runs in the engine.
	EngineSocket string `name:"engine-socket" default:"/run/palisade/engine.sock" help:"On stdio, serve through the engine process on this Unix socket when it is there (checked like the hook's). \"\" = never." env:"PALISADE_ENGINE_SOCKET" placeholder:"PATH"`
}

func (m *mcpCmd) Run(ctx context.Context, env *cliEnv) error {
	lf := &m.localFlags
	useHTTP, host, port, token := &m.HTTP, &m.Host, &m.Port, &m.Token
	if !*useHTTP && m.EngineSocket != "" {
		if _, err := os.Lstat(m.EngineSocket); err == nil {
			err := runThinSelf(ctx, env, m.EngineSocket)
			if !errors.Is(err, errNoEngine) {
				if err != nil && !errors.Is(err, io.EOF) {
					fmt.Fprintln(env.Stderr, "palisade mcp:", err)
					return exitCode(exitFail)
				}
				return nil
			}
			fmt.Fprintln(env.Stderr, "palisade mcp: engine socket not used, serving here:", err)
		}
	}
	cfg, log, err := lf.load(env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitCode(exitUsage)
	}
	gateway.TuneRuntime()
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: cfg.Config, Sections: cfg.Sections, Name: "mcp", Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitCode(exitFail)
	}
	defer l.Close(context.WithoutCancel(ctx))
	bctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go l.WatchBundle(bctx, 0)
	s, err := selfmcp.New(selfmcp.Options{Engine: l.Engine, Recent: l.Recent, Logger: log, Principal: authn.LocalPrincipal()})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitCode(exitFail)
	}
	if !*useHTTP {
		if err := s.ServeStdio(ctx, env.Stdin, nopWriteCloser{env.Stdout}); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			fmt.Fprintln(env.Stderr, "palisade mcp:", err)
			return exitCode(exitFail)
		}
		return nil
	}
	if *token == "" {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		*token = hex.EncodeToString(b)
		fmt.Fprintln(env.Stderr, "palisade mcp: bearer token (set PALISADE_MCP_TOKEN to choose one):", *token)
	}
	h, err := s.HTTPHandler(*token)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitCode(exitUsage)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitCode(exitFail)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(wctx)
	// The bearer token is always required; the SDK handler refuses non-loopback Hosts on a
	// loopback listener, and cross-origin browser requests are refused here.
	// Timeouts, the connection limit and the per-write deadline are the gateway's (the
	// config file's http: section, defaults otherwise; no write timeout: SSE answers). Past
	// the limit every new connection gets 503: there is no /healthz here.
	hc := cfg.WithDefaults().HTTP
	ln = gateway.LimitListener(ln, gateway.MaxConnections(hc.MaxConnections), "", log)
	srv := &http.Server{Handler: gateway.SendTimeout(http.NewCrossOriginProtection().Handler(h), hc.SendTimeout.D()),
		ReadHeaderTimeout: hc.ReadHeaderTimeout.D(), ReadTimeout: hc.ReadTimeout.D(),
		IdleTimeout: hc.IdleTimeout.D(), MaxHeaderBytes: hc.MaxHeaderBytes}
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(env.Stderr, "palisade mcp: serving http://%s/\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitCode(exitFail)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
