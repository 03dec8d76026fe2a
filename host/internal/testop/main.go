// Command testop is a small OpenID provider for tests, built on github.com/zitadel/oidc/v3's
// op package with in-memory storage. Tests build it and run it as a separate process
// (host/internal/testenv.StartOP); it is never shipped.
//
// It listens on 127.0.0.1 (a random port unless -addr says otherwise), prints
// "issuer http://127.0.0.1:PORT" on stdout once it serves, and offers:
//   - confidential clients (with a secret) for client_credentials, the subject being the client;
//   - public clients (no secret) for authorization code with PKCE (S256), whose login page
//     approves at once the user named by login_hint, or the first configured user;
//   - RS256-signed JWT access tokens whose aud is the RFC 8707 `resource` the client asked
//     for (the client id when none), carrying `scope` and the user's or client's claims;
//     or opaque tokens for a client with "opaque": true, checked by its introspection endpoint.
//
// The configuration is JSON (-config FILE); see Config.
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	cfgPath := flag.String("config", "", "JSON configuration (clients, users)")
	flag.Parse()
	if err := run(*addr, *cfgPath); err != nil {
		log.Fatal(err)
	}
}

func run(addr, cfgPath string) error {
	var cfg Config
	if cfgPath != "" {
		b, err := os.ReadFile(cfgPath)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return fmt.Errorf("config %s: %w", cfgPath, err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	issuer := "http://" + ln.Addr().String()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	h, err := newServer(issuer, cfg, key)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		srv.Shutdown(context.Background())
	}()
	fmt.Printf("issuer %s\n", issuer)
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
