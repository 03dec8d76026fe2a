// Package detect is the injection plugin's detector in plain Go: Normalize (repeated URL
// decoding incl. %u and overlong UTF-8, HTML entities, Unicode tag characters, NFKC, case
// folding, zero-width removal), per-category rules (path traversal, sensitive files, SQL and
// command injection, SSRF, XSS, prompt injection) and statistical features, combined per
// category by a weighted noisy-OR vote and compared with a threshold minus a fail-safe margin.
// A search value the rules leave undecided is also read by libinjection
// (github.com/corazawaf/libinjection-go, fingerprint.go): its finding is uncertain, asked.
//
// It imports no Wasm or SDK export code, so native tests, fuzzing and tools/eval run the same
// code the Wasm plugin runs.
//
// Start-up is cheap on purpose (every gateway start, hot swap and hook process pays it): the
// prefilter's literal tables are generated (tables_gen.go, go generate) rather than derived
// from the regexps' syntax trees at init, and each regexp is compiled on its first use. On a
// long text a rule's regexp runs anchored around its anchor literals' occurrences rather than
// over every byte (window.go), with the full search's result.
package detect
