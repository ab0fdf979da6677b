# The two commands of the README:
#   make demo   install what is missing, build the dibs program only, run the demo on the embedded default
#   make test   install what is missing, build, start what the tests need, run the tests
# Everything comes from Debian packages (scripts/install-deps.sh); nothing is downloaded.

BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= 2
# Tests run four at a time (their time is mostly servers' clocks, not CPU), the sanitized ones
# three (more of their time is CPU; three is what was measured): docs/testing.md has the figures.
TEST_JOBS ?= 4
SANITIZE_TEST_JOBS ?= 3
DEMO_ARGS ?=

.PHONY: all deps deps-build configure configure-demo build demo test sanitize bench fuzz chaos chaos-cluster \
  servers-at-once clean

all: build

# What each target installs (scripts/install-deps.sh says which packages): the demo only what the
# program needs to build; the tests their framework and servers on top.
deps:
	@bash scripts/install-deps.sh test

deps-build:
	@bash scripts/install-deps.sh build

# A build tree first configured by `make demo` has the tests off (Catch2 may not be installed):
# the first `make build` or `make test` turns them on.
configure: deps
	@if [ ! -f $(BUILD)/build.ninja ] || grep -q '^DIBS_TESTS:BOOL=OFF' $(BUILD)/CMakeCache.txt; then \
	  cmake -S . -B $(BUILD) -G Ninja -DDIBS_TESTS=ON; fi

configure-demo: deps-build
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake -S . -B $(BUILD) -G Ninja -DDIBS_TESTS=OFF; fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Only the program the demo runs, from only the packages it needs: the tests and benches are
# `make build` (or `make test`).
demo: configure-demo
	cmake --build $(BUILD) -j $(JOBS) --target dibs
	./$(BUILD)/bin/dibs demo $(DEMO_ARGS)

# MONGOC_DISABLE_SHM: libmongoc (initialized before main in Debian's build) keeps counters in
# /dev/shm/mongoc-<pid>; a process killed with -9 (the chaos tests do) leaves its segment behind,
# and a later process given the same pid prints "Falling back to malloc for counters" in the
# driver's own format before dibs can route it. Without shared memory there is nothing to collide.
export MONGOC_DISABLE_SHM := 1

# A red run ends with each failed test's output again (a CI log cut to its end keeps the reasons).
test: build
	ctest --test-dir $(BUILD) -j $(TEST_JOBS) --output-on-failure --timeout 300 || \
	  { python3 scripts/failed_tests_output.py $(BUILD); exit 8; }

# The tests again, built with AddressSanitizer and UndefinedBehaviorSanitizer. Line tables only
# (-g1): the sanitizers' reports keep file and line, and a file compiles about a third faster than
# with full debug info (measured on tests/integration/test_api_outage.cpp: 8.5 s with -g, 5.7 s).
sanitize: deps
	@if [ ! -f $(ASAN_BUILD)/build.ninja ]; then \
	  cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DDIBS_SANITIZE=ON -DDIBS_BENCH=OFF; fi
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) -j $(SANITIZE_TEST_JOBS) --output-on-failure --timeout 600 || \
	  { python3 scripts/failed_tests_output.py $(ASAN_BUILD); exit 8; }

bench: build
	@bash scripts/install-deps.sh bench
	BUILD=$(BUILD) bash scripts/bench.sh

# Every test server's start at the same moment, SERVERS_ROUNDS (10) times, each answering from its
# own files (tests/servers/start_all_at_once.sh; ctest runs one round of it).
servers-at-once: deps
	bash tests/servers/start_all_at_once.sh $(BUILD)/test-servers-at-once $(or $(SERVERS_ROUNDS),10)

# The chaos driver: CHAOS_ROUNDS (50) rounds against a private MariaDB, then CHAOS_MONGO_ROUNDS
# (10, smaller: the stand-in is slow) against the MongoDB-wire stand-in, then CHAOS_PG_ROUNDS (10)
# against a private PostgreSQL, poison answers at CHAOS_POISON_RATE; prints the figures and writes
# them, with the commit, the date, the commands and the seeds, to bench/results/chaos-latest.md and
# .json (every run is reported, then the first failure is the exit status). CHAOS_ARGS: more
# dibs_chaos flags for every run.
CHAOS_POISON_RATE ?= 0.01
CHAOS_ARGS ?=
chaos: build
	@rm -f $(BUILD)/chaos-mariadb.json $(BUILD)/chaos-mongo.json $(BUILD)/chaos-postgres.json
	@bash tests/servers/mariadb_ctl.sh start $(BUILD)/test-servers > /dev/null
	./$(BUILD)/bin/dibs_chaos --rounds $(or $(CHAOS_ROUNDS),50) --items 2000 --workers 4 --seconds 8 \
	  --poison-rate $(CHAOS_POISON_RATE) --report $(BUILD)/chaos-mariadb.json $(CHAOS_ARGS); \
	  rc=$$?; bash tests/servers/mariadb_ctl.sh stop $(BUILD)/test-servers > /dev/null; \
	  bash tests/servers/mongo_standin_ctl.sh start $(BUILD)/test-servers > /dev/null; \
	  ./$(BUILD)/bin/dibs_chaos --store mongo --rounds $(or $(CHAOS_MONGO_ROUNDS),10) --items 300 --workers 3 --seconds 8 \
	    --poison-rate $(CHAOS_POISON_RATE) --report $(BUILD)/chaos-mongo.json $(CHAOS_ARGS); \
	  rc2=$$?; bash tests/servers/mongo_standin_ctl.sh stop $(BUILD)/test-servers > /dev/null; \
	  bash tests/servers/postgres_ctl.sh start $(BUILD)/test-servers > /dev/null; \
	  ./$(BUILD)/bin/dibs_chaos --store postgres --rounds $(or $(CHAOS_PG_ROUNDS),10) --items 2000 --workers 4 --seconds 8 \
	    --poison-rate $(CHAOS_POISON_RATE) --report $(BUILD)/chaos-postgres.json $(CHAOS_ARGS); \
	  rc3=$$?; bash tests/servers/postgres_ctl.sh stop $(BUILD)/test-servers > /dev/null; \
	  python3 tests/chaos/chaos_report.py bench/results/chaos-latest $(BUILD)/chaos-mariadb.json $(BUILD)/chaos-mongo.json \
	    $(BUILD)/chaos-postgres.json; \
	  [ $$rc -eq 0 ] || exit $$rc; [ $$rc2 -eq 0 ] || exit $$rc2; exit $$rc3

# The cluster rounds, apart from make chaos (they start clusters of their own).
# Galera: CHAOS_GALERA_ROUNDS (10) chaos rounds against a three-node cluster (dibs_chaos --store
# galera: each worker on its own node first, a node killed with SIGKILL and rejoined by IST in
# every round, the MariaDB checker), then three workers draining 20,000 rows with a node killed
# and rejoined mid-run (dibs_galera_tests' [.big] case): bench/results/chaos-cluster-latest.
# PostgreSQL failover: CHAOS_PG_FAILOVER_ROUNDS (5) rounds against a primary and its streaming
# standby (a fresh pair each round), the round's server restart being a failover (the primary
# SIGKILLed, the standby promoted): bench/results/chaos-pg-failover-latest.
# Every part runs; the first failure is the exit status.
chaos-cluster: build
	@rm -f $(BUILD)/chaos-galera.json $(BUILD)/galera-drain-20000-rows.txt $(BUILD)/chaos-pg-failover.json
	@bash tests/servers/galera_ctl.sh start $(BUILD)/test-servers > /dev/null
	./$(BUILD)/bin/dibs_chaos --store galera --rounds $(or $(CHAOS_GALERA_ROUNDS),10) --items 2000 --workers 3 --seconds 10 \
	  --poison-rate $(CHAOS_POISON_RATE) --report $(BUILD)/chaos-galera.json $(CHAOS_ARGS); \
	  rc=$$?; ./$(BUILD)/bin/dibs_galera_tests "[failover][.big]" --durations yes > $(BUILD)/galera-drain-20000-rows.txt 2>&1; \
	  rc2=$$?; cat $(BUILD)/galera-drain-20000-rows.txt; \
	  bash tests/servers/galera_ctl.sh stop $(BUILD)/test-servers > /dev/null; \
	  python3 tests/chaos/chaos_report.py --title "make chaos-cluster: the latest run" --note $(BUILD)/galera-drain-20000-rows.txt \
	    bench/results/chaos-cluster-latest $(BUILD)/chaos-galera.json; \
	  ./$(BUILD)/bin/dibs_chaos --store postgres-failover --rounds $(or $(CHAOS_PG_FAILOVER_ROUNDS),5) --items 2000 --workers 4 \
	  --seconds 8 --poison-rate $(CHAOS_POISON_RATE) --report $(BUILD)/chaos-pg-failover.json $(CHAOS_ARGS); \
	  rc3=$$?; python3 tests/chaos/chaos_report.py --title "make chaos-cluster (PostgreSQL failover): the latest run" \
	    bench/results/chaos-pg-failover-latest $(BUILD)/chaos-pg-failover.json; \
	  [ $$rc -eq 0 ] || exit $$rc; [ $$rc2 -eq 0 ] || exit $$rc2; exit $$rc3

# libFuzzer targets (clang), each for FUZZ_SECONDS (30) from the committed corpus.
fuzz:
	@bash scripts/install-deps.sh fuzz
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),30) bash scripts/fuzz.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
