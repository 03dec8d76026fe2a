package argkind

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

func TestOf(t *testing.T) {
	sqlInfo := &abi.ToolInfo{Name: "run", Description: "Run a read-only SQL query on the analytics database",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)}
	for _, tc := range []struct {
		tool string
		info *abi.ToolInfo
		key  string
		want Kind
	}{
		{"Bash", nil, "command", Shell},
		{"Bash", nil, "description", Text},
		{"Write", nil, "content", Code},
		{"Read", nil, "file_path", Path},
		{"WebFetch", nil, "url", URL},
		{"WebSearch", nil, "query", Query},
		{"run_shell", nil, "command", Shell},
		{"run_sql", nil, "query", SQL},
		{"run", sqlInfo, "query", SQL},
		{"web_search", nil, "query", Query},
		{"send_email", nil, "body", Text},
		{"write_file", nil, "content", Code},
		{"ping", nil, "host", Fixed},
		{"get_issue", nil, "issue_id", Fixed},
		{"copy", nil, "source_path", Path},
		{"hook", nil, "callback_url", URL},
		{"echo", nil, "message", Text},
		{"echo", nil, "payload", Unknown},
		{"echo", nil, "", Unknown},
	} {
		t.Run(tc.tool+"."+tc.key, func(t *testing.T) {
			if got := ForCall(tc.tool, tc.info).Of(tc.key); got != tc.want {
				t.Errorf("ForCall(%q).Of(%q) = %s, want %s", tc.tool, tc.key, got, tc.want)
			}
		})
	}
	var none *Tool
	if none.Of("command") != Unknown {
		t.Errorf("nil Tool: want Unknown")
	}
}

func TestForValue(t *testing.T) {
	for v, want := range map[string]Kind{
		"/home/u/.ssh/id_rsa": Path, "~/.netrc": Path, "./keys/k.pem": Path, "../x": Path, `C:\Users\u\.aws\credentials`: Path, "C:/x": Path,
		"print(1)": Code, "import os\nos.remove('/tmp/x')": Code, "/": Code, "x/y": Code, "rm -rf /tmp/x": Code, "a:b": Code,
	} {
		if got := Code.ForValue(v); got != want {
			t.Errorf("Code.ForValue(%q) = %v, want %v", v, got, want)
		}
	}
	if Text.ForValue("../../../../etc/passwd") != Unknown || Text.ForValue("a note about ../../etc/passwd in logs") != Text || Shell.ForValue("ls") != Shell {
		t.Errorf("ForValue: a bare payload in a text field is unknown; prose stays text; other kinds unchanged")
	}
}

func TestLastKey(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"arguments.options.command", "command"},
		{"arguments.cmds[2]", "cmds"},
		{"arguments.cmds.2", "cmds"},
		{"arguments.body[0:512]", "body"},
		{"arguments", ""},
		{"uri", ""},
	} {
		if got := LastKey(tc.path); got != tc.want {
			t.Errorf("LastKey(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = LastKey("arguments.options[3].page") }); n != 0 {
		t.Errorf("LastKey allocates %v times, want 0", n)
	}
}

// lastKeySplit is LastKey as it was written first (strings.FieldsFunc): FuzzLastKey holds the
// allocation-free one to it.
func lastKeySplit(path string) string {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' })
	for i := len(parts) - 1; i > 0; i-- {
		p := parts[i]
		if strings.HasSuffix(p, "]") || strings.Trim(p, "0123456789") == "" {
			continue
		}
		return p
	}
	return ""
}

func FuzzLastKey(f *testing.F) {
	for _, s := range []string{"arguments.options.command", "arguments.cmds[2]", "arguments.cmds.2", "arguments.body[0:512]",
		"arguments", "uri", "", ".", "..a", "[a", ".a.b", "a..b", "a.[b", "a.b]", "a.1.2", "[[x]]", "result.content[0].text{key}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if got, want := LastKey(path), lastKeySplit(path); got != want {
			t.Fatalf("LastKey(%q) = %q, want %q", path, got, want)
		}
	})
}

func TestApplies(t *testing.T) {
	if Shell.Applies("command_injection") || !Shell.Applies("prompt_injection") {
		t.Errorf("shell: command_injection must not count, prompt_injection must")
	}
	if !Unknown.Applies("command_injection") || !Fixed.Applies("xss") {
		t.Errorf("unknown and fixed: every label counts")
	}
}

func TestCache(t *testing.T) {
	var c Cache
	info := `{"name":"query","input_schema":{"type":"object","properties":{"n":{"type":"integer"}}}}`
	a := c.ForCall("query", info)
	if b := c.ForCall("query", info); b != a {
		t.Error("the same tool and definition built a new Tool")
	}
	if k, _ := a.Judge("n", "x", true); k != Unknown {
		t.Errorf("cached Tool lost the schema: n=x judged %v", k)
	}
	if b := c.ForCall("query", `{"name":"query"}`); b == a {
		t.Error("another definition reused the Tool")
	}
	if b := c.ForCall("query", `{not json`); !reflect.DeepEqual(b, ForCall("query", nil)) {
		t.Errorf("malformed tool_info: got %+v, want ForCall without info", b)
	}
}
