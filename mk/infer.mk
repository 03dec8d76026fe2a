# host/infer, tools/train, models/, plugins/detector — ONNX Runtime inference.
# The ONNX Runtime shared library comes from the npm package onnxruntime-node
# (fetched with `npm pack`, never installed), checked by sha256.

ORT_VERSION := 1.24.1
ORT_SHA256 := 53ef1ac028dd1b05554b8da28d9159eb3876f99868193d2aaa6e67f0243c23d4
ORT_DIR := $(BUILD)/ort
ORT_LIB := $(ORT_DIR)/libonnxruntime.so.$(ORT_VERSION)
DETECTOR_MODEL := $(BUILD)/models/detector-v1.onnx
DETECTOR_WASM := $(BUILD)/plugins/detector.wasm
# The tuning side of the held-out set (real tool calls, public sources) is trained on
# (tools/train -extra-heldout): benign calls' texts as the stage scores them, an attack's own
# field whole. Its test side (data/heldout/test.jsonl, other source groups) is never read by the
# trainer. Issue 26: trained on calib's windows, the model denied the MCP conformance suite's
# elicitation call in the response phase and missed the example bundle's detector-only
# exfiltration fixture; tools/train/README.md says what changed and how calib out of fold
# (`go run ./tools/train -folds data/heldout/calib.jsonl`) chose the bundle's text cut.
# Calib alone: the extra prose set and the wide set's calib (each file capped on its own,
# `FILE@kind+kind` for some kinds) lowered their benign findings out of fold, but every
# candidate that qualified broke a served check (the detector-only exfiltration fixture, or the
# MCP conformance suite's prompt description); tools/train/README.md has the table.
# det64: the pages on top of the class weights (-extra-heldout-on-top) kept the short strings
# low only by losing attacks or the detector-only fixture; tools/train/README.md, not adopted.
DETECTOR_HELDOUT := data/heldout/calib.jsonl
# det66 (issue 26 class 8): a second model for long texts (the detector stage's long_model, for
# texts over long_min_bytes: windows of pages and tool output), trained as the first plus the
# documentation pages of four calib sets on top of the class weights (-extra-heldout-on-top), so
# pages no longer share weights with short instructions. tools/train/README.md has the gates.
DETECTOR_LONG_MODEL := $(BUILD)/models/detector-long-v1.onnx
DETECTOR_LONG_ON_TOP := data/heldout/pydoc-extra/calib.jsonl@doc_output
export PALISADE_ONNXRUNTIME_LIB ?= $(ORT_LIB)

# model is part of setup: test-core runs plugins/detector and tools/train tests natively,
# before test-infer, and they need the trained model.
SETUP_TARGETS += setup-onnxruntime model
TEST_TARGETS += test-infer
BENCH_TARGETS += bench-infer
EVAL_TARGETS += eval-detector
PLUGIN_TARGETS += plugin-detector

.PHONY: setup-onnxruntime model plugin-detector test-infer bench-infer eval-detector

setup-onnxruntime: $(ORT_LIB) ## fetch ONNX Runtime 1.24.1 (npm pack onnxruntime-node) and check its sha256; gcc for cgo
	@command -v gcc >/dev/null || { echo "setup-onnxruntime: installing gcc for cgo (apt)"; apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev; }

$(ORT_LIB):
	@command -v npm >/dev/null || { echo "setup-onnxruntime: installing npm (apt)"; apt-get update && apt-get install -y --no-install-recommends npm; }
	@mkdir -p $(ORT_DIR)/pack
	cd $(ORT_DIR)/pack && npm pack --silent onnxruntime-node@$(ORT_VERSION) >/dev/null
	tar -xzf $(ORT_DIR)/pack/onnxruntime-node-$(ORT_VERSION).tgz -C $(ORT_DIR)/pack package/bin/napi-v6/linux/x64/libonnxruntime.so.1
	echo "$(ORT_SHA256)  $(ORT_DIR)/pack/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" | sha256sum -c -
	mv $(ORT_DIR)/pack/package/bin/napi-v6/linux/x64/libonnxruntime.so.1 $@
	rm -rf $(ORT_DIR)/pack

model: $(DETECTOR_MODEL) $(DETECTOR_LONG_MODEL) ## train the detector's models (deterministic) → build/models/detector-v1.onnx, detector-long-v1.onnx + models/MODEL_CARD*.md

$(DETECTOR_MODEL): $(wildcard tools/train/*.go host/infer/*.go host/infer/onnx/*.go host/infer/train/*.go plugins/detector/scan/*.go data/split/*.jsonl models/data/*.txt models/data/*.jsonl $(DETECTOR_HELDOUT)) | setup-onnxruntime
	$(GO) run ./tools/train -train data/split/train.jsonl -test data/split/test.jsonl -extra-heldout $(DETECTOR_HELDOUT) -out $@ -card models/MODEL_CARD.md -spec models/detector.yaml

$(DETECTOR_LONG_MODEL): $(DETECTOR_MODEL) data/heldout/pydoc-extra/calib.jsonl
	$(GO) run ./tools/train -name detector-long-v1 -train data/split/train.jsonl -test data/split/test.jsonl -extra-heldout $(DETECTOR_HELDOUT) -extra-heldout-on-top $(DETECTOR_LONG_ON_TOP) -out $@ -card models/MODEL_CARD_LONG.md -spec models/detector-long.yaml

plugin-detector: $(DETECTOR_WASM) ## build plugins/detector → build/plugins/detector.wasm (top Makefile's plugin rule)

test-infer: setup-onnxruntime $(DETECTOR_MODEL) $(DETECTOR_LONG_MODEL) ## host/infer, trainer and detector tests with the real runtime
	$(GO) test -race -count=1 ./host/infer/...
	$(GO) test -count=1 ./tools/train/... ./plugins/detector/...
	CGO_ENABLED=0 $(GO) test -count=1 -run 'Unavailable|NoCgo' ./host/infer/

bench-infer: setup-onnxruntime $(DETECTOR_MODEL) ## detector latency at batch 1/32, 64-caller throughput with and without micro-batching, Wasm stage
	$(GO) test -run '^$$' -bench . -benchtime 2s ./host/infer/
	$(GO) test -run '^$$' -bench . -benchtime 2s ./plugins/detector/scan/

eval-detector: setup-onnxruntime $(DETECTOR_MODEL) ## detector TPR/FPR/AUROC per category on data/split/test.jsonl (own report + shared tools/eval harness)
	$(GO) run ./tools/train -eval -model $(DETECTOR_MODEL) -test data/split/test.jsonl
	$(GO) run ./tools/eval -scorer detector -split test
