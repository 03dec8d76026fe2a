// Package scan is the logic of the detector plugin (plugins/detector): it
// collects the texts of a message (string values in a tool call's arguments,
// a resource URI, the strings of a tool result), asks the host's `infer`
// function to classify them, and turns the scores into a verdict with a
// label and evidence.
//
// It is plain Go, run natively by `go test`; the wasip1 shim in the parent
// folder passes it the envelope bytes and palisade.Infer. It reads the
// envelope with gjson (no encoding/json reflection on the hot path inside
// Wasm) and imports nothing from host/.
package scan
