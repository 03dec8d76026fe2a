# Approvals and the dashboard (host/approval, host/admin UI routes, web/, tests/ui).
# The UI tests run in headless Debian Chromium driven by playwright-core (no browser download:
# `npx playwright install` cannot work on a closed network).
WEB_BUILD := $(BUILD)/web

SETUP_TARGETS += setup-web
TEST_TARGETS += test-web
BENCH_TARGETS += bench-web

.PHONY: setup-web test-web test-web-go test-web-ui bench-web

setup-web: ## install Debian chromium (apt) and playwright-core (npm ci in tests/ui); npm ci testdata/npm
	@command -v chromium >/dev/null || { echo "setup-web: apt-get install chromium"; apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }
	@command -v npm >/dev/null || { echo "setup-web: apt-get install nodejs npm"; apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm; }
	@v=$$(node -p 'process.versions.node.split(".")[0]'); [ "$$v" -ge 20 ] || { echo "setup-web: node $$v < 20"; exit 1; }
	@[ -d tests/ui/node_modules/playwright-core ] || (cd tests/ui && npm ci --no-audit --no-fund)
	@[ -d testdata/npm/node_modules/@modelcontextprotocol/server-everything ] || (cd testdata/npm && npm ci --no-audit --no-fund)

test-web: test-web-ui ## the dashboard in headless Chromium (the Go approval tests run in test-core)

test-web-go:
	$(GO) test -race ./host/approval/ ./plugins/rules/ruleset/
	$(GO) test ./host/admin/ ./host/gateway/ -run 'Approvals|HeldCall|RuleTimeout|Playground|Feed|Stats|Percentiles'

test-web-ui: setup-web
	@mkdir -p $(WEB_BUILD)
	$(GO) build -o $(WEB_BUILD)/palisade ./cmd/palisade
	$(GO) build -o $(WEB_BUILD)/testop ./host/internal/testop
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $(WEB_BUILD)/rules.wasm ./plugins/rules
	cd tests/ui && PALISADE_BIN=$(WEB_BUILD)/palisade PALISADE_TESTOP=$(WEB_BUILD)/testop PALISADE_RULES_WASM=$(WEB_BUILD)/rules.wasm npm test

bench-web: ## approval round trip (local and across two gateways on NATS KV), granted-hold fast path
	$(GO) test -run '^$$' -bench . -benchtime=500x ./host/approval/
