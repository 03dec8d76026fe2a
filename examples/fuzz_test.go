package examples_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/plugin"
	"github.com/added060/palisade/sdk/go/abi"
	"github.com/added060/palisade/sdk/schema"
)

// FuzzExamplesNeverTrap feeds arbitrary bytes as the envelope to every example through the real
// runtime: each must answer with a schema-valid verdict or an error return, never a trap or a
// timeout. `go test` runs the seeds; `go test -fuzz FuzzExamplesNeverTrap ./examples/` explores.
func FuzzExamplesNeverTrap(f *testing.F) {
	for _, s := range []string{
		``, `{`, `[]`, `null`, `"x"`, `{"method":"tools/call"}`,
		`{"method":"tools/call","phase":"request","tool":"echo","arguments":{"path":"/etc/passwd","command":"rm -rf /"}}`,
		`{"method":"tools/call","tool":"\u0000","arguments":{"k":"AKIAIOSFODNN7EXAMPLE"}}`,
		`{"method":"tools/call","arguments":{"a":"-----BEGIN RSA PRIVATE KEY-----` + "\n" + `"}}`,
		`{"method":"tools/call","arguments":{"p":"\ud800"}}`,
		`{"method":"tools/call","tool":"echo","arguments":{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{"path":"/"}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}`,
		`{"method":"resources/read","uri":"file://` + "\xff\xfe" + `"}`,
		`{"phase":"response","method":"tools/call","result":{"content":[{"text":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}]}}`,
		`{"method":"tools/call","tool":"echo","tool":"get-env"}`,
	} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	rt := newRuntime(f)
	var plugins []*plugin.Plugin
	for _, ex := range all {
		p, err := rt.Load(ctx, plugin.Spec{
			Name: ex.Lang, Wasm: build(f, ex), Config: config(f, ex), Timeout: 10 * time.Second,
			HostFunctions: hostfn.Build(ex.Lang, []string{hostfn.CapKV}, hostfn.Deps{KV: hostfn.NewMemKV()}),
		})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { p.Close(ctx) })
		plugins = append(plugins, p)
	}
	f.Fuzz(func(t *testing.T, env []byte) {
		for _, p := range plugins {
			out, err := p.Evaluate(ctx, env)
			switch {
			case errors.Is(err, plugin.ErrTrap), errors.Is(err, plugin.ErrTimeout):
				t.Fatalf("%s on %q: %v", p.Name(), env, err)
			case err != nil:
				continue // a graceful error return
			}
			if err := schema.Validate(schema.Verdict, out); err != nil {
				t.Fatalf("%s on %q: %v", p.Name(), env, err)
			}
		}
	})
}

// TestSecretsRedactsThroughHost checks the Rust example's replacement result end to end: valid
// JSON, secret gone, the rest of the result intact.
func TestSecretsRedactsThroughHost(t *testing.T) {
	ex := find(t, "rust")
	ctx := context.Background()
	p, err := newRuntime(t).Load(ctx, plugin.Spec{Name: "secrets", Wasm: build(t, ex), Config: config(t, ex)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	env := `{"abi":"1.0","id":"x","phase":"response","method":"tools/call","tool":"cat",` +
		`"result":{"content":[{"type":"text","text":"line1\nkey=AKIAIOSFODNN7EXAMPLE\n-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\nend"}]}}`
	out, err := p.Evaluate(ctx, []byte(env))
	if err != nil {
		t.Fatal(err)
	}
	var v abi.Verdict
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(v.Result, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("result %s: %v", v.Result, err)
	}
	want := "line1\nkey=[REDACTED:aws-access-key]\n[REDACTED:private-key]\nend"
	if v.Action != "allow" || res.Content[0].Text != want || len(v.Evidence) != 2 {
		t.Errorf("verdict %s\ntext %q\nwant %q", out, res.Content[0].Text, want)
	}
}
