# Injection detection plugin, labelled set and evaluation harness
# (plugins/injection, data/, tools/datasplit, tools/eval). Go only: no extra toolchain.
INJ_WASM := $(BUILD)/plugins/injection.wasm
INJ_PKGS := ./plugins/injection/... ./tools/datasplit/... ./tools/eval/...
INJ_BENCHTIME ?= 300x
INJ_FUZZTIME ?= 15s

TEST_TARGETS += test-injection
BENCH_TARGETS += bench-injection
EVAL_TARGETS += eval-injection
PLUGIN_TARGETS += plugin-injection

.PHONY: data plugin-injection test-injection bench-injection eval-injection fuzz-injection

data: ## rebuild data/split/{train,dev,test}.jsonl from data/corpus (deterministic)
	$(GO) run ./tools/datasplit

plugin-injection: $(INJ_WASM) ## build plugins/injection → build/plugins/injection.wasm

$(INJ_WASM): $(wildcard plugins/injection/*.go plugins/injection/detect/*.go sdk/go/*.go sdk/go/abi/*.go)
	@mkdir -p $(dir $@)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins/injection

test-injection: ## injection detector, Wasm plugin through host/plugin, split and eval tools, fuzz pass
	@mkdir -p $(BUILD)
	$(GO) test -count=1 $(INJ_PKGS)
	$(GO) test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(INJ_FUZZTIME) ./plugins/injection/detect/

fuzz-injection: ## longer fuzz of Normalize and Scan (INJ_FUZZTIME=5m)
	$(GO) test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(INJ_FUZZTIME) ./plugins/injection/detect/

bench-injection: ## evaluate time, native and through Extism (with a no-op baseline), 1 KiB and 64 KiB
	$(GO) test -run '^$$' -bench 'Evaluate' -benchtime=$(INJ_BENCHTIME) ./plugins/injection/detect/ ./plugins/injection/

eval-injection: ## per-category TPR, overall FPR and AUROC of the injection detector on data/split/test
	$(GO) run ./tools/eval -split test
