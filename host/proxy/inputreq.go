package proxy

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/engine"
	"github.com/added060/palisade/host/mcp"
	"github.com/added060/palisade/sdk/go/abi"
)

// Asking the person at a 2026-07-28 client (approvals.ask_client): that protocol has no stream
// on which the gateway could send a request mid-call; a server asks instead by answering the
// call with an input_required result (SEP-2322, multi round-trip requests), and the client
// retries the call with the answers (inputResponses) and the opaque requestState it was given.
// The gateway's question is the same approval form as the elicitation of the session era; its
// requestState binds what was shown (the call's tool, server, arguments digest, caller and the
// bundle that asked) under an HMAC of the gateway's own, for a few minutes and one use. The
// retry's answer decides the call through the approval path like a person's answer in the
// client (engine.WithAsk, via input_required); a changed call, a swapped bundle, an expired,
// reused or forged state asks again.

// inputKey is the inputRequests key of the gateway's question.
const inputKey = "palisade-approval"

// statePrefix marks a requestState the gateway wrote.
const statePrefix = "palisade1."

// inputStateTTL is how long a question may take to be answered.
const inputStateTTL = 10 * time.Minute

// inputState is what a requestState binds.
type inputState struct {
	Ask       string `json:"ask"` // the audit id of the call that was asked
	Tool      string `json:"tool"`
	Server    string `json:"server"`
	Arguments string `json:"args"` // sha256 of the arguments
	Caller    string `json:"caller,omitempty"`
	Bundle    string `json:"bundle"`
	Expires   int64  `json:"exp"` // Unix seconds
}

// inputStates signs and checks requestStates, and remembers the used ones until they expire.
type inputStates struct {
	key  [32]byte
	mu   sync.Mutex
	used map[string]time.Time
}

func newInputStates() *inputStates {
	s := &inputStates{used: map[string]time.Time{}}
	if _, err := rand.Read(s.key[:]); err != nil {
		panic("proxy: no randomness for the input_required key: " + err.Error())
	}
	return s
}

func (s *inputStates) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write(payload)
	return m.Sum(nil)
}

func (s *inputStates) sign(st inputState) string {
	b, _ := json.Marshal(st)
	return statePrefix + base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(s.mac(b))
}

// Why a retry's answer is not applied (the call is asked again).
var (
	errStateForged  = errors.New("the requestState was not written by this gateway")
	errStateExpired = errors.New("the question expired")
	errStateUsed    = errors.New("the answer was already used")
	errStateChanged = errors.New("the call changed since it was asked")
)

// check verifies state against the retried call and, when it holds, marks it used.
func (s *inputStates) check(state string, want inputState, now time.Time) error {
	body, ok := strings.CutPrefix(state, statePrefix)
	p64, m64, ok2 := strings.Cut(body, ".")
	if !ok || !ok2 {
		return errStateForged
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	mac, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(payload)) {
		return errStateForged
	}
	var st inputState
	if json.Unmarshal(payload, &st) != nil {
		return errStateForged
	}
	if now.Unix() > st.Expires {
		return errStateExpired
	}
	want.Ask, want.Expires = st.Ask, st.Expires
	if st != want {
		return errStateChanged
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, t := range s.used {
		if now.After(t) {
			delete(s.used, k)
		}
	}
	if _, dup := s.used[state]; dup {
		return errStateUsed
	}
	s.used[state] = time.Unix(st.Expires, 0)
	return nil
}

// stateFor is what a requestState for env binds (without its audit id and expiry).
func stateFor(env *abi.Envelope, bundle string) inputState {
	caller := ""
	if p := env.Principal; p != nil {
		caller = p.Issuer + "#" + p.Subject
	}
	return inputState{Tool: env.Tool + env.Prompt + env.URI, Server: env.Server, Arguments: audit.ArgumentsHash(env.Arguments), Caller: caller, Bundle: bundle}
}

// inputAskable reports whether a held call of this request may be put to the person at its
// client as an input_required result: approvals.ask_client is on, the request is a 2026-07-28
// call (tools/call, prompts/get, resources/read) and its client declared elicitation in _meta.
func (h *HTTP) inputAskable(env *abi.Envelope, params json.RawMessage) bool {
	if !h.o.AskClient || env.ProtocolVersion < mcp.Stateless {
		return false
	}
	switch env.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead:
	default:
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(p.Meta["io.modelcontextprotocol/clientCapabilities"], &caps)
	v := caps[mcp.CapabilityElicitation]
	return len(v) > 0 && string(v) != "null"
}

// takeInputAnswer removes the gateway's answer and requestState from a retried call's params
// (the upstream never sees them) and returns them; ok is false when the call carries no
// requestState of the gateway's.
func takeInputAnswer(params json.RawMessage) (rest json.RawMessage, state string, answer json.RawMessage, ok bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params, "", nil, false
	}
	if json.Unmarshal(p["requestState"], &state) != nil || !strings.HasPrefix(state, statePrefix) {
		return params, "", nil, false
	}
	delete(p, "requestState")
	var answers map[string]json.RawMessage
	if json.Unmarshal(p["inputResponses"], &answers) == nil {
		answer = answers[inputKey]
		delete(answers, inputKey)
		if len(answers) == 0 {
			delete(p, "inputResponses")
		} else {
			p["inputResponses"], _ = json.Marshal(answers)
		}
	}
	rest, _ = json.Marshal(p)
	return rest, state, answer, true
}

// inputRequiredAnswer is the input_required result that puts the held call o to the person at
// the client.
func (h *HTTP) inputRequiredAnswer(id json.RawMessage, o *engine.Outcome, bundle string) []byte {
	st := stateFor(o.Envelope, bundle)
	st.Ask, st.Expires = o.AuditID, time.Now().Add(inputStateTTL).Unix()
	form := askForm(engine.Held{AuditID: o.AuditID, Envelope: o.Envelope, Decision: o.Decision})
	res, _ := json.Marshal(map[string]any{
		"resultType":    "input_required",
		"inputRequests": map[string]any{inputKey: map[string]any{"method": mcp.MethodElicitation, "params": form}},
		"requestState":  h.inputStates.sign(st),
	})
	b, _ := json.Marshal(&mcp.Message{JSONRPC: "2.0", ID: id, Result: res})
	return b
}

// inputAsk prepares the request of a client that can be asked with input_required: a retry
// whose requestState and answer hold decides the held call with that answer (engine.WithAsk,
// via input_required); otherwise the engine leaves an ask unheld for the gateway to put as an
// input_required result (ask true). rest is the call's params without the gateway's answer and
// requestState (nil when it carried none), which go no further.
func (h *HTTP) inputAsk(ctx context.Context, env *abi.Envelope, params json.RawMessage) (_ context.Context, ask bool, rest json.RawMessage) {
	rest, state, answer, retried := takeInputAnswer(params)
	if !retried {
		return engine.WithInputRequired(ctx), true, nil
	}
	err := h.inputStates.check(state, stateFor(env, h.o.Engine.ActiveInfo().Digest), time.Now())
	var a engine.Answer
	if err == nil && len(answer) == 0 {
		err = errors.New("the retry carries no answer to the gateway's question")
	}
	if err == nil {
		a, err = formAnswer(answer, askWho(env), engine.ViaInputRequired)
	}
	if err != nil {
		h.o.Logger.Info("input_required: the retry's answer is not applied; asking again", "audit_id", env.ID, "tool", env.Tool, "err", err)
		return engine.WithInputRequired(ctx), true, rest
	}
	return engine.WithAsk(ctx, func(context.Context, engine.Held) (engine.Answer, error) { return a, nil }), false, rest
}
