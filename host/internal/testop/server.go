package main

import (
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"net/http"
	"net/url"

	"github.com/zitadel/oidc/v3/pkg/op"
)

type resourceKey struct{}

// resourcesFrom returns the RFC 8707 resource indicators the request's middleware saw.
func resourcesFrom(ctx context.Context) []string {
	r, _ := ctx.Value(resourceKey{}).([]string)
	return r
}

func newServer(issuer string, cfg Config, key *rsa.PrivateKey) (http.Handler, error) {
	st := newStorage(cfg, key)
	opCfg := &op.Config{
		CryptoKey:      sha256.Sum256([]byte("testop opaque tokens")),
		CodeMethodS256: true,
		AuthMethodPost: true,
	}
	p, err := op.NewProvider(opCfg, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		return nil, err
	}
	callback := op.AuthCallbackURL(p)
	mux := http.NewServeMux()
	// The login page approves at once: the user named by login_hint, or the first one.
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		if err := st.approve(id); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
	})
	// POST /rotate signs from now on with a new key (tests of key rotation).
	mux.HandleFunc("POST /rotate", func(w http.ResponseWriter, _ *http.Request) {
		if err := st.rotate(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.Handle("/", p)
	// RFC 8707: the op package does not read `resource`, so it travels in the context to
	// the storage, which stamps it as the access token's audience.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err == nil {
			if res := r.Form["resource"]; len(res) > 0 {
				for _, u := range res {
					if pu, err := url.Parse(u); err != nil || !pu.IsAbs() || pu.Fragment != "" {
						http.Error(w, `{"error":"invalid_target"}`, http.StatusBadRequest)
						return
					}
				}
				r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, res))
			}
		}
		mux.ServeHTTP(w, r)
	}), nil
}
