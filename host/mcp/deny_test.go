package mcp

import (
	"encoding/json"
	"testing"
)

// TestDenyDataSaysDeny: the data of a denied call says action deny, also when a person or the
// judge denied a call the chain held (ask, sample); what the chain asked is requested_action.
func TestDenyDataSaysDeny(t *testing.T) {
	for _, requested := range []string{"ask", "sample", "deny", ""} {
		t.Run(requested, func(t *testing.T) {
			e := NewError(CodeDenied, "denied by policy: no", DenyData{Rule: "r", Reason: "no", AuditID: "a1", Action: requested})
			var got map[string]any
			if err := json.Unmarshal(e.Data, &got); err != nil {
				t.Fatal(err)
			}
			if got["action"] != "deny" {
				t.Errorf("data.action = %v, want deny: %s", got["action"], e.Data)
			}
			if r, _ := got["requested_action"].(string); r != requested {
				t.Errorf("data.requested_action = %q, want %q: %s", r, requested, e.Data)
			}
			var back DenyData
			if err := json.Unmarshal(e.Data, &back); err != nil || back.Action != requested || back.AuditID != "a1" {
				t.Errorf("round trip = %+v %v", back, err)
			}
		})
	}
}
