package chain

import (
	"bytes"
	"encoding/json"
	"github.com/added060/palisade/host/internal/jsonenc/everyfield"
	"reflect"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// envelopeCases are envelopes whose encodings differ in every way appendEnvelope handles:
// members left out and present, strings that need escaping (HTML, control, U+2028, invalid
// UTF-8), raw members with white space and escapes, empty nested objects.
func envelopeCases() []*abi.Envelope {
	raw := json.RawMessage("{ \"path\" : \"a<b>&c\\\"d \\u2028\",\n\t\"n\": [1, 2.5e3, true, null, {\"k\":\"\u2028\u2029 x\"}] }")
	return []*abi.Envelope{
		{},
		{ABI: abi.Version, ID: "x", Phase: abi.PhaseRequest, Method: "tools/call"},
		{ABI: abi.Version, ID: "id\"1", Phase: abi.PhaseResponse, Time: "2026-12-01T00:00:00Z", Transport: "http", Method: "tools/call",
			RequestID: json.RawMessage(` 7 `), Server: "fs<1>", Session: "s&1", ProtocolVersion: "2025-06-18",
			Client: &abi.Client{}, Agent: "claude\tcode", Cwd: "/home/é/\x00x", Tool: "read\xff\xfe", Arguments: raw,
			URI: "file:///a\u2028b", Prompt: "p\u2029", Params: json.RawMessage(`{"name":"read","arguments":` + string(raw) + `}`),
			Result: json.RawMessage(`"a\\\\"`), Error: json.RawMessage(` {"code": -32000, "message": "no <way>"} `),
			Prior:     []abi.Prior{{Stage: "rules", Action: "allow", Score: 0.25, Labels: []string{"a"}}},
			ToolInfo:  &abi.ToolInfo{Name: "read", Description: "Reads <files>", InputSchema: json.RawMessage("{\"type\": \"object\"}"), BuiltIn: true},
			Engine:    &abi.Engine{Binary: "/usr/bin/palisade", Home: "/var/lib/p", Paths: []string{"/a", "/b&"}, Pids: []int{1, -2, 30000}},
			Principal: &abi.Principal{Issuer: "local", Subject: "dev", ClientID: "c", Scopes: []string{"read", "write"}}},
		{Method: "m", Client: &abi.Client{Version: "1"}, ToolInfo: &abi.ToolInfo{}, Engine: &abi.Engine{}, Principal: &abi.Principal{}},
		{Method: "m", Client: &abi.Client{Name: "n"}, Engine: &abi.Engine{Pids: []int{5}}, Arguments: json.RawMessage(`[]`), Result: json.RawMessage(`null`)},
	}
}

// TestAppendEnvelopeEqualsMarshal: the hand-written encoding is byte for byte json.Marshal's.
func TestAppendEnvelopeEqualsMarshal(t *testing.T) {
	for i, env := range envelopeCases() {
		want, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendEnvelope([]byte("prefix"), env)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got[len("prefix"):], want)
		}
	}
}

// FuzzAppendEnvelope: for any strings and any valid JSON raw member, appendEnvelope writes what
// json.Marshal writes.
func FuzzAppendEnvelope(f *testing.F) {
	f.Add("tool", "a<b>&\u2028", []byte(` {"a" : "x\u2029<"} `))
	f.Add("\xff", "\x01\"\\", []byte(`["\\\"", 1e9]`))
	f.Add("", "", []byte(`"\ud800"`))
	f.Fuzz(func(t *testing.T, s1, s2 string, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		env := &abi.Envelope{ABI: s1, Method: s2, Tool: s1 + s2, Arguments: raw, Result: raw,
			Client: &abi.Client{Name: s2}, ToolInfo: &abi.ToolInfo{Name: s1, InputSchema: raw}, Engine: &abi.Engine{Paths: []string{s1, s2}}}
		want, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendEnvelope(nil, env)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

func BenchmarkEncodeEnvelope(b *testing.B) {
	env := servedEnvelope()
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(env)
		}
	})
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			_, _ = appendEnvelope(make([]byte, 0, envelopeSize(env)), env)
		}
	})
}

// servedEnvelope is a served tools/call of server-everything's echo, as the gateway builds it.
func servedEnvelope() *abi.Envelope {
	return &abi.Envelope{ABI: abi.Version, ID: "01KB8ZQ6W3J9XK2V5R7T4M1N0P", Phase: abi.PhaseRequest, Time: "2026-12-01T22:00:00.123456Z",
		Transport: "http", Method: "tools/call", RequestID: json.RawMessage(`17`), Server: "everything", Session: "9f1c2d3e4b5a6978",
		ProtocolVersion: "2025-06-18", Client: &abi.Client{Name: "loadgen", Version: "1.0.0"}, Tool: "echo",
		Arguments: json.RawMessage(`{"message":"hello from the load generator, call 17"}`),
		Params:    json.RawMessage(`{"name":"echo","arguments":{"message":"hello from the load generator, call 17"}}`),
		ToolInfo: &abi.ToolInfo{Name: "echo", Description: "Echoes back the input",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`)},
		Engine:    &abi.Engine{Binary: "/usr/local/bin/palisade", Home: "/var/lib/palisade", Paths: []string{"/etc/palisade", "/var/lib/palisade/bundle"}},
		Principal: &abi.Principal{Issuer: "local", Subject: "dev"}}
}

// TestAppendEnvelopeOneAllocation: envelopeSize leaves room for a served envelope's whole
// encoding, so encoding it allocates its buffer once and never grows it.
func TestAppendEnvelopeOneAllocation(t *testing.T) {
	env := servedEnvelope()
	if n := testing.AllocsPerRun(100, func() { _, _ = appendEnvelope(make([]byte, 0, envelopeSize(env)), env) }); n != 1 {
		t.Errorf("%v allocations a served envelope, want 1", n)
	}
	b, _ := appendEnvelope(nil, env)
	if size := envelopeSize(env); size < len(b) || size > len(b)+512 {
		t.Errorf("envelopeSize %d for an encoding of %d bytes", size, len(b))
	}
}

// TestAppendEnvelopeEveryField: an envelope with every field of it and of the structs in it set
// (by reflection: a field added to the ABI later is set too) encodes as json.Marshal encodes it.
// The hand encoder once left out the principal's claims, and with them the groups a rule reads.
func TestAppendEnvelopeEveryField(t *testing.T) {
	var env abi.Envelope
	everyfield.Fill(reflect.ValueOf(&env).Elem())
	want, err := json.Marshal(&env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := appendEnvelope(nil, &env)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, member := range []string{`"claims":{"k":"v\u003c\u0026"}`, `"pids":[7]`, `"built_in":true`, `"version":"v\u003c\u0026"`} {
		if !bytes.Contains(got, []byte(member)) {
			t.Errorf("%s missing from %s", member, got)
		}
	}
}
