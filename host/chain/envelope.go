package chain

import (
	"encoding/json"
	"strconv"

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
	dst = optString(dst, `,"time":`, env.Time)
	dst = optString(dst, `,"transport":`, env.Transport)
	dst = append(dst, `,"method":`...)
	dst = jsonw.AppendStringStd(dst, env.Method)
	dst = optRaw(dst, `,"request_id":`, env.RequestID)
	dst = optString(dst, `,"server":`, env.Server)
	dst = optString(dst, `,"session":`, env.Session)
	dst = optString(dst, `,"protocol_version":`, env.ProtocolVersion)
	if c := env.Client; c != nil {
		dst = append(dst, `,"client":{`...)
		n := len(dst)
		dst = optString(dst, `,"name":`, c.Name)
		dst = optString(dst, `,"version":`, c.Version)
		dst = closeObject(dst, n)
	}
	dst = optString(dst, `,"agent":`, env.Agent)
	dst = optString(dst, `,"cwd":`, env.Cwd)
	dst = optString(dst, `,"tool":`, env.Tool)
	dst = optRaw(dst, `,"arguments":`, env.Arguments)
	dst = optString(dst, `,"uri":`, env.URI)
	dst = optString(dst, `,"prompt":`, env.Prompt)
	dst = optRaw(dst, `,"params":`, env.Params)
	dst = optRaw(dst, `,"result":`, env.Result)
	dst = optRaw(dst, `,"error":`, env.Error)
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
		dst = optString(dst, `,"description":`, ti.Description)
		dst = optRaw(dst, `,"input_schema":`, ti.InputSchema)
		if ti.BuiltIn {
			dst = append(dst, `,"built_in":true`...)
		}
		dst = append(dst, '}')
	}
	if e := env.Engine; e != nil {
		dst = append(dst, `,"engine":{`...)
		n := len(dst)
		dst = optString(dst, `,"binary":`, e.Binary)
		dst = optString(dst, `,"home":`, e.Home)
		dst = optList(dst, `,"paths":`, e.Paths, jsonw.AppendStringStd)
		dst = optList(dst, `,"pids":`, e.Pids, func(dst []byte, p int) []byte { return strconv.AppendInt(dst, int64(p), 10) })
		dst = closeObject(dst, n)
	}
	if p := env.Principal; p != nil {
		dst = append(dst, `,"principal":{"issuer":`...)
		dst = jsonw.AppendStringStd(dst, p.Issuer)
		dst = append(dst, `,"subject":`...)
		dst = jsonw.AppendStringStd(dst, p.Subject)
		dst = optString(dst, `,"client_id":`, p.ClientID)
		dst = optList(dst, `,"scopes":`, p.Scopes, jsonw.AppendStringStd)
		if len(p.Claims) > 0 {
			// Free JSON values by claim name (groups, roles): encoding/json writes them, its
			// keys sorted, as it did for the whole envelope.
			b, err := json.Marshal(p.Claims)
			if err != nil {
				return dst, err
			}
			dst = append(append(dst, `,"claims":`...), b...)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// closeObject ends an object whose members were each written with a leading comma from n on:
// the first member's comma is dropped.
func closeObject(dst []byte, n int) []byte {
	if len(dst) > n {
		copy(dst[n:], dst[n+1:])
		dst = dst[:len(dst)-1]
	}
	return append(dst, '}')
}

// optString appends key and s unless s is empty (omitempty).
func optString(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return jsonw.AppendStringStd(append(dst, key...), s)
}

// optList appends key and the array of xs, each written by one, unless xs is empty (omitempty).
func optList[T any](dst []byte, key string, xs []T, one func([]byte, T) []byte) []byte {
	if len(xs) == 0 {
		return dst
	}
	dst = append(append(dst, key...), '[')
	for i, x := range xs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = one(dst, x)
	}
	return append(dst, ']')
}

// optRaw appends key and the JSON text raw unless raw is empty (omitempty).
func optRaw(dst []byte, key string, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return dst
	}
	return jsonw.AppendCompact(append(dst, key...), raw)
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
