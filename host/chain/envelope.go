package chain

import (
	"encoding/json"
	"strconv"

	"github.com/added060/palisade/host/internal/jsonenc"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/go/jsonw"
)

// appendEnvelope appends env's JSON encoding to dst: byte for byte what json.Marshal(env) writes
// (TestAppendEnvelopeEqualsMarshal, FuzzAppendEnvelope), without its reflection, and without
// checking again the raw members (request_id, arguments, params, result, error, the tool's
// input_schema) that were parsed before they got there: the message's own parse, a stage's
// rewrite by DecodeVerdict (readRaw checks it is JSON). It reports an error only where
// json.Marshal would for that reason (a prior score or a claim that JSON cannot hold). Every
// field of the envelope and of the structs in it must be written here:
// TestAppendEnvelopeEveryField fills each one by reflection, so a field added to the ABI and
// not here fails it.
func appendEnvelope(dst []byte, env *abi.Envelope) ([]byte, error) {
	dst = append(dst, `{"abi":`...)
	dst = jsonw.AppendStringStd(dst, env.ABI)
	dst = append(dst, `,"id":`...)
	dst = jsonw.AppendStringStd(dst, env.ID)
	dst = append(dst, `,"phase":`...)
	dst = jsonw.AppendStringStd(dst, env.Phase)
	dst = jsonenc.OptString(dst, `,"time":`, env.Time)
	dst = jsonenc.OptString(dst, `,"transport":`, env.Transport)
	dst = append(dst, `,"method":`...)
	dst = jsonw.AppendStringStd(dst, env.Method)
	dst = jsonenc.OptRaw(dst, `,"request_id":`, env.RequestID)
	dst = jsonenc.OptString(dst, `,"server":`, env.Server)
	dst = jsonenc.OptString(dst, `,"session":`, env.Session)
	dst = jsonenc.OptString(dst, `,"protocol_version":`, env.ProtocolVersion)
	if c := env.Client; c != nil {
		dst = append(dst, `,"client":{`...)
		n := len(dst)
		dst = jsonenc.OptString(dst, `,"name":`, c.Name)
		dst = jsonenc.OptString(dst, `,"version":`, c.Version)
		dst = jsonenc.CloseObject(dst, n)
	}
	dst = jsonenc.OptString(dst, `,"agent":`, env.Agent)
	dst = jsonenc.OptString(dst, `,"cwd":`, env.Cwd)
	dst = jsonenc.OptString(dst, `,"tool":`, env.Tool)
	dst = jsonenc.OptRaw(dst, `,"arguments":`, env.Arguments)
	dst = jsonenc.OptString(dst, `,"uri":`, env.URI)
	dst = jsonenc.OptString(dst, `,"prompt":`, env.Prompt)
	dst = jsonenc.OptRaw(dst, `,"params":`, env.Params)
	dst = jsonenc.OptRaw(dst, `,"result":`, env.Result)
	dst = jsonenc.OptRaw(dst, `,"error":`, env.Error)
	if len(env.Prior) > 0 {
		// Rare on this path (the prior is spliced into each group's input, withPrior), and
		// holds floats: encoding/json writes them.
		b, err := json.Marshal(env.Prior)
		if err != nil {
			return dst, err
		}
		dst = append(dst, `,"prior":`...)
		dst = append(dst, b...)
	}
	if ti := env.ToolInfo; ti != nil {
		dst = append(dst, `,"tool_info":{"name":`...)
		dst = jsonw.AppendStringStd(dst, ti.Name)
		dst = jsonenc.OptString(dst, `,"description":`, ti.Description)
		dst = jsonenc.OptRaw(dst, `,"input_schema":`, ti.InputSchema)
		if ti.BuiltIn {
			dst = append(dst, `,"built_in":true`...)
		}
		dst = append(dst, '}')
	}
	if e := env.Engine; e != nil {
		dst = append(dst, `,"engine":{`...)
		n := len(dst)
		dst = jsonenc.OptString(dst, `,"binary":`, e.Binary)
		dst = jsonenc.OptString(dst, `,"home":`, e.Home)
		dst = jsonenc.OptList(dst, `,"paths":`, e.Paths, jsonw.AppendStringStd)
		dst = jsonenc.OptList(dst, `,"pids":`, e.Pids, func(dst []byte, p int) []byte { return strconv.AppendInt(dst, int64(p), 10) })
		dst = jsonenc.CloseObject(dst, n)
	}
	dst, err := jsonenc.AppendPrincipal(dst, env.Principal)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// envelopeSize is about the size of env's encoding when nothing needs escaping: its members'
// bytes and their keys, so the buffer is seldom grown and not much larger than needed.
func envelopeSize(env *abi.Envelope) int {
	n := 256 + len(env.ABI) + len(env.ID) + len(env.Phase) + len(env.Time) + len(env.Transport) + len(env.Method) +
		len(env.RequestID) + len(env.Server) + len(env.Session) + len(env.ProtocolVersion) + len(env.Agent) + len(env.Cwd) +
		len(env.Tool) + len(env.Arguments) + len(env.URI) + len(env.Prompt) + len(env.Params) + len(env.Result) + len(env.Error)
	if c := env.Client; c != nil {
		n += 32 + len(c.Name) + len(c.Version)
	}
	if ti := env.ToolInfo; ti != nil {
		n += 64 + len(ti.Name) + len(ti.Description) + len(ti.InputSchema)
	}
	if e := env.Engine; e != nil {
		n += 64 + len(e.Binary) + len(e.Home) + 12*len(e.Pids)
		for _, p := range e.Paths {
			n += 3 + len(p)
		}
	}
	if p := env.Principal; p != nil {
		n += 64 + len(p.Issuer) + len(p.Subject) + len(p.ClientID)
		for _, s := range p.Scopes {
			n += 3 + len(s)
		}
	}
	return n
}
