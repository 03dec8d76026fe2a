# Injection detection plugin, labelled set and evaluation harness
# (plugins/injection, data/, tools/datasplit, tools/eval). Go only, except eval-combined, which
# needs the ONNX detector (setup-onnxruntime and model, mk/infer.mk).
INJ_WASM := $(BUILD)/plugins/injection.wasm
INJ_PKGS := ./plugins/injection/... ./tools/datasplit/... ./tools/eval/...
INJ_BENCHTIME ?= 300x
INJ_FUZZTIME ?= 15s

TEST_TARGETS += test-injection
BENCH_TARGETS += bench-injection
EVAL_TARGETS += eval-injection eval-combined
PLUGIN_TARGETS += plugin-injection

.PHONY: data plugin-injection test-injection bench-injection eval-injection eval-combined fuzz-injection generate-injection

data: ## rebuild data/split/{train,dev,test}.jsonl from data/corpus (deterministic)
	$(GO) run ./tools/datasplit

plugin-injection: $(INJ_WASM) ## build plugins/injection → build/plugins/injection.wasm

$(INJ_WASM): $(wildcard plugins/injection/*.go plugins/injection/detect/*.go plugins/internal/*/*.go sdk/go/*.go sdk/go/abi/*.go sdk/go/*/*.go go.mod go.sum)
	@mkdir -p $(dir $@)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins/injection

test-injection: ## injection detector, Wasm plugin through host/plugin, split and eval tools, fuzz pass
	@mkdir -p $(BUILD)
	$(GO) test -count=1 $(INJ_PKGS)
	$(GO) test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(INJ_FUZZTIME) ./plugins/injection/detect/

fuzz-injection: ## longer fuzz of Normalize and Scan (INJ_FUZZTIME=5m)
	$(GO) test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(INJ_FUZZTIME) ./plugins/injection/detect/

generate-injection: ## regenerate plugins/injection/detect/tables_gen.go (prefilter tables) after changing a rule
	cd plugins/injection/detect && $(GO) generate .

bench-injection: ## evaluate time native and through the host runtime (untrusted and trusted, no-op baseline), 1 KiB and 64 KiB; cold start
	$(GO) test -run '^$$' -bench 'Evaluate|ScanParts' -benchtime=$(INJ_BENCHTIME) ./plugins/injection/detect/ ./plugins/injection/
	$(GO) test -run '^$$' -bench 'ColdStart' -benchtime=5x ./plugins/injection/

eval-injection: ## per-category TPR, overall FPR and AUROC of the injection detector on data/split/test
	$(GO) run ./tools/eval -split test

# The rules and the ML detector together, as in the default chain: flagged when either fires
# at its own operating point (the detector's own figures come from eval-detector, mk/infer.mk).
eval-combined: setup-onnxruntime model ## injection rules + ONNX detector combined: per-category TPR, FPR, AUROC on data/split/test
	$(GO) run ./tools/eval -scorer combined -split test
