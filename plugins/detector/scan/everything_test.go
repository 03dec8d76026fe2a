package scan

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/added060/palisade/sdk/go/abi"
)

// TestEverythingAnswers runs the model on every message of a session with the reference MCP
// server @modelcontextprotocol/server-everything 2026.8.31 (testdata/everything.jsonl: each
// tool called once with the values its schema suggests, each resource read, each prompt got,
// the list answers; harvested by testdata/harvest_everything.py over stdio, get-env's answer
// replaced by a plain environment). None of it is an attack: at the example bundle's settings
// (threshold 0.9, text 0.96) no call message may be denied but one: the server's
// instructions.md, written for the model ("If asked about server instructions, respond with
// ..."), which is what an indirect prompt injection looks like in tool output. It logs how many texts the model
// is sent and how many score 0.9 or more (issue 26: a base64 PNG scored 0.94, "success" 0.97).
func TestEverythingAnswers(t *testing.T) {
	r, _ := detectorRegistry(t, "")
	c, err := ParseConfig([]byte(`{"threshold":0.9,"kind_thresholds":{"text":0.96}}`))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("testdata", "everything.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type rec struct {
		Method, Tool string
		Arguments    json.RawMessage
		Result       json.RawMessage
	}
	var recs []rec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var x rec
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, x)
	}
	infos := map[string]json.RawMessage{} // tool name → tool_info, from the tools/list answer
	for _, x := range recs {
		if x.Method != "tools/list" {
			continue
		}
		var l struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(x.Result, &l); err != nil {
			t.Fatal(err)
		}
		for _, tl := range l.Tools {
			infos[tl.Name], _ = json.Marshal(abi.ToolInfo{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema})
		}
	}
	var envs []string
	var from []string // the tool or resource of each envelope
	for _, x := range recs {
		if len(x.Arguments) > 0 {
			env := `{"abi":"1.1","phase":"request","method":"` + x.Method + `","tool":"` + x.Tool + `","arguments":` + string(x.Arguments)
			if ti, ok := infos[x.Tool]; ok && x.Method == "tools/call" {
				env += `,"tool_info":` + string(ti)
			}
			envs = append(envs, env+"}")
			from = append(from, x.Tool)
		}
		if len(x.Result) > 0 {
			envs = append(envs, `{"abi":"1.1","phase":"response","method":"`+x.Method+`","tool":"`+x.Tool+`","result":`+string(x.Result)+`}`)
			from = append(from, x.Tool)
		}
	}
	texts, bytes, high, denied := 0, 0, 0, 0
	call := inferVia(r)
	for n, env := range envs {
		ts := Texts([]byte(env), c)
		if len(ts) > 0 {
			raw, err := call(EncodeInferRequest(c.Model, ts))
			if err != nil {
				t.Fatal(err)
			}
			res, err := DecodeInferResponse(raw, len(ts), c.Benign)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range res {
				texts++
				bytes += len(ts[i].Value)
				if x.Score >= 0.9 {
					high++
					t.Logf("scored %.3f %s: %s %q", x.Score, x.Label, ts[i].Path, snippet(ts[i].Value))
				}
			}
		}
		v, err := Evaluate([]byte(env), c, call)
		if err != nil {
			t.Fatal(err)
		}
		if v.Action != abi.ActionNone && isCall(gjsonMethod(env)) {
			denied++
			if from[n] == "demo://resource/static/document/instructions.md" {
				continue
			}
			t.Errorf("benign message denied: %s (%s)", v.Reason, snippet(env))
		}
	}
	t.Logf("server-everything: %d messages, %d texts (%d bytes) sent to the model, %d scored >= 0.9, %d call messages denied", len(envs), texts, bytes, high, denied)
}

// gjsonMethod is the envelope's method (a test helper).
func gjsonMethod(env string) string {
	var m struct{ Method string }
	_ = json.Unmarshal([]byte(env), &m)
	return strings.TrimSpace(m.Method)
}
