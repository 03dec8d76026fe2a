package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	anthropicsdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
)

// keyLike matches API-key-looking tokens that providers echo in error messages.
var keyLike = regexp.MustCompile(`(?i)\b(sk|key|xai|gsk)[-_][A-Za-z0-9_\-\*\.]{6,}`)

// redact removes the exact key and anything key-like from provider text.
func redact(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}

// providerError classifies what a provider client returned: a non-2xx answer is an
// *HTTPError (status, Retry-After, the provider's message with keys redacted); the caller's
// context ending is returned as it is; anything else (connection refused, a reply that does
// not decode, a stream cut short) is ErrUnavailable.
func providerError(name, key string, err error) error {
	var oe *openai.Error
	var ae *anthropicsdk.Error
	status, raw, hdr := 0, "", http.Header(nil)
	switch {
	case errors.As(err, &oe):
		status, raw = oe.StatusCode, oe.RawJSON()
		if raw != "" {
			raw = `{"error":` + raw + `}` // the client keeps the error object only
		}
		if oe.Response != nil {
			hdr = oe.Response.Header
		}
	case errors.As(err, &ae):
		status, raw = ae.StatusCode, ae.RawJSON()
		if ae.Response != nil {
			hdr = ae.Response.Header
		}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("llm: provider %s: %w", name, err)
	default:
		return fmt.Errorf("llm: provider %s: %w: %v", name, ErrUnavailable, redact(err.Error(), key))
	}
	he := &HTTPError{Provider: name, Status: status, Message: redact(errorMessage([]byte(raw)), key)}
	if ra := hdr.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil {
			he.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return he
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
