// Package examples holds one working Palisade plugin per language (go, rust, c, assemblyscript,
// wat), each in its own folder with a Makefile, README, fixtures and a stage config.
//
// The Go API lets other tests (the gateway's end-to-end test) build and load them the same way
// this package's tests do:
//
//	for _, ex := range examples.All {
//		wasm, err := ex.Build(ctx, repoRoot, t.TempDir()) // runs examples/LANG `make build`
//		cfg, err := ex.Config(repoRoot)                   // {"config": testdata/config.json}
//		// plugin.Spec{Wasm: wasm, Config: cfg}, capabilities ex.Capabilities()
//	}
//
// It imports only the standard library. The tests load every example through host/plugin and
// host/conformance against its testdata/fixtures.
package examples
