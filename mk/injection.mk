# Injection detection plugin, labelled set and evaluation harness (plugins/injection, data/, tools/).
INJ_WASM := $(BUILD)/plugins/injection.wasm

.PHONY: data test-injection bench-injection eval-injection plugin-injection

data: ## rebuild data/split from data/corpus (deterministic)
	$(GO) run ./tools/datasplit

TEST_TARGETS += test-injection
BENCH_TARGETS += bench-injection
EVAL_TARGETS += eval-injection
PLUGIN_TARGETS += plugin-injection
