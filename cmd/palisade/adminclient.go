package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/added060/palisade/host/admin"
)

// adminFlags name a gateway's admin API: bundle ls/activate/rollback/upload and approvals.
type adminFlags struct {
	URL     string `default:"http://127.0.0.1:8420" help:"Gateway base URL." env:"PALISADE_ADMIN_URL"`
	Token   string `help:"Admin bearer token (default: read DATA_DIR/admin.token)." env:"PALISADE_ADMIN_TOKEN"`
	DataDir string `default:".palisade" help:"Gateway data dir holding admin.token and nats-auth/." env:"PALISADE_DATA_DIR" placeholder:"DIR"`
}

// adminClient calls a gateway's admin API: the one HTTP client of the CLI.
type adminClient struct {
	base  string // URL plus admin.DefaultPrefix
	token string
	http  *http.Client
}

// client returns the admin client the flags name; without --token it reads DATA_DIR/admin.token.
func (f *adminFlags) client() (*adminClient, error) {
	tok := f.Token
	if tok == "" {
		p := filepath.Join(f.DataDir, admin.TokenFile)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("no admin token: pass --token or PALISADE_ADMIN_TOKEN, or run where %s exists (%w)", p, err)
		}
		tok = strings.TrimSpace(string(b))
	}
	return &adminClient{base: strings.TrimRight(f.URL, "/") + admin.DefaultPrefix, token: tok, http: &http.Client{Timeout: 5 * time.Minute}}, nil
}

// adminError is a non-200 answer of the admin API.
type adminError struct {
	Status int    // HTTP status code
	Reason string // admin.BundleError's reason, if any
	Msg    string // the error text, or the body
}

func (e *adminError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("HTTP %d: %s: %s", e.Status, e.Reason, e.Msg)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Msg)
}

// do sends body (nil: none) with content type ctype and decodes a 200 answer's JSON into out
// (nil: ignored). Any other status is an *adminError.
func (c *adminClient) do(ctx context.Context, method, path string, body []byte, ctype string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		var be admin.BundleError
		if json.Unmarshal(b, &be) == nil && be.Error != "" {
			return &adminError{Status: resp.StatusCode, Reason: be.Reason, Msg: be.Error}
		}
		return &adminError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(b))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// doJSON is do with a JSON-encoded body.
func (c *adminClient) doJSON(ctx context.Context, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.do(ctx, method, path, b, "application/json", out)
}

// get returns a 200 answer's body as it is (an NDJSON export), up to 512 MiB.
func (c *adminClient) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 512<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &adminError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(b))}
	}
	return b, nil
}
