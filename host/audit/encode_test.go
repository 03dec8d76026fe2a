package audit

import (
	"bytes"
	"encoding/json"
	"github.com/added060/palisade/host/internal/jsonenc/everyfield"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

// sameAsMarshal fails t unless appendEvent writes what json.Marshal writes for ev, or, where
// json.Marshal fails, declines (ok false) so that Record takes json.Marshal's path.
func sameAsMarshal(t testing.TB, ev *Event) []byte {
	t.Helper()
	want, err := json.Marshal(ev)
	got, ok := appendEvent([]byte("prefix"), ev)
	if err != nil {
		if ok {
			t.Fatalf("json.Marshal fails (%v) but appendEvent wrote %s", err, got)
		}
		return nil
	}
	if !ok {
		t.Fatalf("appendEvent declined an event json.Marshal encodes: %s", want)
	}
	if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("got  %s\nwant prefix%s", got, want)
	}
	return got[len("prefix"):]
}

// TestAppendEventEveryField: an event with every field of it and of the structs in it set (by
// reflection: a field added later is set too) encodes as json.Marshal encodes it.
func TestAppendEventEveryField(t *testing.T) {
	var ev Event
	everyfield.Fill(reflect.ValueOf(&ev).Elem())
	ev.Time = time.Date(2026, 12, 2, 3, 4, 5, 600700, time.FixedZone("x", 5*3600+30*60))
	got := sameAsMarshal(t, &ev)
	for _, member := range []string{`"chain":{"publisher":"v\u003c\u0026","seq":7,"prev":`, `"claims":{"k":"v\u003c\u0026"}`,
		`"score":0.25`, `"evidence":[{"label":`, `"uncertain":true`, `"disagrees":true`, `"dropped":true`, `"decision_id":`,
		`"note":`, `"arguments":{"a":["\u003cb\u003e",1]}`, `"time":"2026-12-02T03:04:05.0006007+05:30"`} {
		if !bytes.Contains(got, []byte(member)) {
			t.Errorf("%s missing from %s", member, got)
		}
	}
	// Every field, json names and all: a field json.Marshal writes that appendEvent left out
	// would have failed above; this names the ones the filled event carries, so a field whose
	// filled value were omitted (omitempty) is noticed too.
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	if n := reflect.TypeOf(ev).NumField(); len(m) != n {
		t.Errorf("%d members, Event has %d fields: %s", len(m), n, got)
	}
}

// TestAppendEventEqualsMarshal: events json.Marshal writes in ways that are easy to get wrong by
// hand (escapes, omitempty of empty structs and empty lists, floats, times, raw JSON), and the
// ones it refuses, which appendEvent must decline.
func TestAppendEventEqualsMarshal(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		ev      Event
		decline bool // json.Marshal fails on it
	}{
		{name: "zero", ev: Event{}},
		{name: "a decision", ev: Event{ID: "01J", Time: at, Kind: KindDecision, Gateway: "gw", Bundle: &Bundle{Name: "example", Version: "0.1.0", Digest: "sha256:ab"},
			Transport: "http", Method: "tools/call", Server: "go", Tool: "echo", RequestID: json.RawMessage(`7`), ArgumentsSHA256: "ab",
			Action: "allow", Reason: "no stage had an opinion", Stages: []abi.StageResult{{Stage: "rules", Phase: "request", Action: "none", LatencyUS: 3},
				{Stage: "detector", Score: 0.000123, Labels: []string{"a", "b"}}}, LatencyUS: 41, Upstream: &Upstream{Status: 200, LatencyUS: 90}}},
		{name: "escapes", ev: Event{ID: "\"\\\n\r\t\b\f\x00\x1f<>&\u2028\u2029é\xff", Time: at, Reason: "a\u2029b<script>", Rule: "\xc3\x28"}},
		{name: "raw with space, escapes, unicode", ev: Event{Time: at, RequestID: json.RawMessage(` "id<1>" `), Arguments: json.RawMessage("{ \"k\" :\n[ \"\u2028&\", {\"x\":\"\\\"<\"} ] }"), Detail: json.RawMessage(`null`)}},
		{name: "empty structs", ev: Event{Time: at, Upstream: &Upstream{}, Shadow: &Shadow{}, Approval: &Approval{}, Label: &Label{}, Bundle: &Bundle{}, Principal: &abi.Principal{},
			Stages: []abi.StageResult{{Evidence: []abi.Evidence{{}}}}, Chain: &Link{}}},
		{name: "empty lists", ev: Event{Time: at, Stages: []abi.StageResult{}, Arguments: json.RawMessage{}, Principal: &abi.Principal{Scopes: []string{}, Claims: map[string]any{}}}},
		{name: "floats", ev: Event{Time: at, Stages: []abi.StageResult{{Score: 1e-7}, {Score: 1e21}, {Score: -0.5}, {Score: 123456789.125}, {Score: math.Copysign(0, -1)}, {Score: 5e-324}}}},
		{name: "negative numbers", ev: Event{Time: at, LatencyUS: -3, Upstream: &Upstream{Status: -1, LatencyUS: -2}, Shadow: &Shadow{LatencyUS: -9}}},
		{name: "claims", ev: Event{Time: at, Principal: &abi.Principal{Issuer: "i", Subject: "s", Claims: map[string]any{"z": []any{"<g>", 1.5}, "a": map[string]any{"b": true}, "n": nil}}}},
		{name: "time with zone and nanoseconds", ev: Event{Time: time.Date(1999, 1, 2, 3, 4, 5, 120000000, time.FixedZone("", -(9*3600+30*60)))}},
		{name: "time year 0", ev: Event{Time: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "time offset with seconds", ev: Event{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3601))}},
		{name: "time offset 23:59", ev: Event{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600-60))}},
		{name: "time year 10000", ev: Event{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, decline: true},
		{name: "time year -1", ev: Event{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}, decline: true},
		{name: "time offset 24h", ev: Event{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", 24*3600))}, decline: true},
		{name: "time offset -24h", ev: Event{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("", -24*3600))}, decline: true},
		{name: "raw not JSON", ev: Event{Time: at, Arguments: json.RawMessage(`{"a":`)}, decline: true},
		{name: "raw two values", ev: Event{Time: at, Detail: json.RawMessage(`1 2`)}, decline: true},
		{name: "request id not JSON", ev: Event{Time: at, RequestID: json.RawMessage(`abc`)}, decline: true},
		{name: "NaN score", ev: Event{Time: at, Stages: []abi.StageResult{{Score: math.NaN()}}}, decline: true},
		{name: "infinite score", ev: Event{Time: at, Stages: []abi.StageResult{{Score: math.Inf(-1)}}}, decline: true},
		{name: "claim json refuses", ev: Event{Time: at, Principal: &abi.Principal{Claims: map[string]any{"f": math.Inf(1)}}}, decline: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := json.Marshal(&tc.ev)
			if (err != nil) != tc.decline {
				t.Fatalf("json.Marshal error %v, the case says decline=%v", err, tc.decline)
			}
			if _, ok := appendEvent(nil, &tc.ev); ok == tc.decline {
				t.Fatalf("appendEvent ok=%v, want %v", ok, !tc.decline)
			}
			sameAsMarshal(t, &tc.ev)
		})
	}
}

// FuzzAppendEvent: for any strings, raw bytes, score and time, appendEvent writes what
// json.Marshal writes, or declines where json.Marshal fails.
func FuzzAppendEvent(f *testing.F) {
	f.Add("01J<&>", "tools/call", []byte(`{"a": [1, "<b>"]}`), []byte(`7`), 0.5, int64(1764644645), int64(123), 0)
	f.Add("\xff\u2028\"", "", []byte(`{`), []byte(` "x" `), math.NaN(), int64(-62135596801), int64(0), 3600)
	f.Add("", "\x00", []byte(nil), []byte(`null`), 1e-9, int64(253402300800), int64(999999999), -86400)
	f.Fuzz(func(t *testing.T, s, m string, args, id []byte, score float64, sec, nsec int64, off int) {
		ev := Event{
			Chain: &Link{Publisher: s, Seq: uint64(len(m)), Prev: m}, ID: s, Time: time.Unix(sec, nsec).In(time.FixedZone(m, off)), Kind: m,
			Gateway: s, Bundle: &Bundle{Name: m, Version: s}, Method: m, Tool: s, RequestID: id, Arguments: args, Detail: id,
			Principal: &abi.Principal{Issuer: s, Subject: m, Scopes: []string{s, m}, Claims: map[string]any{s: m, m: score}},
			Reason:    s, Stages: []abi.StageResult{{Stage: m, Score: score, Labels: []string{s}, Evidence: []abi.Evidence{{Match: s, Rules: []string{m}}}}},
			LatencyUS: sec, Upstream: &Upstream{Status: off, Error: s}, Shadow: &Shadow{Reason: m, Dropped: off%2 == 0},
			Approval: &Approval{ID: s, Decision: m}, Label: &Label{Note: s},
		}
		sameAsMarshal(t, &ev)
	})
}

// BenchmarkEncodeEvent: the decision event a served tools/call records, by json.Marshal and by
// appendEvent into a reused buffer (what Record does now).
func BenchmarkEncodeEvent(b *testing.B) {
	ev := Event{ID: "01KBF3J8Y7D1V0Q5ZC3W2M4N6P", Time: time.Now().UTC(), Kind: KindDecision, Gateway: "gw-1",
		Bundle:    &Bundle{Name: "example", Version: "0.1.0", Digest: "sha256:0f3c9a1b7d4e2f60c8b5a9d3e1f7c2b4a6d8e0f1c3b5a7d9e2f4c6b8a0d1e3f5"},
		Transport: "http", Method: "tools/call", Server: "go", Tool: "echo", RequestID: json.RawMessage(`17`),
		ArgumentsSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Action: "allow",
		Reason: "no stage had an opinion; bundle default allow", LatencyUS: 212,
		Stages: []abi.StageResult{{Stage: "rules", Phase: "request", Action: "none", LatencyUS: 9}, {Stage: "injection", Phase: "request", Action: "none", LatencyUS: 21},
			{Stage: "detector", Phase: "request", Action: "none", Score: 0.0123, LatencyUS: 19}, {Stage: "risk", Phase: "request", Action: "none", LatencyUS: 7}},
		Upstream: &Upstream{Status: 200, LatencyUS: 180}}
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendEvent", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var ok bool
			if buf, ok = appendEvent(buf[:0], &ev); !ok {
				b.Fatal("declined")
			}
		}
	})
}
