package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/added060/palisade/sdk/go/abi"
)

func utf8Valid(b []byte) bool { return utf8.Valid(b) }

func TestParseBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		err   error
		batch bool
		n     int
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil, false, 1},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, nil, true, 2},
		{"empty", `  `, ErrEmpty, false, 0},
		{"empty batch", `[]`, ErrEmptyBatch, true, 0},
		{"not json", `{`, ErrNotJSON, false, 0},
		{"trailing", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, ErrNotJSON, false, 0},
		{"batch of scalars", `[1]`, ErrNotJSON, true, 0},
		{"bad version", `{"jsonrpc":"1.0","id":1,"method":"x"}`, ErrBadVersion, false, 0},
		{"numeric version", `{"jsonrpc":2.0,"id":1,"method":"x"}`, ErrBadVersion, false, 0},
		{"no method", `{"jsonrpc":"2.0","id":1}`, ErrNoMethod, false, 0},
		{"scalar params", `{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}`, ErrBadParams, false, 0},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"x"}`, ErrBadID, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, batch, err := ParseBody([]byte(tc.body), Context{})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || batch != tc.batch || len(msgs) != tc.n {
				t.Fatalf("got %d msgs batch=%v err=%v", len(msgs), batch, err)
			}
		})
	}
}

// nested returns a tools/call whose arguments nest depth levels of open (and its close).
func nested(open, close string, depth int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":`)
	b.WriteString(strings.Repeat(open, depth))
	b.WriteString("1")
	b.WriteString(strings.Repeat(close, depth))
	b.WriteString(`}}`)
	return b.Bytes()
}

// TestStrictTable: nesting depth and ambiguous keys, over Parse and ParseBody.
func TestStrictTable(t *testing.T) {
	// The message object and params are two levels; the arguments value adds the rest.
	const room = MaxDepth - 2
	for _, tc := range []struct {
		name string
		body []byte
		err  error // nil = accepted
	}{
		{"arrays at the limit", nested("[", "]", room), nil},
		{"arrays one past the limit", nested("[", "]", room+1), ErrTooDeep},
		{"objects at the limit", nested(`{"a":`, "}", room), nil},
		{"objects one past the limit", nested(`{"a":`, "}", room+1), ErrTooDeep},
		{"4 MiB of open arrays", append([]byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":`), bytes.Repeat([]byte("["), 4<<20)...), ErrTooDeep},
		{"800k open objects", bytes.Repeat([]byte(`{"a":`), 800_000), ErrTooDeep},
		{"deep but unterminated", []byte(strings.Repeat("[", 10)), ErrNotJSON},
		{"batch counts as a level", []byte(`[` + string(nested("[", "]", room)) + `]`), ErrTooDeep},
		{"duplicate top key", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`), ErrAmbiguousKeys},
		{"duplicate id", []byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`), ErrAmbiguousKeys},
		{"miscased method", []byte(`{"jsonrpc":"2.0","id":1,"Method":"tools/call"}`), ErrAmbiguousKeys},
		{"miscased params", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","pArAms":{"name":"evil"}}`), ErrAmbiguousKeys},
		{"name twice in two cases", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"evil"}}`), ErrAmbiguousKeys},
		{"NAME alone", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"evil"}}`), ErrAmbiguousKeys},
		{"duplicate argument", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"p":1,"p":2}}}`), ErrAmbiguousKeys},
		{"duplicate deep inside", nested(`{"a":`, `,"A":2}`, 20), ErrAmbiguousKeys},
		{"escaped duplicate", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","n\u0061me":"y"}}`), ErrAmbiguousKeys},
		{"long s folds to s", []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"ſ":1,"s":2}}`), ErrAmbiguousKeys},
		{"kelvin folds to k", []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"K":1,"k":2}}`), ErrAmbiguousKeys},
		{"duplicate in the 40th key", manyKeys(40, true), ErrAmbiguousKeys},
		{"40 distinct keys", manyKeys(40, false), nil},
		{"duplicate in a batch element", []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}]`), ErrAmbiguousKeys},
		{"same key in sibling objects", []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":{"k":1},"b":{"k":1}}}`), nil},
		{"miscased key in arguments is fine", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"Name":"fine","path":"/a"}}}`), nil},
		{"miscased key outside params is fine", []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a"},"extra":{"Uri":1}}`), nil},
		{"invalid UTF-8", []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":\"\xff\"}}"), ErrNotJSON},
		{"control character", []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\\n\"}"), nil},
		{"raw newline in string", []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\n\"}"), ErrNotJSON},
		{"leading zero", []byte(`{"jsonrpc":"2.0","id":01,"method":"x"}`), ErrNotJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseBody(tc.body, Context{})
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("ParseBody = %v, want %v", err, tc.err)
			}
		})
	}
}

func manyKeys(n int, dup bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		k := i
		if dup && i == n-1 {
			k = 3
		}
		b.WriteString(`"k` + strings.Repeat("x", k) + `":1`)
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// TestDeepBodyIsCheap: a 4 MiB body nested as deep as it can go is refused after reading at
// most MaxDepth levels, allocating next to nothing (the old recursive checker took ~0.8 GB).
func TestDeepBodyIsCheap(t *testing.T) {
	body := bytes.Repeat([]byte(`{"a":`), (4<<20)/5)
	allocs := testing.AllocsPerRun(5, func() {
		if _, _, err := ParseBody(body, Context{}); !errors.Is(err, ErrTooDeep) {
			t.Fatalf("err = %v", err)
		}
	})
	if allocs > 40 {
		t.Errorf("%v allocations to refuse a deep body", allocs)
	}
}

func TestEnvelope(t *testing.T) {
	p, err := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-env","arguments":{"name":"HOME"},"_meta":{"progressToken":"t1","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2"}}}}`), Context{Server: "s", Session: "x"})
	if err != nil {
		t.Fatal(err)
	}
	env := p.Envelope
	if env.Tool != "get-env" || string(env.Arguments) != `{"name":"HOME"}` || env.Agent != "claude-code" || env.Client.Version != "2" || env.Server != "s" || env.Session != "x" {
		t.Fatalf("envelope %+v", env)
	}
	if string(p.ProgressToken) != `"t1"` {
		t.Fatalf("progress token %s", p.ProgressToken)
	}
	for _, tc := range []struct {
		body string
		want func(p *Parsed) bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}`, func(p *Parsed) bool { return p.Envelope.URI == "file:///x" && p.Envelope.Tool == "" }},
		{`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"a":"b"}}}`, func(p *Parsed) bool { return p.Envelope.Prompt == "p" }},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t\u0041"}}`, func(p *Parsed) bool { return p.Envelope.Tool == "tA" }},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"1"},"capabilities":{"sampling":{}}}}`, func(p *Parsed) bool {
			return p.Sampling && p.Envelope.Client.Name == "c" && p.Envelope.ProtocolVersion == "2025-06-18"
		}},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"sampling":null}}}`, func(p *Parsed) bool { return !p.Sampling }},
		{`{"jsonrpc":"2.0","id":"a","result":{"x":1}}`, func(p *Parsed) bool { return p.Envelope == nil && p.Message.IsResponse() }},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"m"}}`, func(p *Parsed) bool { return p.Message.Error.Code == -1 }},
	} {
		p, err := Parse([]byte(tc.body), Context{})
		if err != nil || !tc.want(p) {
			t.Errorf("Parse(%s) = %+v, %v", tc.body, p, err)
		}
	}
	env, err = NewEnvelope(&Message{JSONRPC: "2.0", Method: MethodToolsCall, Params: json.RawMessage(`{"name":"a","arguments":{}}`)}, Context{Transport: "fixture"})
	if err != nil || env.Tool != "a" || env.Transport != "fixture" {
		t.Fatalf("NewEnvelope = %+v, %v", env, err)
	}
	if _, err := NewEnvelope(&Message{JSONRPC: "2.0", Method: MethodToolsCall, Params: json.RawMessage(`{"name":"a","name":"b"}`)}, Context{}); err == nil {
		t.Fatal("NewEnvelope accepted a duplicate key")
	}
}

var benchRequest = []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/home/dev/project/README.md","encoding":"utf-8","lines":[1,2,3],"opts":{"follow":true,"max":4096}},"_meta":{"progressToken":"t"}}}`)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		if _, err := Parse(benchRequest, Context{Transport: "http", Server: "s"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDeep(b *testing.B) {
	body := bytes.Repeat([]byte(`{"a":`), (4<<20)/5)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body, Context{}); !errors.Is(err, ErrTooDeep) {
			b.Fatal(err)
		}
	}
}

func TestParseBodyLimit(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	batch := func(n int) []byte { return []byte("[" + strings.TrimSuffix(strings.Repeat(ping+",", n), ",") + "]") }
	for _, tc := range []struct {
		name     string
		body     []byte
		max      int
		n        int
		tooLarge bool
	}{
		{"at the limit", batch(3), 3, 3, false},
		{"one over", batch(4), 3, 0, true},
		{"no limit", batch(500), 0, 500, false},
		{"single message", []byte(ping), 1, 1, false},
		// Refused at element max+1: what follows is never read, broken or not.
		{"over then broken", append(batch(2)[:len(batch(2))-1], []byte(`,{"jsonrpc":"2.0","id":1,"method":"ping"},{`)...), 2, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, _, err := ParseBodyLimit(tc.body, Context{}, tc.max)
			if tc.tooLarge != errors.Is(err, ErrBatchTooLarge) || (!tc.tooLarge && (err != nil || len(msgs) != tc.n)) {
				t.Fatalf("%d msgs, err %v; want %d, too large %v", len(msgs), err, tc.n, tc.tooLarge)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	caps := Capabilities(json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"sampling":{},"roots":{"listChanged":true},"elicitation":null}}`))
	if !caps[CapabilitySampling] || !caps[CapabilityRoots] || caps[CapabilityElicitation] {
		t.Fatalf("Capabilities = %v; want sampling and roots (elicitation is null)", caps)
	}
	for method, want := range map[string]string{MethodSampling: CapabilitySampling, MethodElicitation: CapabilityElicitation, MethodRootsList: CapabilityRoots, "ping": ""} {
		if got := NeededCapability(method); got != want {
			t.Errorf("NeededCapability(%s) = %q, want %q", method, got, want)
		}
	}
}

// The transport's principal reaches the request, response and answer envelopes.
func TestEnvelopePrincipal(t *testing.T) {
	who := &abi.Principal{Issuer: "https://login.example.com", Subject: "alice", Claims: map[string]any{"groups": []any{"sre"}}}
	c := Context{Transport: "http", Principal: who}
	p, err := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy_api"}}`), c)
	if err != nil || p.Envelope.Principal != who {
		t.Fatalf("request envelope principal = %+v, %v", p.Envelope.Principal, err)
	}
	resp := ResponseEnvelope(p.Envelope, &Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: json.RawMessage(`{}`)})
	if resp.Principal != who {
		t.Errorf("response envelope principal = %+v", resp.Principal)
	}
	ans := AnswerEnvelope(&Message{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: json.RawMessage(`{}`)}, c, MethodSampling)
	if ans.Principal != who {
		t.Errorf("answer envelope principal = %+v", ans.Principal)
	}
	if p, _ := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), Context{}); p.Envelope.Principal != nil {
		t.Errorf("no principal in the context, envelope has %+v", p.Envelope.Principal)
	}
}

// TestParseReusesBuffers: the scanner's buffers come from a pool (scanBufs), so a parse starts
// with what an earlier one left: each message below, parsed after every other (one with a key
// set past 16 keys, one refused halfway, one deep, a batch), answers as it did alone. A key of
// the previous message must not count as a duplicate, and a duplicate must still be found.
func TestParseReusesBuffers(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{`)
	for i := range 40 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	many.WriteString(`"K7":0}}}`) // a case-folded duplicate past the key set's threshold
	bodies := [][]byte{
		benchRequest,
		[]byte(many.String()),
		[]byte(strings.Replace(many.String(), `"K7":0`, `"last":0`, 1)),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"evil"}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"k1":1,"k0":{"k7":[{"name":1}]}}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,2,{"y":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}]}}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":` + strings.Repeat(`{"a":`, MaxDepth+2)),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"unterminated`),
	}
	type answer struct {
		tool string
		err  string
	}
	parse := func(b []byte) answer {
		msgs, _, err := ParseBody(b, Context{Transport: "http"})
		if err != nil {
			return answer{err: err.Error()}
		}
		return answer{tool: msgs[0].Envelope.Tool}
	}
	alone := make([]answer, len(bodies))
	for i, b := range bodies {
		scanBufs = sync.Pool{New: func() any { return new(scanBuf) }} // nothing left by another parse
		alone[i] = parse(b)
	}
	if alone[1].err == "" || alone[2].err != "" || alone[3].err == "" || alone[4].err != "" || alone[0].tool != "read_file" {
		t.Fatalf("the messages alone: %+v", alone)
	}
	for range 3 {
		for i := range bodies {
			for j := range bodies {
				parse(bodies[j])
				if got := parse(bodies[i]); got != alone[i] {
					t.Fatalf("message %d after message %d: %+v, alone %+v", i, j, got, alone[i])
				}
			}
		}
	}
	for range 3 { // Check (an upstream's answers) takes the same buffers
		for i, b := range bodies {
			if err := Check(b); (err != nil) != (alone[i].err != "") {
				t.Fatalf("Check(message %d) = %v, Parse alone %q", i, err, alone[i].err)
			}
		}
	}
	batch := []byte("[" + string(bodies[0]) + "," + string(bodies[4]) + "]")
	for range 3 {
		msgs, isBatch, err := ParseBody(batch, Context{})
		if err != nil || !isBatch || len(msgs) != 2 || msgs[1].Envelope.Tool != "a" {
			t.Fatalf("batch: %v %v %v", msgs, isBatch, err)
		}
		parse(bodies[1])
	}
}
