package ruleset

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/added060/palisade/sdk/go/abi"
)

func TestAskTimeoutMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, timeout, on, want string
	}{
		{"none", "", "", ``},
		{"timeout", "30s", "", `{"timeout":"30s"}`},
		{"both", "1m", "allow", `{"timeout":"1m","on_timeout":"allow"}`},
		{"on_timeout only", "", "deny", `{"on_timeout":"deny"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(Config{Rules: []Rule{{ID: "a", Action: "ask", Timeout: tc.timeout, OnTimeout: tc.on, When: When{Tool: []string{"w*"}}}}})
			if err != nil {
				t.Fatal(err)
			}
			out := e.Evaluate([]byte(`{"tool":"write"}`), time.Now()).Verdict()
			var v abi.Verdict
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("verdict %s: %v", out, err)
			}
			if string(v.Metadata) != tc.want || v.Action != abi.ActionAsk {
				t.Errorf("verdict %s: metadata %s, want %s", out, v.Metadata, tc.want)
			}
		})
	}
}

func TestAskTimeoutRejected(t *testing.T) {
	for _, r := range []Rule{
		{Action: "ask", Timeout: "soon"},
		{Action: "ask", Timeout: "-1s"},
		{Action: "ask", OnTimeout: "ask"},
	} {
		if _, err := New(Config{Rules: []Rule{r}}); err == nil {
			t.Errorf("New accepted timeout %q on_timeout %q", r.Timeout, r.OnTimeout)
		}
	}
}
