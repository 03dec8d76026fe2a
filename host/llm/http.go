package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const maxBodyBytes = 1 << 20 // cap on a provider reply we read

// keyLike matches API-key-looking tokens that providers echo in error messages.
var keyLike = regexp.MustCompile(`(?i)\b(sk|key|xai|gsk)[-_][A-Za-z0-9_\-\*\.]{6,}`)

// redact removes the exact key and anything key-like from provider text.
func redact(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}

// post sends a JSON body and returns the response for 2xx; otherwise an *HTTPError.
func post(ctx context.Context, c *http.Client, name, url string, hdr map[string]string, body any, key string) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("llm: provider %s: encode request: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("llm: provider %s: %w", name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return do(c, name, req, key)
}

func get(ctx context.Context, c *http.Client, name, url string, hdr map[string]string, key string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("llm: provider %s: %w", name, err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := do(c, name, req, key)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBodyBytes))
	resp.Body.Close()
	return nil
}

func do(c *http.Client, name string, req *http.Request, key string) (*http.Response, error) {
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("llm: provider %s: %w", name, err)
		}
		return nil, fmt.Errorf("llm: provider %s: %w: %v", name, ErrUnavailable, redact(err.Error(), key))
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	he := &HTTPError{Provider: name, Status: resp.StatusCode, Message: redact(errorMessage(raw), key)}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil {
			he.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return nil, he
}

// errorMessage pulls error.message out of OpenAI and Anthropic error bodies, or returns the
// start of the body.
func errorMessage(raw []byte) string {
	var e struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		if e.Error.Type != "" {
			return e.Error.Type + ": " + capText(e.Error.Message, 300)
		}
		return capText(e.Error.Message, 300)
	}
	return capText(collapseSpace(string(raw)), 300)
}

// readSSE calls fn for each server-sent event (event name, joined data lines) until fn returns
// stop, the stream ends, or an error. fn's errors are returned as they are; a read error, or
// the stream ending before fn said stop (io.ErrUnexpectedEOF), is classified by streamErr.
func readSSE(name string, r io.Reader, fn func(event, data string) (stop bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxBodyBytes)
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if len(data) > 0 || event != "" {
				stop, err := fn(event, strings.Join(data, "\n"))
				if err != nil || stop {
					return err
				}
			}
			event, data = "", data[:0]
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment / keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		return streamErr(name, err)
	}
	if len(data) > 0 { // a final event without the blank line
		stop, err := fn(event, strings.Join(data, "\n"))
		if err != nil || stop {
			return err
		}
	}
	return streamErr(name, io.ErrUnexpectedEOF)
}

// streamErr classifies an error reading a stream: a cut stream is ErrUnavailable.
func streamErr(name string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("llm: provider %s: stream: %w", name, err)
	}
	return fmt.Errorf("llm: provider %s: %w: stream: %w", name, ErrUnavailable, err)
}
