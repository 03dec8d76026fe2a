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
	// Principal is who is calling, as the transport verified it (host/authn: the access
	// token's principal on HTTP, LocalPrincipal in the local modes); nil = not known. It is
	// copied into every envelope built with this Context.
	Principal *abi.Principal
}

// Methods whose params name what they act on.
const (
	MethodToolsCall      = "tools/call"
	MethodToolsList      = "tools/list"
	MethodResourcesRead  = "resources/read"
	MethodPromptsGet     = "prompts/get"
	MethodInitialize     = "initialize"
	MethodServerDiscover = "server/discover"
	// MethodSubscriptionsListen is the stateless protocol's stream of notifications
	// (2026-07-28, SEP-2575): the client names the notifications it wants.
	MethodSubscriptionsListen = "subscriptions/listen"
	MethodSampling            = "sampling/createMessage"
	MethodElicitation         = "elicitation/create"
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

// Client capabilities a server→client request needs (initialize params.capabilities).
const (
	CapabilitySampling    = "sampling"
	CapabilityElicitation = "elicitation"
	CapabilityRoots       = "roots"
)

// MethodRootsList is the server→client request for the client's roots.
const MethodRootsList = "roots/list"

// NeededCapability returns the client capability a server→client request method needs, or ""
// for one every client answers (ping).
func NeededCapability(method string) string {
	switch method {
	case MethodSampling:
		return CapabilitySampling
	case MethodElicitation:
		return CapabilityElicitation
	case MethodRootsList:
		return CapabilityRoots
	}
	return ""
}

// Capabilities returns the client capabilities an initialize request's params declare (a
// capability present with any value but null). params was accepted by Parse, so no key repeats.
func Capabilities(params json.RawMessage) map[string]bool {
	var p struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	out := map[string]bool{}
	if json.Unmarshal(params, &p) != nil {
		return out
	}
	for k, v := range p.Capabilities {
		if len(v) > 0 && string(v) != "null" {
			out[k] = true
		}
	}
	return out
}

// AnswerEnvelope is the response-phase envelope of a client's answer m to a server→client
// request of method (sampling, elicitation, roots; "" when the transport does not know it).
func AnswerEnvelope(m *Message, c Context, method string) *abi.Envelope {
	env := &abi.Envelope{
		ABI: abi.Version, Phase: abi.PhaseResponse, Transport: c.Transport, Method: method,
		RequestID: m.ID, Server: c.Server, Session: c.Session, ProtocolVersion: c.ProtocolVersion,
		Client: c.Client, Agent: c.Agent, Cwd: c.Cwd, Result: m.Result, Principal: c.Principal,
	}
	if env.Agent == "" && env.Client != nil {
		env.Agent = env.Client.Name
	}
	if m.Error != nil {
		env.Error, _ = json.Marshal(m.Error)
	}
	return env
}
