package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/added060/palisade/host/gateway"
	"github.com/added060/palisade/host/selfmcp"
)

func init() {
	register(command{name: "mcp", summary: "Palisade's own MCP server (checkIntent, reportAction, getPolicy) on stdio or --http", run: runMCP})
}

func runMCP(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	lf := addLocalFlags(fs)
	useHTTP := fs.Bool("http", false, "serve Streamable HTTP instead of stdio")
	host := fs.String("host", "127.0.0.1", "HTTP listen host")
	port := fs.Int("port", 8421, "HTTP listen port (0 = any free port)")
	token := fs.String("token", envOr(env, "PALISADE_MCP_TOKEN", ""), "HTTP bearer token (env PALISADE_MCP_TOKEN; default: generated and printed)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	cfg, log, err := lf.load(env)
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitUsage
	}
	l, err := gateway.NewLocal(ctx, gateway.LocalOptions{Config: cfg, Name: "mcp", Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitFail
	}
	defer l.Close(context.WithoutCancel(ctx))
	bctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go l.WatchBundle(bctx, 0)
	s, err := selfmcp.New(selfmcp.Options{Engine: l.Engine, Recent: l.Ring.Recent, Logger: log})
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitFail
	}
	if !*useHTTP {
		if err := s.ServeStdio(ctx, env.Stdin, nopWriteCloser{env.Stdout}); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			fmt.Fprintln(env.Stderr, "palisade mcp:", err)
			return exitFail
		}
		return exitOK
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
		return exitUsage
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(env.Stderr, "palisade mcp:", err)
		return exitFail
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
		return exitFail
	}
	return exitOK
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
