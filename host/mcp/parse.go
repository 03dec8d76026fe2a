package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/added060/palisade/sdk/go/abi"
)

// Parsed is one message read by Parse: the message, and for a request or notification the
// request-phase envelope built from the same scan.
type Parsed struct {
	Message *Message
	// Envelope is the request-phase envelope (nil for a response). Its ID is empty: the engine
	// gives it an audit id.
	Envelope *abi.Envelope
	// ProgressToken is params._meta.progressToken, if the client gave one.
	ProgressToken json.RawMessage
	// Sampling reports that initialize params declare the client's sampling capability.
	Sampling bool
}

// Parse reads exactly one JSON-RPC message (a stdio line, a hook call, a fixture) and builds its
// envelope in the same pass. It is the one strict parse every way into the gateway uses: the
// bytes are scanned once, without recursion, refusing invalid JSON, keys given twice or in two
// cases at any depth (ErrAmbiguousKeys), significant keys in another case, and nesting deeper
// than MaxDepth (ErrTooDeep); the values the envelope needs are then decoded from the spans the
// scan kept, so params are read once and arguments are never decoded.
//
// A batch is refused here (ErrNotJSON); use ParseBody where batches are allowed.
//
// # Notes
//
// For initialize, the envelope's Client and ProtocolVersion come from the params (overriding c);
// otherwise, when c has no Client, from params._meta["io.modelcontextprotocol/clientInfo"].
func Parse(b []byte, c Context) (*Parsed, error) {
	s := scanner{b: b, sig: true}
	defer s.giveBack(s.borrow())
	s.ws()
	if s.i >= len(s.b) {
		return nil, ErrEmpty
	}
	if s.b[s.i] != '{' {
		if err := Check(b); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: a message must be a JSON object", ErrNotJSON)
	}
	p, err := s.message(c)
	if err != nil {
		return nil, err
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, s.bad("trailing data")
	}
	return p, nil
}

// ParseBody reads a POST body: one message or a batch (a JSON array of messages), each checked
// and turned into an envelope as Parse does. batch reports whether the body was an array. The
// array counts as one level of nesting.
func ParseBody(b []byte, c Context) (msgs []*Parsed, batch bool, err error) {
	return ParseBodyLimit(b, c, 0)
}

// ParseBodyLimit is ParseBody refusing a batch of more than maxElements elements
// (ErrBatchTooLarge) as soon as it reads one element more, before parsing the rest;
// maxElements 0 = no limit.
func ParseBodyLimit(b []byte, c Context, maxElements int) (msgs []*Parsed, batch bool, err error) {
	s := scanner{b: b, sig: true}
	s.ws()
	if s.i >= len(s.b) {
		return nil, false, ErrEmpty
	}
	if s.b[s.i] != '[' {
		p, err := Parse(b, c)
		if err != nil {
			return nil, false, err
		}
		return []*Parsed{p}, false, nil
	}
	defer s.giveBack(s.borrow())
	s.i++
	s.depth = 1
	for {
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' && len(msgs) == 0 {
			s.i++
			break
		}
		if s.i >= len(s.b) {
			return nil, true, s.bad("unterminated batch")
		}
		if maxElements > 0 && len(msgs) == maxElements {
			return nil, true, fmt.Errorf("%w: more than %d elements", ErrBatchTooLarge, maxElements)
		}
		if s.b[s.i] != '{' {
			if err := Check(b); err != nil {
				return nil, true, err
			}
			return nil, true, fmt.Errorf("%w: a batch element must be a JSON object", ErrNotJSON)
		}
		p, err := s.message(c)
		if err != nil {
			return nil, true, err
		}
		msgs = append(msgs, p)
		s.ws()
		if s.i >= len(s.b) {
			return nil, true, s.bad("unterminated batch")
		}
		if s.b[s.i] == ']' {
			s.i++
			break
		}
		if s.b[s.i] != ',' {
			return nil, true, s.bad("expected , or ] in batch")
		}
		s.i++
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, true, s.bad("trailing data")
	}
	if len(msgs) == 0 {
		return nil, true, ErrEmptyBatch
	}
	return msgs, true, nil
}

// ParseMessage decodes one JSON-RPC message with encoding/json, without Parse's strict checks
// (duplicate keys resolve to the last, keys match case-insensitively). It is for messages from
// upstreams, whose judging handles what it cannot read by the stage's failure mode; every client
// message the gateway judges goes through Parse.
func ParseMessage(b []byte) (*Message, error) {
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if m.JSONRPC != "2.0" {
		return nil, ErrBadVersion
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return nil, ErrNoMethod
	}
	if p := bytes.TrimSpace(m.Params); len(m.Params) > 0 && (len(p) == 0 || (p[0] != '{' && p[0] != '[' && string(p) != "null")) {
		return nil, ErrBadParams
	}
	return &m, nil
}

// NewEnvelope builds the request envelope of a message the gateway composed itself (a fixture,
// a playground call, a call named to the own MCP server): it is encoded and read back through
// Parse, so it meets the same rules as a message from the wire.
func NewEnvelope(m *Message, c Context) (*abi.Envelope, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("mcp: encode message: %w", err)
	}
	p, err := Parse(b, c)
	if err != nil {
		return nil, err
	}
	if p.Envelope == nil {
		return nil, ErrNoMethod
	}
	return p.Envelope, nil
}

// message scans the object at s.i and builds the Parsed from the kept spans.
func (s *scanner) message(c Context) (*Parsed, error) {
	s.slots = [numSlots]span{}
	if err := s.value(); err != nil {
		return nil, err
	}
	raw := func(k slot) json.RawMessage {
		if sp := s.slots[k]; sp.end > 0 {
			return s.b[sp.start:sp.end:sp.end]
		}
		return nil
	}
	// The Parsed, its Message and a request's Envelope are one allocation (parsedRequest,
	// parsedResponse): they live as long as one another.
	var (
		p   *Parsed
		m   *Message
		env *abi.Envelope
	)
	if raw(slotMethod) != nil {
		r := new(parsedRequest)
		p, m, env = &r.p, &r.m, &r.env
	} else {
		r := new(parsedResponse)
		p, m = &r.p, &r.m
	}
	*m = Message{JSONRPC: "2.0", ID: raw(slotID), Params: raw(slotParams), Result: raw(slotResult)}
	if v := raw(slotJSONRPC); !isString(v) || unquote(v) != "2.0" {
		return nil, ErrBadVersion
	}
	if v := raw(slotMethod); v != nil {
		if !isString(v) {
			return nil, fmt.Errorf("%w: method must be a string", ErrBadParams)
		}
		m.Method = unquote(v)
	}
	if v := raw(slotError); v != nil && string(v) != "null" {
		if v[0] != '{' {
			return nil, fmt.Errorf("%w: error must be an object", ErrNotJSON)
		}
		m.Error = &Error{}
		if err := json.Unmarshal(v, m.Error); err != nil {
			return nil, fmt.Errorf("%w: error: %v", ErrNotJSON, err)
		}
	}
	if len(m.ID) > 0 {
		switch m.ID[0] {
		case '{', '[', 't', 'f':
			return nil, ErrBadID
		}
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return nil, ErrNoMethod
	}
	if len(m.Params) > 0 && m.Params[0] != '{' && m.Params[0] != '[' && string(m.Params) != "null" {
		return nil, ErrBadParams
	}
	p.Message = m
	if m.Method == "" {
		return p, nil
	}
	if v := raw(slotSampling); v != nil && string(v) != "null" && m.Method == MethodInitialize {
		p.Sampling = true
	}
	p.ProgressToken = raw(slotProgressToken)
	*env = abi.Envelope{
		ABI:             abi.Version,
		Phase:           abi.PhaseRequest,
		Transport:       c.Transport,
		Method:          m.Method,
		RequestID:       m.ID,
		Server:          c.Server,
		Session:         c.Session,
		ProtocolVersion: c.ProtocolVersion,
		Client:          c.Client,
		Agent:           c.Agent,
		Cwd:             c.Cwd,
		Params:          m.Params,
		Principal:       c.Principal,
	}
	if m.Method == MethodInitialize {
		env.Client = client(raw(slotClientInfo), false)
		env.ProtocolVersion = ""
		if v := raw(slotProtocolVersion); isString(v) {
			env.ProtocolVersion = unquote(v)
		}
	}
	if env.Client == nil {
		env.Client = client(raw(slotMetaClientInfo), true)
	}
	if env.Agent == "" && env.Client != nil {
		env.Agent = env.Client.Name
	}
	str := func(k slot) string {
		if v := raw(k); isString(v) {
			return unquote(v)
		}
		return ""
	}
	switch m.Method {
	case MethodToolsCall:
		env.Tool, env.Arguments = str(slotName), raw(slotArguments)
	case MethodPromptsGet:
		env.Prompt, env.Arguments = str(slotName), raw(slotArguments)
	case MethodResourcesRead:
		env.URI = str(slotURI)
	}
	p.Envelope = env
	return p, nil
}

// parsedRequest and parsedResponse are what message allocates for a request or notification
// (a method, so an envelope) and for a response.
type (
	parsedRequest struct {
		p   Parsed
		m   Message
		env abi.Envelope
	}
	parsedResponse struct {
		p Parsed
		m Message
	}
)

// client decodes a clientInfo object; named requires a name (the stateless _meta form).
func client(v json.RawMessage, named bool) *abi.Client {
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	var c abi.Client
	if json.Unmarshal(v, &c) != nil || (named && c.Name == "") {
		return nil
	}
	return &c
}

func isString(v []byte) bool { return len(v) >= 2 && v[0] == '"' }

// unquote decodes a JSON string the scanner validated.
func unquote(v []byte) string {
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			_ = json.Unmarshal(v, &s)
			return s
		}
	}
	return string(inner)
}
