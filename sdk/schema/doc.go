// Package schema embeds the normative JSON Schemas (2020-12) of the Palisade plugin ABI v1 and
// compiles them for the host: the envelope the host hands to evaluate, the verdict and describe
// outputs, and the request/response bodies of the sample, infer and kv host functions.
//
// The .json files in this folder are the contract; sdk/ABI.md explains them, and a test here
// validates every JSON example in ABI.md against them so the document cannot drift.
//
// It imports only the standard library and santhosh-tekuri/jsonschema. Plugins never import it
// (it would bloat a Wasm module); the host (host/conformance, host/plugin) does.
package schema
