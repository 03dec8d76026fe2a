// Package examples holds one working Palisade plugin per language (go, rust, c, assemblyscript,
// wat). Each folder builds with `make build` and is tested here through the real host runtime
// (host/plugin) and the conformance checker (host/conformance) against its testdata/fixtures.
package examples
