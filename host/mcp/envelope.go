package mcp

import (
	"encoding/json"

	"github.com/added060/palisade/sdk/go/abi"
)

// Context is what the transport knows about the message beyond its body.
type Context struct {
	Transport       string // http, stdio, hook, mcp
	Server          string // upstream name
	Session         string
	ProtocolVersion string
	Client          *abi.Client
	Agent           string
	Cwd             string
}

// Methods whose params name what they act on.
const (
	MethodToolsCall      = "tools/call"
	MethodToolsList      = "tools/list"
	MethodResourcesRead  = "resources/read"
	MethodPromptsGet     = "prompts/get"
	MethodInitialize     = "initialize"
	MethodServerDiscover = "server/discover"
	MethodSampling       = "sampling/createMessage"
	MethodElicitation    = "elicitation/create"
)

type targetParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	URI       string          `json:"uri"`
}

// Target returns what a request acts on: the tool or prompt name, or the resource URI.
func Target(m *Message) (name, uri string, args json.RawMessage) {
	if len(m.Params) == 0 || m.Params[0] != '{' {
		return "", "", nil
	}
	var p targetParams
	if json.Unmarshal(m.Params, &p) != nil {
		return "", "", nil
	}
	return p.Name, p.URI, p.Arguments
}

// Envelope builds the request-phase envelope for m. id is the audit id of the decision.
func Envelope(m *Message, c Context, id string) *abi.Envelope {
	env := &abi.Envelope{
		ABI:             abi.Version,
		ID:              id,
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
	}
	if env.Client == nil {
		env.Client = MetaClientInfo(m.Params)
	}
	if env.Agent == "" && env.Client != nil {
		env.Agent = env.Client.Name
	}
	name, uri, args := Target(m)
	switch m.Method {
	case MethodToolsCall:
		env.Tool = name
		env.Arguments = args
	case MethodPromptsGet:
		env.Prompt = name
		env.Arguments = args
	case MethodResourcesRead:
		env.URI = uri
	}
	return env
}

// ResponseEnvelope derives the response-phase envelope from a request envelope and the upstream's
// response.
func ResponseEnvelope(req *abi.Envelope, resp *Message) *abi.Envelope {
	env := *req
	env.Phase = abi.PhaseResponse
	env.Prior = nil
	env.Result = resp.Result
	if resp.Error != nil {
		b, _ := json.Marshal(resp.Error)
		env.Error = b
	}
	return &env
}

// ClientInfo extracts clientInfo and protocolVersion from initialize params.
func ClientInfo(params json.RawMessage) (*abi.Client, string) {
	var p struct {
		ProtocolVersion string      `json:"protocolVersion"`
		ClientInfo      *abi.Client `json:"clientInfo"`
	}
	_ = json.Unmarshal(params, &p)
	return p.ClientInfo, p.ProtocolVersion
}

// MetaKeyClientInfo is where stateless (2026-07-28) requests carry clientInfo in params._meta.
const MetaKeyClientInfo = "io.modelcontextprotocol/clientInfo"

// MetaClientInfo returns the clientInfo a stateless request carries in params._meta, if any.
func MetaClientInfo(params json.RawMessage) *abi.Client {
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta == nil {
		return nil
	}
	raw, ok := p.Meta[MetaKeyClientInfo]
	if !ok {
		return nil
	}
	var c abi.Client
	if json.Unmarshal(raw, &c) != nil || c.Name == "" {
		return nil
	}
	return &c
}

// ProgressToken returns params._meta.progressToken, if the client gave one.
func ProgressToken(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta.ProgressToken
}

// DeclaresSampling reports whether initialize params declare the client's sampling capability.
func DeclaresSampling(params json.RawMessage) bool {
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	v, ok := p.Capabilities["sampling"]
	return ok && string(v) != "null"
}
