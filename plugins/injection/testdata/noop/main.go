//go:build wasip1

// Command noop is the benchmark baseline: a Go plugin that reads its input and returns no
// opinion, so its call time is the host's and Go's own per-call overhead (the direct convention).
package main

import palisade "github.com/added060/palisade/sdk/go"

var _ = palisade.Export(evaluate, nil)

func evaluate() int32 {
	_ = palisade.Input()
	return palisade.OutputRaw([]byte(`{"action":"none"}`))
}

func main() {}
