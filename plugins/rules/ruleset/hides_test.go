package ruleset

import (
	"strings"
	"testing"
	"time"
)

// TestHidesTool: a deny says hides_tool only when it holds for every argument of the call at
// any time: a deny rule with no argument or time condition, and no rule before it that could
// match other arguments or another time with anything but deny. A principal condition only
// narrows whom it holds for.
func TestHidesTool(t *testing.T) {
	dev := `"principal":{"issuer":"https://idp","subject":"bob","claims":{"groups":["dev"]}}`
	for _, tc := range []struct {
		name  string
		rules string
		hides bool
	}{
		{"principal deny", `[{"id":"d","priority":1,"action":"deny","when":{"tool":["deploy_*"],"principal":{"claims":{"groups":"dev"}}}}]`, true},
		{"bare deny", `[{"id":"d","priority":1,"action":"deny","when":{"tool":["deploy_*"]}}]`, true},
		{"deny in a time window", `[{"id":"d","priority":1,"action":"deny","when":{"tool":["deploy_*"],"time":{"from":"00:00","to":"23:59"}}}]`, false},
		{"allow in a time window first", `[{"id":"a","priority":1,"action":"allow","when":{"tool":["deploy_*"],"time":{"from":"03:00","to":"03:01"}}},{"id":"d","priority":2,"action":"deny","when":{"tool":["deploy_*"]}}]`, false},
		{"deny on arguments", `[{"id":"d","priority":1,"action":"deny","when":{"tool":["deploy_*"],"principal":{"claims":{"groups":"dev"}},"arguments":{"env":["prod"]}}}]`, false},
		{"deny on commands", `[{"id":"d","priority":1,"action":"deny","when":{"principal":{"subject":"bob"},"commands":["rm *"]}}]`, false},
		{"allow on arguments first", `[{"id":"a","priority":1,"action":"allow","when":{"tool":["deploy_*"],"arguments":{"env":["staging"]}}},{"id":"d","priority":2,"action":"deny","when":{"principal":{"subject":"bob"}}}]`, false},
		{"deny on arguments first", `[{"id":"x","priority":1,"action":"deny","when":{"arguments":{"env":["prod"]}}},{"id":"d","priority":2,"action":"deny","when":{"principal":{"subject":"bob"}}}]`, true},
		{"allow for others first", `[{"id":"a","priority":1,"action":"allow","when":{"principal":{"claims":{"groups":"sre"}}}},{"id":"d","priority":2,"action":"deny","when":{"principal":{"issuer":"**"}}}]`, true},
		{"principal allow", `[{"id":"a","priority":1,"action":"allow","when":{"principal":{"subject":"bob"}}}]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.rules))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			r := e.Evaluate([]byte(`{"method":"tools/call","tool":"deploy_x","arguments":{},`+dev+`}`), time.Now())
			if r.HidesTool != tc.hides {
				t.Fatalf("HidesTool = %v, want %v (rule %+v)", r.HidesTool, tc.hides, r.Rule)
			}
			if v := string(r.Verdict()); strings.Contains(v, `"hides_tool":true`) != tc.hides {
				t.Fatalf("verdict %s", v)
			}
		})
	}
}
