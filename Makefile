# Palisade — the only entry point. `make help` lists targets.
#   make run    gateway with the example bundle, embedded NATS and server-everything
#   make test   everything CI runs (installs what it needs first)
SHELL := /bin/bash
GO ?= go
BUILD := $(CURDIR)/build
export PALISADE_BUILD := $(BUILD)
export GOFLAGS := -buildvcs=false
# Tests that need a toolchain or an npm server fail instead of skipping when it is missing.
export PALISADE_REQUIRE_TOOLCHAINS := 1
export PALISADE_REQUIRE_NPM := 1

# Pinned tool versions.
STATICCHECK_VERSION := v0.8.2
NODE_MIN := 18

# The version `palisade version` reports; empty outside a git checkout, and then the binary
# falls back to Go's build info (host/version).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

# Fragments under mk/ add to these lists.
SETUP_TARGETS :=
TEST_TARGETS :=
BENCH_TARGETS :=
EVAL_TARGETS :=
PLUGIN_TARGETS :=

.DEFAULT_GOAL := help

include $(wildcard mk/*.mk)

# First-party Go plugins: every plugins/<name>/main.go.
GO_PLUGINS := $(patsubst plugins/%/main.go,%,$(wildcard plugins/*/main.go))
GO_PLUGIN_WASM := $(patsubst %,$(BUILD)/plugins/%.wasm,$(GO_PLUGINS))

# Host packages tested here with -race (fragments test their own packages). host/gateway's
# end-to-end tests (real servers, many gateways) run without -race: under it, wazero's compiler
# alone takes minutes per plugin and the suite outgrows CI's budget on two cores.
CORE_PKGS := ./host/ ./host/mcp/... ./host/config/... ./host/plugin/... ./host/hostfn/... ./host/chain/... \
	./host/bundle/... ./host/proxy/... ./host/internal/... ./host/admin/... \
	./host/approval/... ./host/llm/... ./host/token/... ./host/pin/... ./host/wrap/... ./host/selfmcp/... \
	./host/policytest/... ./host/engine/... ./host/enginesock/... ./host/authn/... ./host/version/... \
	./host/telemetry/... ./host/tune/... ./host/firstparty/...
NATIVE_PKGS := ./sdk/go/... ./plugins/... ./cmd/... ./tools/...

.PHONY: help setup setup-core build plugins bundle run test test-core test-native lint fmt-check vet bench bench-core fuzz eval clean

help: ## list targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

setup: setup-core $(SETUP_TARGETS) ## install every toolchain and package the build and tests need

setup-core: ## node/npm (apt) if missing, then the npm MCP upstreams (npm ci)
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { echo "setup-core: installing nodejs npm (apt)"; apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm; }
	@v=$$(node -p 'process.versions.node.split(".")[0]'); [ "$$v" -ge $(NODE_MIN) ] || { echo "setup-core: node $$v is older than $(NODE_MIN)"; exit 1; }
	@[ -d testdata/npm/node_modules/@modelcontextprotocol/server-everything ] || (cd testdata/npm && npm ci --no-audit --no-fund --loglevel=error)

# The first-party module's sha256, linked into binaries that serve bundles (host/firstparty): a
# stage whose module is this very build runs it as native Go code. Expanded in recipes, after
# the module is built.
NATIVE_LDFLAGS = -X github.com/added060/palisade/host/firstparty.Digest=$$(sha256sum $(BUILD)/plugins/firstparty.wasm | cut -c1-64)

build: $(BUILD)/plugins/firstparty.wasm ## build the palisade binary → build/palisade, stamped with `git describe` (`palisade version`), first-party module native
	$(GO) build -ldflags "-X github.com/added060/palisade/host/version.stamp=$(VERSION) $(NATIVE_LDFLAGS)" -o $(BUILD)/palisade ./cmd/palisade

$(BUILD)/plugins/%.wasm: FORCE
	@mkdir -p $(dir $@)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -o $@ ./plugins/$*

FORCE:

plugins: $(GO_PLUGIN_WASM) $(PLUGIN_TARGETS) ## build the first-party plugins → build/plugins/*.wasm

bundle: build plugins model ## stage the example bundle with built plugins and model, pinned → build/bundle
	rm -rf $(BUILD)/bundle && mkdir -p $(BUILD)/bundle/plugins $(BUILD)/bundle/models
	cp -r examples/bundle/. $(BUILD)/bundle/
	cp $(BUILD)/plugins/firstparty.wasm $(BUILD)/bundle/plugins/
	cp $(DETECTOR_MODEL) $(DETECTOR_LONG_MODEL) $(BUILD)/bundle/models/
	$(BUILD)/palisade bundle pin $(BUILD)/bundle
	@[ -f $(BUILD)/keys/dev.key ] || { mkdir -p $(BUILD)/keys && $(BUILD)/palisade keys generate -o $(BUILD)/keys/dev.key; }
	$(BUILD)/palisade bundle sign --key $(BUILD)/keys/dev.key $(BUILD)/bundle

run: setup-core setup-onnxruntime bundle ## gateway on http://127.0.0.1:8420/mcp in front of server-everything, embedded NATS
	./examples/run.sh

test: setup fmt-check vet test-core $(TEST_TARGETS) ## run every test (CI runs this)
	@echo "make test: all test targets passed"

test-core: setup-core setup-postgres $(BUILD)/plugins/firstparty.wasm ## host packages with -race; the end-to-end gateway tests (first-party stages native, as served), plugins, SDK, CLI and tools natively
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m $(CORE_PKGS)
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 10m -run '^TestNativeRolesConcurrent$$' ./plugins/firstparty/
	$(GO) test -count=1 -timeout 30m -ldflags "$(NATIVE_LDFLAGS)" ./host/gateway/...
	$(GO) test -count=1 -timeout 20m $(NATIVE_PKGS)

# The binary `make build` links runs the example bundle's first-party module natively
# (host/firstparty): its digest is the bundle's module's, and every fixture passes that way.
TEST_TARGETS += test-native
test-native: bundle ## the built palisade runs the example bundle's first-party stages natively, and its fixtures pass
	@d=$$($(BUILD)/palisade version -v | sed -n 's/^runs natively: the first-party module sha256://p'); \
	 m=$$(sha256sum $(BUILD)/bundle/plugins/firstparty.wasm | cut -c1-64); \
	 [ -n "$$d" ] && [ "$$d" = "$$m" ] || { echo "test-native: build/palisade would run the bundle's first-party module in Wasm (linked $$d, bundle $$m)"; exit 1; }
	$(BUILD)/palisade policy test --bundle $(BUILD)/bundle > $(BUILD)/test-native.txt || { tail -20 $(BUILD)/test-native.txt; exit 1; }
	@tail -1 $(BUILD)/test-native.txt

fmt-check: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: ## go vet, host and wasip1 plugins
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./plugins/... ./sdk/go/...

lint: fmt-check vet ## gofmt, go vet and staticcheck (pinned; native build only: it does not see //go:wasmexport)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench: setup bench-core $(BENCH_TARGETS) ## Go benchmarks and the gateway-vs-direct load run

bench-core: build bundle ## chain/plugin benchmarks, the served path in process (BenchmarkServedPath), and the load run (direct, full chain, rules only; 1 and 16 connections; per-stage times served and isolated)
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./host/chain/ ./host/plugin/ ./plugins/rules/... ./host/authn/
	$(GO) test -run '^$$' -bench 'ServedPath' -benchtime 2000x -ldflags "$(NATIVE_LDFLAGS)" ./host/gateway/
	$(GO) run -ldflags "$(NATIVE_LDFLAGS)" ./tools/loadgen -bundle $(BUILD)/bundle -duration $${LOAD_CELL:-5s}

fuzz: ## native fuzzing of every parser (FUZZTIME each, default 20s)
	$(GO) test -run '^$$' -fuzz '^FuzzParseBody$$' -fuzztime $${FUZZTIME:-20s} ./host/mcp/
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $${FUZZTIME:-20s} ./host/internal/sse/
	$(GO) test -run '^$$' -fuzz '^FuzzMatch$$' -fuzztime $${FUZZTIME:-20s} ./sdk/go/glob/
	$(GO) test -run '^$$' -fuzz '^FuzzParseManifest$$' -fuzztime $${FUZZTIME:-20s} ./host/bundle/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeVerdict$$' -fuzztime $${FUZZTIME:-20s} ./host/chain/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeVerdictKeepsNoBytes$$' -fuzztime $${FUZZTIME:-20s} ./host/chain/
	$(GO) test -run '^$$' -fuzz '^FuzzWrite$$' -fuzztime $${FUZZTIME:-20s} ./host/internal/sse/
	$(GO) test -run '^$$' -fuzz '^FuzzInstrument$$' -fuzztime $${FUZZTIME:-20s} ./host/plugin/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendVerdict$$' -fuzztime $${FUZZTIME:-20s} ./sdk/go/jsonw/
	$(GO) test -run '^$$' -fuzz '^FuzzParseView$$' -fuzztime $${FUZZTIME:-20s} ./sdk/go/abi/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendView$$' -fuzztime $${FUZZTIME:-20s} ./sdk/go/abi/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendEnvelope$$' -fuzztime $${FUZZTIME:-20s} ./host/chain/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendStringStd$$' -fuzztime $${FUZZTIME:-20s} ./sdk/go/jsonw/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendCompact$$' -fuzztime $${FUZZTIME:-20s} ./sdk/go/jsonw/

eval: $(EVAL_TARGETS) ## detection quality: per-category TPR, FPR and AUROC

clean: ## remove build outputs
	rm -rf $(BUILD)
