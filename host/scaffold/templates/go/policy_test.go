package main

import "testing"

func TestDecide(t *testing.T) {
	cfg := Config{Deny: []string{"delete_repo"}}
	for _, tc := range []struct{ name, env, want string }{
		{"denied", `{"phase":"request","method":"tools/call","tool":"delete_repo"}`, "deny"},
		{"allowed", `{"phase":"request","method":"tools/call","tool":"echo"}`, "none"},
		{"response", `{"phase":"response","method":"tools/call","tool":"delete_repo"}`, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Decide(cfg, []byte(tc.env))
			if err != nil || v.Action != tc.want {
				t.Errorf("Decide = %+v, %v; want %s", v, err, tc.want)
			}
		})
	}
	if _, err := Decide(cfg, []byte(`{"method":`)); err == nil {
		t.Error("malformed envelope accepted")
	}
}
