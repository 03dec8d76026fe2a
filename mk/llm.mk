# LLM judge (host/llm), execution tokens (host/token), plugins judge and risk.
# Their unit and Wasm host tests already run in the top Makefile's test-core (host/llm and
# host/token with -race, plugins natively); the wasm files are built by `make plugins`
# (every plugins/*/main.go). This fragment adds what those do not: a short fuzz pass over the
# parsers of untrusted input, and the benchmarks. Fuzz budgets are execution counts (Nx), not
# durations: Go 1.26's coordinator can fail a duration run with a spurious "context deadline
# exceeded" on a loaded machine (golang/go#75804, fixed in 1.27).
LLM_FUZZTIME ?= 5000x

.PHONY: test-llm bench-llm fuzz-llm

TEST_TARGETS += test-llm
BENCH_TARGETS += bench-llm

test-llm: ## fuzz the judge-answer parser, prompt fence, token verifier, risk and judge plugins briefly (LLM_FUZZTIME executions each)
	$(GO) test -run '^$$' -fuzz '^FuzzParseDecision$$' -fuzztime $(LLM_FUZZTIME) ./host/llm/
	$(GO) test -run '^$$' -fuzz '^FuzzBuildPrompt$$' -fuzztime $(LLM_FUZZTIME) ./host/llm/
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(LLM_FUZZTIME) ./host/token/
	$(GO) test -run '^$$' -fuzz '^FuzzEvaluate$$' -fuzztime $(LLM_FUZZTIME) ./plugins/risk/riskscore/
	$(GO) test -run '^$$' -fuzz '^FuzzEvaluate$$' -fuzztime $(LLM_FUZZTIME) ./plugins/judge/judging/
	$(GO) test -run '^$$' -fuzz '^FuzzEvaluateJSON$$' -fuzztime $(LLM_FUZZTIME) ./plugins/judge/judging/

fuzz-llm: LLM_FUZZTIME = $${FUZZTIME:-100000x}
fuzz-llm: test-llm ## the same fuzz targets for FUZZTIME each (default 100000x)

bench-llm: ## judge overhead (local provider, native and through Wasm), risk plugin, token sign/verify
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./host/llm/ ./host/token/ ./plugins/risk/... ./plugins/judge/...
