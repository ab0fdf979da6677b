#!/usr/bin/env bash
# make bench: the benchmarks that exist today, each printing figures measured in this run,
# side by side where there is something to compare with. Results: bench/results/latest.md.
#   1. MariaDB drain rate: dibs against the classic Python SKIP LOCKED consumer (same server,
#      same rows, one run).
#   2. MongoDB commands per completed document, per claim strategy (on the stand-in).
# BENCH_ONLY=mysql|mongo runs one part; BENCH_MYSQL_ROWS and BENCH_MONGO_DOCS size them.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
servers="$build/bench-servers"
only=${BENCH_ONLY:-}
mkdir -p bench/results
out=bench/results/latest.md
cleanup() {
  tests/servers/mongo_standin_ctl.sh stop "$servers" >/dev/null 2>&1 || true
  tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null 2>&1 || true
}
trap cleanup EXIT
{
  echo "# dibs benchmarks"
  echo
  echo "\`make bench\` on $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m), loopback only."
  echo
} > "$out"

if [ -z "$only" ] || [ "$only" = mysql ]; then
  MYSQL_URI= tests/servers/mariadb_ctl.sh start "$servers" >/dev/null
  rows=${BENCH_MYSQL_ROWS:-100000}
  port=$(cat "$servers/mariadb.port")
  {
    echo "## MariaDB: draining $rows rows, dibs against the classic Python consumer"
    echo
    echo "dibs: 2 shards, concurrency 1000, claim batch 100, --on-done delete. Python: bench/mysql_reference.py,"
    echo "10 processes, batches of 100 (python3-mysqldb). Same MariaDB server, freshly seeded rows each run."
    echo "dibs's CPU includes the in-process stub's when it calls the API; Python's does not."
    echo
    "$build/bin/dibs_bench_mysql" --uri "mysql://root@127.0.0.1:$port/dibs_bench" --rows "$rows" \
      --python bench/mysql_reference.py
    echo
  } | tee -a "$out"
  tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null
fi

if [ -z "$only" ] || [ "$only" = mongo ]; then
  MONGODB_URI= tests/servers/mongo_standin_ctl.sh start "$servers" >/dev/null
  uri=$(cat "$servers/mongodb_uri")
  docs=${BENCH_MONGO_DOCS:-5000}
  {
    echo "## MongoDB: commands per completed document ($docs documents per strategy, stand-in, stub at 0 ms)"
    echo
    "$build/bin/dibs_bench_mongo" --uri "$uri" --docs "$docs" --json bench/results/mongo_round_trips.json
    echo
  } | tee -a "$out"
fi
