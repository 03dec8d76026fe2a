# Plugin SDKs, examples, conformance and scaffolding (sdk/, examples/, host/conformance, host/scaffold).
# Toolchains are pinned here and installed by setup-sdk; nothing is skipped when one is missing:
# PALISADE_REQUIRE_TOOLCHAINS=1 turns a missing compiler into a test failure.

SDK_APT_PKGS := clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32 rustc libstd-rust-dev-wasm32 wabt binaryen make gcc libc6-dev
SDK_NODE_MIN := 18
SDK_GO_PKGS := ./sdk/schema/ ./host/conformance/ ./host/scaffold/ ./examples/...
SDK_BENCHTIME ?= 2000x

SETUP_TARGETS += setup-sdk
TEST_TARGETS += test-sdk
BENCH_TARGETS += bench-sdk

.PHONY: setup-sdk test-sdk bench-sdk examples-sdk

setup-sdk: ## install clang/wasi-libc, Debian rustc+wasm32 std, wabt, binaryen, node+npm; npm ci the AS example
	@missing=""; for p in $(SDK_APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "setup-sdk: apt-get install$$missing"; \
		$$sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@v=$$(node -p 'process.versions.node.split(".")[0]'); [ "$$v" -ge $(SDK_NODE_MIN) ] || { echo "setup-sdk: node $$v < $(SDK_NODE_MIN)"; exit 1; }
	@for t in clang-14 wasm-ld-14 /usr/bin/rustc wat2wasm wasm-opt node npm cc; do command -v $$t >/dev/null || { echo "setup-sdk: $$t missing after install"; exit 1; }; done
	@test -d /usr/lib/rustlib/wasm32-unknown-unknown || { echo "setup-sdk: rust std for wasm32 missing"; exit 1; }
	cd examples/assemblyscript && npm ci --no-audit --no-fund --loglevel=error

examples-sdk: setup-sdk ## build every example plugin into $(PALISADE_BUILD)/examples
	@mkdir -p $(PALISADE_BUILD)/examples
	$(MAKE) -s -C examples/go build OUT=$(PALISADE_BUILD)/examples/go.wasm
	$(MAKE) -s -C examples/rust build OUT=$(PALISADE_BUILD)/examples/rust.wasm
	$(MAKE) -s -C examples/c build OUT=$(PALISADE_BUILD)/examples/c.wasm
	$(MAKE) -s -C examples/assemblyscript build OUT=$(PALISADE_BUILD)/examples/assemblyscript.wasm
	$(MAKE) -s -C examples/wat build OUT=$(PALISADE_BUILD)/examples/wat.wasm
	wat2wasm sdk/wat/minimal.wat -o $(PALISADE_BUILD)/examples/wat-minimal.wasm

test-sdk: setup-sdk ## SDK native tests, schemas vs ABI.md, every example through the real host, scaffolds
	@mkdir -p $(PALISADE_BUILD)/sdk
	cc -O2 -Wall -Wextra -Werror -DPALISADE_NATIVE -o $(PALISADE_BUILD)/sdk/pathguard_test examples/c/pathguard_test.c
	$(PALISADE_BUILD)/sdk/pathguard_test
	$(MAKE) -s -C examples/rust test-native TMP=$(PALISADE_BUILD)/sdk/rust
	PALISADE_REQUIRE_TOOLCHAINS=1 $(GO) test -count=1 $(SDK_GO_PKGS)

bench-sdk: setup-sdk ## per-call time of each example plugin with a 1 KiB and a 64 KiB argument
	PALISADE_REQUIRE_TOOLCHAINS=1 $(GO) test -run '^$$' -bench BenchmarkExamples -benchtime=$(SDK_BENCHTIME) ./examples/
