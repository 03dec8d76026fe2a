package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// serverMetadata is the part of an authorization server's metadata (RFC 8414, or OpenID
// Connect Discovery) the gateway reads.
type serverMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// discover fetches the issuer's metadata: RFC 8414's /.well-known/oauth-authorization-server
// (inserted before the issuer's path), then OpenID Connect's /.well-known/openid-configuration
// (appended), the order the MCP authorization specification gives. The document's issuer must
// be the configured one.
func discover(ctx context.Context, hc *http.Client, issuer string) (serverMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return serverMetadata{}, fmt.Errorf("discover %s: %w", issuer, err)
	}
	path := strings.TrimSuffix(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	cands := []string{origin + "/.well-known/oauth-authorization-server" + path}
	if path != "" {
		cands = append(cands, origin+"/.well-known/openid-configuration"+path)
	}
	cands = append(cands, origin+path+"/.well-known/openid-configuration")
	var errs []string
	for _, c := range cands {
		m, err := fetchMetadata(ctx, hc, c)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if m.Issuer != issuer {
			return serverMetadata{}, fmt.Errorf("discover %s: %s names issuer %q", issuer, c, m.Issuer)
		}
		return m, nil
	}
	return serverMetadata{}, fmt.Errorf("discover %s: %s", issuer, strings.Join(errs, "; "))
}

func fetchMetadata(ctx context.Context, hc *http.Client, u string) (serverMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return serverMetadata{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return serverMetadata{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return serverMetadata{}, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	var m serverMetadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return serverMetadata{}, fmt.Errorf("GET %s: %w", u, err)
	}
	return m, nil
}
