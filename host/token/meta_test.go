package token_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/added060/palisade/host/token"
)

func TestAttachAndFromParams(t *testing.T) {
	s := newSigner(t)
	for _, tc := range []struct{ name, params string }{
		{"plain", `{"name":"transfer","arguments":{"amount":5}}`},
		{"existing meta", `{"name":"transfer","arguments":{"amount":5},"_meta":{"progressToken":7}}`},
		{"null meta", `{"name":"transfer","arguments":{"amount":5},"_meta":null}`},
		{"empty", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, _, err := s.Issue(token.Claims{Tool: "transfer"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := token.Attach(json.RawMessage(tc.params), tok)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := token.FromParams(out)
			if !ok || got != tok {
				t.Fatalf("FromParams(%s) = %q, %v", out, got, ok)
			}
			if _, err := token.Verify(s.PublicKey(), got, time.Now()); err != nil {
				t.Fatal(err)
			}
			var p map[string]any
			json.Unmarshal(out, &p)
			if tc.params != "" && p["name"] != "transfer" {
				t.Fatalf("params lost fields: %s", out)
			}
			if tc.name == "existing meta" && p["_meta"].(map[string]any)["progressToken"] != float64(7) {
				t.Fatalf("other _meta keys lost: %s", out)
			}
		})
	}
	if _, err := token.Attach(json.RawMessage(`[1]`), "x"); err == nil {
		t.Fatal("array params accepted")
	}
	if _, ok := token.FromParams(json.RawMessage(`{"name":"x"}`)); ok {
		t.Fatal("token found where none is")
	}
}
