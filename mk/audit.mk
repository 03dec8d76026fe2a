# host/audit (audit events → JetStream, disk spool, tail), host/bus (embedded nats-server),
# host/internal/testenv (StartNATS for everyone's tests). Tests run real nats-servers on loopback.

AUDIT_PKGS := ./host/audit/... ./host/bus/...
AUDIT_FUZZTIME ?= 30s
AUDIT_BENCHTIME ?= 2s

SETUP_TARGETS += setup-audit
TEST_TARGETS += test-audit
BENCH_TARGETS += bench-audit

.PHONY: setup-audit test-audit bench-audit fuzz-audit

setup-audit: ## install gcc + libc6-dev (apt) when missing: -race needs cgo
	@command -v gcc >/dev/null && dpkg -s libc6-dev >/dev/null 2>&1 || { echo "setup-audit: installing gcc libc6-dev (apt)"; apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev; }

test-audit: setup-audit ## audit, bus and testenv tests with -race (NATS outage, spool replay, dedup, tail, schema)
	CGO_ENABLED=1 $(GO) test -race -count=1 $(AUDIT_PKGS)
	CGO_ENABLED=1 $(GO) test -race -count=1 -run 'NATS' ./host/internal/testenv/

bench-audit: ## audit publish throughput: Record → embedded JetStream (events/s)
	$(GO) test -run '^$$' -bench . -benchtime $(AUDIT_BENCHTIME) ./host/audit/

fuzz-audit: ## fuzz the audit spool reader with corrupt and truncated files, and the event encoder against json.Marshal
	$(GO) test -run '^$$' -fuzz '^FuzzParseRecords$$' -fuzztime $(AUDIT_FUZZTIME) ./host/audit/
	$(GO) test -run '^$$' -fuzz '^FuzzOpenSpool$$' -fuzztime $(AUDIT_FUZZTIME) ./host/audit/
	$(GO) test -run '^$$' -fuzz '^FuzzAppendEvent$$' -fuzztime $(AUDIT_FUZZTIME) ./host/audit/
