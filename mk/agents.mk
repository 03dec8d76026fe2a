# Where agents meet Palisade: the Claude Code hook, the stdio proxy, wrap/unwrap, tool pinning,
# policy tests and Palisade's own MCP server (host/proxy/{hook,stdio}.go, host/pin, host/wrap,
# host/policytest, host/selfmcp, cmd/palisade/{hook,proxy,wrap,policy,mcp}.go,
# host/gateway/agents.go). test-core already runs these packages (-race for host/); this fragment
# adds the checks that must never be skipped and the measurements.

AGENTS_FUZZTIME ?= 30s

TEST_TARGETS += test-agents
BENCH_TARGETS += bench-agents

.PHONY: test-agents bench-agents fuzz-agents

test-agents: setup-core ## stdio proxy to the real npm server-filesystem (never skipped), wrap round-trip fuzz seeds
	@[ -d testdata/npm/node_modules/@modelcontextprotocol/server-filesystem ] || (cd testdata/npm && npm ci --no-audit --no-fund --loglevel=error)
	$(GO) test -count=1 -run 'FuzzWrapRoundTrip' ./host/wrap/

bench-agents: ## hook cold time (new process, warm compile cache) and the --gateway round trip
	$(GO) test -run '^$$' -bench 'BenchmarkHookProcess' -benchtime 20x ./cmd/palisade/
	$(GO) test -run '^$$' -bench 'BenchmarkHookViaGateway|BenchmarkStdioProxyCall' -benchtime 2000x ./host/proxy/

fuzz-agents: ## fuzz wrap/unwrap: every config wrap accepts must unwrap to the same bytes
	$(GO) test -run '^$$' -fuzz '^FuzzWrapRoundTrip$$' -fuzztime $(AGENTS_FUZZTIME) ./host/wrap/
