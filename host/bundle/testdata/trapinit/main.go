//go:build wasip1

// Command trapinit is a test plugin that traps while the module starts (a panic in init), so a
// bundle naming it must be rejected at load, before any request reaches it. Extism runs a
// module's start-up on its first call; the loader's first call is describe.
package main

func init() { panic("trapinit: refusing to start") }

//go:wasmexport evaluate
func evaluate() int32 { return 0 }

//go:wasmexport describe
func describe() int32 { return 0 }

func main() {}
