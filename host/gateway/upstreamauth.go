package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/config"
	"github.com/hashicorp/golang-lru/v2/expirable"
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
	if o.TokenExchange {
		x := &exchange{o: o, secret: secret, cache: expirable.NewLRU[string, *oauth2.Token](4096, nil, time.Hour), client: &http.Client{Timeout: 10 * time.Second}}
		return func(base http.RoundTripper) http.RoundTripper {
			return roundTripper(func(r *http.Request) (*http.Response, error) { return x.roundTrip(base, r) })
		}, nil
	}
	ts := oauth2.ReuseTokenSource(nil, cc.TokenSource(context.Background()))
	return func(base http.RoundTripper) http.RoundTripper {
		return &oauth2.Transport{Source: ts, Base: base}
	}, nil
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Token exchange (RFC 8693) grant and token types.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

// exchange gets, per caller, a token for the upstream on the caller's behalf: the caller's
// verified access token (authn.TokenFrom, put there by the resource server) is the subject
// token, this gateway's client the actor. Tokens are cached by the caller token's hash until
// shortly before they expire. A request without a verified token is refused: the upstream was
// configured to see who calls, and nobody is named.
type exchange struct {
	o      *config.UpstreamOAuth
	secret string
	cache  *expirable.LRU[string, *oauth2.Token]
	client *http.Client
}

func (x *exchange) roundTrip(base http.RoundTripper, r *http.Request) (*http.Response, error) {
	sub := authn.TokenFrom(r.Context())
	if sub == "" {
		return nil, errors.New("oauth token_exchange: the request carries no verified caller token to exchange")
	}
	sum := sha256.Sum256([]byte(sub))
	key := hex.EncodeToString(sum[:])
	tok, ok := x.cache.Get(key)
	if !ok || !tok.Valid() {
		var err error
		if tok, err = x.fetch(r.Context(), sub); err != nil {
			return nil, err
		}
		x.cache.Add(key, tok)
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return base.RoundTrip(r2)
}

func (x *exchange) fetch(ctx context.Context, subject string) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
	}
	if x.o.Resource != "" {
		form.Set("resource", x.o.Resource)
		form.Set("audience", x.o.Resource)
	}
	if len(x.o.Scopes) > 0 {
		form.Set("scope", strings.Join(x.o.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.o.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(x.o.ClientID), url.QueryEscape(x.secret))
	resp, err := x.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth token_exchange: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("oauth token_exchange: %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		return nil, fmt.Errorf("oauth token_exchange: %s: %s %s", resp.Status, out.Error, out.Description)
	}
	t := &oauth2.Token{AccessToken: out.AccessToken, TokenType: out.TokenType}
	if out.ExpiresIn > 0 {
		t.Expiry = time.Now().Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	return t, nil
}
