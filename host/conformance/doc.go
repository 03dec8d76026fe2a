// Package conformance is the logic of `palisade plugin test`: it loads a plugin through the real
// host runtime (host/plugin) and checks that it keeps the ABI v1 contract of sdk/ABI.md:
//
//   - it exports evaluate (describe is optional);
//   - describe, when exported, returns schema-valid JSON whose abi the host accepts;
//   - evaluate returns a schema-valid verdict for a set of representative envelopes
//     (tools/call, resources/read, prompts/get, tools/list, a response-phase message);
//   - it survives empty input, malformed JSON and a 4 MiB envelope without trapping
//     (returning an error counts as surviving; a trap or timeout does not);
//   - every fixture in Options.Fixtures gets its expected action.
//
// It imports host/plugin, host/hostfn, host/mcp, sdk/go/abi and sdk/schema; nothing imports it
// except cmd/palisade and tests.
package conformance
