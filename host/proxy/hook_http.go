package proxy

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/added060/palisade/host/authn"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/internal/sse"
	"github.com/added060/palisade/sdk/go/abi"
)

// HookErrorHeader names, on a HookHandler answer, why the gateway could not judge the call
// (HookErrInput, HookErrAuth, HookErrNoBundle, HookErrInternal); absent when it judged it.
const HookErrorHeader = "Palisade-Hook-Error"

// Values of HookErrorHeader.
const (
	HookErrInput    = "invalid-input"
	HookErrAuth     = "unauthorized"
	HookErrNoBundle = "no-bundle"
	HookErrInternal = "internal"
	// HookErrBusy: the gateway's memory budget (limits.stream_buffer_bytes) could not cover
	// the input or judging it now; the call is asked, and HookClient decides in process.
	HookErrBusy = "over-budget"
)

// HookHandler serves hook decisions over HTTP, for `palisade hook --gateway URL` and for Claude
// Code's own http hooks: POST the hook input JSON to HookPath, get the HookOutput JSON.
//
// # Notes
//
// Claude Code treats a non-2xx answer from an http hook as a non-blocking error (the call
// proceeds), so every POST is answered 200 with a decision: invalid input is denied, and a call
// the gateway cannot judge (no active bundle, an engine error) is asked. HookErrorHeader says
// which, so HookClient can fall back to deciding in process. A Content-Type other than
// application/json is denied before the engine runs: a web page can POST text/plain without a
// CORS preflight.
//
// The input (at most HookBodyLimit bytes) counts in no memory budget; the gateway serves
// HTTP.HookHandler, whose inputs draw on the budget its MCP traffic shares.
func HookHandler(e *engine.Engine) http.Handler { return hookHandler(e, nil) }

// HookBodyLimit caps one hook input.
const HookBodyLimit = 4 << 20

// HookHandler is proxy.HookHandler on h's engine, with each input, and the memory judging it
// costs (JudgeCost), drawn from h's memory budget until it is answered: an input that does not
// fit is asked (HookErrBusy), never read.
func (h *HTTP) HookHandler() http.Handler { return hookHandler(h.o.Engine, h.budget) }

func hookHandler(e *engine.Engine, budget *sse.Budget) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST the PreToolUse hook JSON", http.StatusMethodNotAllowed)
			return
		}
		// JSON only: a web page can POST text/plain (or a form) to any address without a CORS
		// preflight, but not application/json. Denied before anything runs or is recorded.
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeHook(w, HookErrInput, engine.HookAnswer(abi.ActionDeny, "Palisade refused the hook call: Content-Type must be application/json"))
			return
		}
		body, release, err := budget.ReadAll(r.Body, r.ContentLength, HookBodyLimit)
		defer release()
		switch {
		case errors.Is(err, sse.ErrBudget):
			writeHook(w, HookErrBusy, engine.HookAnswer(abi.ActionAsk, "Palisade could not judge this call now: its input does not fit the gateway's memory budget (limits.stream_buffer_bytes)"))
			return
		case errors.Is(err, sse.ErrTooLarge):
			writeHook(w, HookErrInput, engine.HookAnswer(abi.ActionDeny, fmt.Sprintf("Palisade refused the hook input: over %d bytes", HookBodyLimit)))
			return
		case err != nil:
			writeHook(w, HookErrInput, engine.HookAnswer(abi.ActionDeny, "Palisade could not read the hook input: "+err.Error()))
			return
		}
		in, err := engine.ParseHookInput(body)
		if err != nil {
			writeHook(w, HookErrInput, engine.HookAnswer(abi.ActionDeny, "Palisade refused invalid hook input: "+err.Error()))
			return
		}
		in.Principal = authn.FromContext(r.Context()) // HookVerify's; nil on the socket (the engine's caller)
		judged := func() {}
		if budget != nil {
			var ok bool
			if judged, ok = holdJudging(budget, JudgeCost(len(body))); !ok {
				writeHook(w, HookErrBusy, engine.HookAnswer(abi.ActionAsk, "Palisade could not judge this call now: judging it does not fit the gateway's memory budget (limits.stream_buffer_bytes)"))
				return
			}
		}
		out, err := e.Hook(r.Context(), in)
		judged()
		if err != nil {
			why := HookErrInternal
			if errors.Is(err, engine.ErrNoChain) {
				why = HookErrNoBundle
			}
			writeHook(w, why, engine.HookAnswer(abi.ActionAsk, "Palisade could not judge this call: "+err.Error()))
			return
		}
		writeHook(w, "", out)
	})
}

// HookAuth guards a hook handler with a bearer token ("" = no check). A missing or wrong token
// is answered 200 with a deny decision (a 401 would let Claude Code's http hook proceed).
func HookAuth(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeHook(w, HookErrAuth, engine.HookAnswer(abi.ActionDeny, "Palisade refused this hook call: missing or wrong bearer token"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// HookVerify guards a hook handler with the gateway's resource server (the `authn:` section):
// the request's access token is verified and its principal is who the hook's calls are judged
// as. A missing or refused token is answered 200 with a deny decision and the challenge (a 401
// would let Claude Code's http hook proceed); the token is not passed on.
func HookVerify(v *authn.Verifier, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := v.Authenticate(r)
		if err != nil {
			writeHook(w, HookErrAuth, engine.HookAnswer(abi.ActionDeny, "Palisade refused this hook call: missing, invalid or insufficient access token"))
			return
		}
		authn.StripToken(r)
		h.ServeHTTP(w, r.WithContext(authn.WithPrincipal(r.Context(), p)))
	})
}

func writeHook(w http.ResponseWriter, why string, out engine.HookOutput) {
	if why != "" {
		w.Header().Set(HookErrorHeader, why)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// ErrGatewayUnreachable marks a hook delegation that never got an answer from the gateway (the
// caller falls back to deciding in process).
var ErrGatewayUnreachable = errors.New("hook: gateway unreachable")

// HookClient asks a running gateway for a hook decision.
type HookClient struct {
	URL     string        // gateway base URL, e.g. http://127.0.0.1:8080
	Token   string        // bearer token; "" = none
	Timeout time.Duration // whole exchange; 0 = 2s
	Client  *http.Client  // nil = a client with Timeout
}

// Decide posts the raw hook input. A transport failure, a non-200 status, an answer that is not
// a hook output, or a gateway that could not judge the call (no bundle, an internal error) wraps
// ErrGatewayUnreachable: the caller decides in process instead. Any other answer is returned as
// is, a deny for invalid input or a wrong token included.
func (c HookClient) Decide(ctx context.Context, input []byte) (engine.HookOutput, error) {
	t := c.Timeout
	if t <= 0 {
		t = 2 * time.Second
	}
	hc := c.Client
	if hc == nil {
		hc = &http.Client{Timeout: t}
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.URL, "/")+engine.HookPath, bytes.NewReader(input))
	if err != nil {
		return engine.HookOutput{}, fmt.Errorf("%w: %v", ErrGatewayUnreachable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return engine.HookOutput{}, fmt.Errorf("%w: %v", ErrGatewayUnreachable, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return engine.HookOutput{}, fmt.Errorf("%w: %s: %s", ErrGatewayUnreachable, resp.Status, bytes.TrimSpace(body))
	}
	var out engine.HookOutput
	if err := json.Unmarshal(body, &out); err != nil || (out.HookSpecificOutput != nil && !engine.ValidHookDecision(out.Decision())) {
		return engine.HookOutput{}, fmt.Errorf("%w: gateway answered %q", ErrGatewayUnreachable, body)
	}
	switch why := resp.Header.Get(HookErrorHeader); why {
	case HookErrNoBundle, HookErrInternal, HookErrBusy:
		return engine.HookOutput{}, fmt.Errorf("%w: %s: %s", ErrGatewayUnreachable, why, out.Reason())
	}
	return out, nil
}
