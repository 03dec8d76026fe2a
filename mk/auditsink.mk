# host/auditsink: the audit stream copied into PostgreSQL (verified, exactly once), its schema
# migrations, retention and queries. Tests run a real PostgreSQL (host/auditsink/pgtest: initdb
# and pg_ctl in a temp dir, as the system user palisade-pgtest when root) and fail, never skip,
# when its binaries are missing.

AUDITSINK_PKGS := ./host/auditsink/...
AUDITSINK_BENCHTIME ?= 1x

SETUP_TARGETS += setup-postgres
TEST_TARGETS += test-auditsink
BENCH_TARGETS += bench-auditsink

.PHONY: setup-postgres test-auditsink bench-auditsink

setup-postgres: ## install postgresql (apt) when initdb and pg_ctl are missing: the audit sink tests run a real server
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; } || { echo "setup-postgres: installing postgresql (apt)"; apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql; }

test-auditsink: setup-postgres setup-audit ## audit sink with -race: exactly once across sink and PostgreSQL restarts, forged events, retention, migrations, queries
	CGO_ENABLED=1 $(GO) test -race -count=1 $(AUDITSINK_PKGS)

bench-auditsink: setup-postgres ## audit sink drain rate (50k signed backlog, events/s); the dashboard's history queries over 50k rows
	$(GO) test -run '^$$' -bench '^BenchmarkSinkDrain$$' -benchtime $(AUDITSINK_BENCHTIME) $(AUDITSINK_PKGS)
	$(GO) test -run '^$$' -bench '^BenchmarkHistory$$' -benchtime 20x ./host/auditsink/
