package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/added060/palisade/host/config"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// upstreamCredentials is an upstream's own identity towards its server: an OAuth client
// credentials grant (golang.org/x/oauth2/clientcredentials), its token fetched on first use,
// cached and refreshed before it expires, and sent as Authorization on every request to that
// upstream. The client's token never is (the proxy strips it); an upstream that wants a caller's
// identity gets it from the gateway's own credentials, not by passthrough.
func upstreamCredentials(o *config.UpstreamOAuth) (func(http.RoundTripper) http.RoundTripper, error) {
	b, err := os.ReadFile(o.ClientSecretFile)
	if err != nil {
		return nil, fmt.Errorf("client_secret_file: %w", err)
	}
	secret := strings.TrimSpace(string(b))
	if secret == "" {
		return nil, errors.New("client_secret_file: empty")
	}
	cc := clientcredentials.Config{ClientID: o.ClientID, ClientSecret: secret, TokenURL: o.TokenURL, Scopes: o.Scopes}
	if o.Resource != "" {
		cc.EndpointParams = url.Values{"resource": {o.Resource}}
	}
	ts := oauth2.ReuseTokenSource(nil, cc.TokenSource(context.Background()))
	return func(base http.RoundTripper) http.RoundTripper {
		return &oauth2.Transport{Source: ts, Base: base}
	}, nil
}
