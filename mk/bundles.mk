# Bundles: signing, sources, activation manager, admin routes, fleet (host/bundle, host/admin,
# host/gateway/bundles*.go, cmd/palisade/{bundle,keys}.go). test-core already runs these packages
# with -race; the race detector inflates RSS and slows activation, so the memory check and the
# full 100-swap in-process run go here, without it. The fleet test (host/gateway TestFleet)
# runs in test-core.

.PHONY: test-bundles soak-bundles

TEST_TARGETS += test-bundles

test-bundles: ## bundles: 100 swaps under load (engine and gateway) and flat memory over 100 swaps (no -race)
	set -o pipefail; $(GO) test -count=1 -v -run 'TestSwapUnderLoad|TestSwapMemoryFlat' ./host/bundle/ | grep -E '^(---|ok|FAIL|PASS)|_test\.go:|swaps|RSS|panic'
	set -o pipefail; $(GO) test -count=1 -v -run 'TestSwapThroughGateway' ./host/gateway/ | grep -E '^(---|ok|FAIL|PASS)|_test\.go:|swaps|panic'

soak-bundles: ## bundles: 1,000 swaps, RSS before and after (PALISADE_SOAK=1)
	PALISADE_SOAK=1 $(GO) test -count=1 -v -timeout 60m -run 'TestSwapMemoryFlat' ./host/bundle/

.PHONY: bench-bundles
BENCH_TARGETS += bench-bundles

bench-bundles: ## bundles: activation latency (verify, build with warm cache, fixtures, swap)
	$(GO) test -run '^$$' -bench BenchmarkActivate -benchtime 30x ./host/bundle/
