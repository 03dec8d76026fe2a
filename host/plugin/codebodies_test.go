package plugin_test

import (
	"context"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/added060/palisade/host/hostfn"
	"github.com/added060/palisade/host/internal/testenv"
	"github.com/added060/palisade/host/plugin"
)

// TestDropCodeBodies: the function bodies of a compiled module are found and released (this
// fails when a wazero upgrade moves them), Load releases them, and instances started from the
// module afterwards answer (every other test here runs on such instances too).
func TestDropCodeBodies(t *testing.T) {
	ctx := context.Background()
	wasm, _ := testenv.ReadPlugin(t, misbehave)
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	c, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := plugin.DropCodeBodies(c); err != nil || n == 0 {
		t.Fatalf("released %d bytes of function bodies (%v), want them all", n, err)
	}
	if n, err := plugin.DropCodeBodies(c); err != nil || n != 0 {
		t.Fatalf("second release: %d bytes (%v), want 0", n, err)
	}
	if _, err := plugin.DropCodeBodies(nil); err == nil {
		t.Fatal("a nil module: no error")
	}

	p, err := newRuntime(t).Load(ctx, plugin.Spec{
		Name: "bodies", Wasm: wasm, Timeout: 5 * time.Second, PoolSize: 1,
		Config:        map[string]string{"config": `{"mode":"slow","slow_ms":1,"when_tool":"bad"}`},
		HostFunctions: hostfn.Build("t", nil, hostfn.Deps{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if n, err := plugin.CodeBodyBytes(p); err != nil || n != 0 {
		t.Fatalf("after Load the module keeps %d bytes of function bodies (%v), want 0", n, err)
	}
	for range 2 {
		if _, err := p.Evaluate(ctx, []byte(good)); err != nil {
			t.Fatal(err)
		}
		p.Trim() // the next call starts an instance from the released module
	}
}
