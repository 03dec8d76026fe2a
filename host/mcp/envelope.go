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

// MetaKeyClientInfo is where stateless (2026-07-28) requests carry clientInfo in params._meta.
const MetaKeyClientInfo = "io.modelcontextprotocol/clientInfo"
