package ruleset

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

func engine(t *testing.T, js string) *Engine {
	t.Helper()
	c, err := Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const policy = `{"rules": [
 {"id": "allow-echo", "priority": 100, "action": "allow", "when": {"tool": ["echo"]}},
 {"id": "deny-env", "priority": 10, "action": "deny", "reason": "leaks", "when": {"tool": ["get-?nv", "*env*"]}},
 {"id": "deny-etc", "priority": 5, "action": "deny", "when": {"tool": ["fs/*"], "arguments": {"path": ["/etc/**"]}}},
 {"id": "ask-prod", "priority": 20, "action": "ask", "when": {"server": ["prod-*"], "tool": ["db/**"]}},
 {"id": "sample-agent", "priority": 30, "action": "sample", "guidance": "check intent", "when": {"agent": ["cursor"], "tool": ["shell"]}},
 {"id": "cwd", "priority": 40, "action": "deny", "when": {"tool": ["write"], "cwd": ["/home/*/secret/**"]}},
 {"id": "night", "priority": 50, "action": "deny", "reason": "no deploys at night", "when": {"tool": ["deploy"], "time": {"from": "22:00", "to": "06:00", "tz": "UTC"}}},
 {"id": "weekend", "priority": 51, "action": "ask", "when": {"tool": ["deploy"], "time": {"days": ["sat", "sun"]}}},
 {"id": "nested", "priority": 60, "action": "deny", "when": {"tool": ["http"], "arguments": {"opts.headers.host": ["169.254.*"], "urls": ["*internal*"]}}}
]}`

func TestRules(t *testing.T) {
	e := engine(t, policy)
	noon := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC) // a Wednesday
	for _, tc := range []struct {
		name string
		env  abi.Envelope
		now  time.Time
		rule string
	}{
		{"echo allowed", abi.Envelope{Tool: "echo"}, noon, "allow-echo"},
		{"? one char", abi.Envelope{Tool: "get-env"}, noon, "deny-env"},
		{"* inside a name", abi.Envelope{Tool: "printenv"}, noon, "deny-env"},
		{"no rule", abi.Envelope{Tool: "add"}, noon, ""},
		{"argument path glob", abi.Envelope{Tool: "fs/read", Arguments: json.RawMessage(`{"path":"/etc/ssh/sshd_config"}`)}, noon, "deny-etc"},
		{"argument outside glob", abi.Envelope{Tool: "fs/read", Arguments: json.RawMessage(`{"path":"/home/u/a"}`)}, noon, ""},
		{"* does not cross /", abi.Envelope{Tool: "fs/a/read", Arguments: json.RawMessage(`{"path":"/etc/x"}`)}, noon, ""},
		{"server and ** tool", abi.Envelope{Tool: "db/prod/drop", Server: "prod-eu"}, noon, "ask-prod"},
		{"server mismatch", abi.Envelope{Tool: "db/prod/drop", Server: "dev"}, noon, ""},
		{"agent", abi.Envelope{Tool: "shell", Agent: "cursor"}, noon, "sample-agent"},
		{"cwd", abi.Envelope{Tool: "write", Cwd: "/home/ann/secret/x"}, noon, "cwd"},
		{"night window wraps midnight", abi.Envelope{Tool: "deploy"}, time.Date(2026, 11, 18, 23, 30, 0, 0, time.UTC), "night"},
		{"early morning in window", abi.Envelope{Tool: "deploy"}, time.Date(2026, 11, 18, 5, 59, 0, 0, time.UTC), "night"},
		{"daytime weekday: none", abi.Envelope{Tool: "deploy"}, noon, ""},
		{"weekend day", abi.Envelope{Tool: "deploy"}, time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), "weekend"},
		{"envelope time wins", abi.Envelope{Tool: "deploy", Time: "2026-11-18T23:00:00Z"}, noon, "night"},
		{"nested path and array", abi.Envelope{Tool: "http", Arguments: json.RawMessage(`{"opts":{"headers":{"host":"169.254.169.254"}},"urls":["a","x.internal.y"]}`)}, noon, "nested"},
		{"array without match", abi.Envelope{Tool: "http", Arguments: json.RawMessage(`{"opts":{"headers":{"host":"169.254.169.254"}},"urls":["a"]}`)}, noon, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(tc.env)
			r := e.Evaluate(b, tc.now)
			got := ""
			if r.Matched {
				got = r.Rule.ID
			}
			if got != tc.rule {
				t.Fatalf("rule %q, want %q", got, tc.rule)
			}
			var v abi.Verdict
			if err := json.Unmarshal(r.Verdict(), &v); err != nil {
				t.Fatalf("verdict is not JSON: %s", r.Verdict())
			}
			if tc.rule == "" && v.Action != abi.ActionNone {
				t.Fatalf("no rule but action %s", v.Action)
			}
		})
	}
}

func TestLowestPriorityWins(t *testing.T) {
	e := engine(t, `[{"id":"late","priority":9,"action":"deny","when":{"tool":["x"]}},{"id":"early","priority":1,"action":"allow","final":true,"when":{"tool":["x"]}}]`)
	r := e.Evaluate([]byte(`{"tool":"x"}`), time.Now())
	if r.Rule.ID != "early" {
		t.Fatalf("rule %s won", r.Rule.ID)
	}
	var v abi.Verdict
	json.Unmarshal(r.Verdict(), &v)
	if !v.Final || v.Action != "allow" {
		t.Fatalf("verdict %+v", v)
	}
}

func TestBadRules(t *testing.T) {
	for _, js := range []string{
		`[{"action":"explode"}]`,
		`[{"action":"deny","when":{"time":{"from":"25:99"}}}]`,
		`[{"action":"deny","when":{"time":{"days":["someday"]}}}]`,
		`[{"action":"deny","when":{"time":{"tz":"Mars/Olympus"}}}]`,
	} {
		c, err := Parse([]byte(js))
		if err != nil {
			continue
		}
		if _, err := New(c); err == nil {
			t.Errorf("accepted %s", js)
		}
	}
}

func BenchmarkEvaluate(b *testing.B) {
	e, _ := New(mustParse(policy))
	env := []byte(`{"abi":"1.0","phase":"request","method":"tools/call","server":"everything","tool":"fs/read","arguments":{"path":"/home/u/project/README.md","lines":200}}`)
	b.ReportAllocs()
	for b.Loop() {
		e.Evaluate(env, time.Now())
	}
}

func mustParse(s string) Config {
	c, err := Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return c
}
