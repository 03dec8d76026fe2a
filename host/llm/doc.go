// Package llm is Palisade's LLM judge: the providers behind the `sample` host function.
//
// A Judge holds an ordered list of providers (OpenAI-compatible chat completions — which also
// serves vLLM, Ollama and llama.cpp server —, Anthropic messages, MCP sampling back to the
// connected client, and a deterministic local provider) and answers abi.SampleRequest values:
// it builds a prompt that fences the untrusted tool call, asks the first usable provider, and
// parses the answer strictly into {decision, confidence, reasons}. Anything else fails closed.
//
// Around each provider sit a per-attempt timeout, a circuit breaker (closed, open, half-open),
// a token-bucket rate limit and a health flag; a response cache keyed by the normalized prompt
// sits in front of all of them. API keys come from environment variables or files and are never
// logged or put in errors.
//
// Provider kinds register themselves in init() with Register (a duplicate kind panics).
//
// This package imports only the standard library and sdk/go/abi. It must not import host/plugin,
// host/chain, host/proxy or Extism: the host function wrapper lives in host/hostfn.
package llm
