package ruleset

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/plugins/internal/corpus"
	"github.com/added060/palisade/sdk/go/abi"
)

// TestViewResultsMatch: the example bundle's rules and the self-guard decide every envelope of
// the corpus the same on its view as on the JSON: the same rule, match and tools/list hiding,
// byte for byte the same verdict. Each request is also tried with the engine's own paths and a
// principal, which the self-guard and principal rules read.
func TestViewResultsMatch(t *testing.T) {
	raw, err := os.ReadFile("../../../examples/bundle/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	example, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	principal := json.RawMessage(`{"issuer":"local","subject":"ann","scopes":["mcp:tools"],"claims":{"groups":["sre"]}}`)
	var envs [][]byte
	for _, env := range corpus.Envelopes(t, 2) {
		envs = append(envs, env)
		var e abi.Envelope
		if json.Unmarshal(env, &e) == nil && e.Phase == abi.PhaseRequest {
			e.Engine, e.Cwd = eng, "/home/ann/project"
			var p abi.Principal
			_ = json.Unmarshal(principal, &p)
			e.Principal = &p
			b, _ := json.Marshal(e)
			envs = append(envs, b)
		}
	}
	// Calls the rules are about: the engine's own files and commands, the example's tools.
	for _, c := range []struct{ tool, server, args string }{
		{"Bash", "", `{"command":"cat /srv/guard/data/nats-auth/approver.nk"}`},
		{"Bash", "", `{"command":"kill -9 4242"}`},
		{"Bash", "", `{"command":"/opt/pal/bin/palisade approvals approve 01J"}`},
		{"Bash", "", `{"command":"palisade bundle activate ./evil"}`},
		{"Bash", "", `{"command":"sed -i s/deny/allow/ /tmp/.staging-123456/rules.yaml && echo ok"}`},
		{"Bash", "", `{"command":"ls -la ~/project"}`},
		{"Edit", "", `{"file_path":"/home/ann/.claude/settings.json","old_string":"a","new_string":"b"}`},
		{"Read", "", `{"file_path":"~/.claude/settings.json"}`},
		{"move_file", "fs", `{"source":"/tmp/x","destination":"/srv/guard/bundle/rules.yaml"}`},
		{"get-env", "everything", `{"name":"AWS_SECRET_ACCESS_KEY"}`},
		{"printEnv", "everything", `{}`},
		{"echo", "everything", `{"message":"hi"}`},
		{"echo", "other", `{"message":"hi"}`},
		{"get-sum", "everything", `{"a":1,"b":2}`},
		{"trigger-sampling-request", "everything", `{"prompt":"x"}`},
	} {
		for _, withEngine := range []bool{false, true} {
			e := abi.Envelope{ABI: abi.Version, ID: "r", Phase: abi.PhaseRequest, Method: "tools/call", Transport: "hook",
				Tool: c.tool, Server: c.server, Cwd: "/home/ann/project", Arguments: json.RawMessage(c.args)}
			if withEngine {
				e.Engine = eng
			}
			b, _ := json.Marshal(e)
			envs = append(envs, b)
		}
	}
	for _, uri := range []string{"file:///home/ann/.ssh/id_rsa", "file:///srv/app/.env", "file:///srv/app/README.md"} {
		b, _ := json.Marshal(abi.Envelope{ABI: abi.Version, ID: "u", Phase: abi.PhaseRequest, Method: "resources/read", URI: uri, Engine: eng})
		envs = append(envs, b)
	}
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for name, rules := range map[string]string{"example": string(example), "self-guard": selfGuard} {
		t.Run(name, func(t *testing.T) {
			e, ev := engine(t, rules), engine(t, rules) // each way its own engine cache
			matched := 0
			// One input buffer for every view, overwritten after each call, as inside Wasm: a
			// string the stage keeps across calls must be its own copy.
			var buf []byte
			for i, env := range envs {
				b, err := abi.AppendView(nil, env)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > cap(buf) {
					buf = make([]byte, len(b))
				}
				buf = append(buf[:0], b...)
				v, err := abi.ParseView(buf)
				if err != nil {
					t.Fatal(err)
				}
				want, got := e.Evaluate(env, now), ev.EvaluateView(v, now)
				for j := range buf {
					buf[j] = 0xAA
				}
				if got.Rule != nil {
					// The same rule of the other engine: compare by position.
					for k := range ev.rules {
						if got.Rule == &ev.rules[k] {
							got.Rule = &e.rules[k]
						}
					}
				}
				if got != want || string(got.Verdict()) != string(want.Verdict()) {
					t.Fatalf("envelope %d (%.300s):\nview     %+v %s\nenvelope %+v %s", i, env, got, got.Verdict(), want, want.Verdict())
				}
				if want.Matched {
					matched++
				}
			}
			t.Logf("%d envelopes, %d matched a rule, the same both ways", len(envs), matched)
		})
	}
}

// TestCheckView: a view with the engine's parts but without its JSON (a host older than field
// 34) is refused, not judged without the engine's paths.
func TestCheckView(t *testing.T) {
	env, _ := json.Marshal(abi.Envelope{ABI: abi.Version, ID: "x", Phase: abi.PhaseRequest, Method: "tools/call", Tool: "Bash",
		Arguments: json.RawMessage(`{"command":"kill -9 4242"}`), Engine: eng})
	b, err := abi.AppendView(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := abi.ParseView(b)
	if err := CheckView(v); err != nil {
		t.Fatalf("a complete view refused: %v", err)
	}
	// Drop field 34 by renaming it to an id nothing reads (the field table is where the
	// header's offset at 20 says).
	fo := int(b[20]) | int(b[21])<<8 | int(b[22])<<16 | int(b[23])<<24
	for i := range v.NumFields() {
		if id, _ := v.FieldAt(i); id == abi.FieldEngine {
			at := fo + 12*i
			b[at] = 99
		}
	}
	v, _ = abi.ParseView(b)
	if err := CheckView(v); err == nil || !strings.Contains(err.Error(), "field 34") {
		t.Fatalf("CheckView without the engine JSON = %v, want an error naming field 34", err)
	}
}
