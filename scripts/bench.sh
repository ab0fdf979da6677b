#!/usr/bin/env bash
# make bench: the benchmarks that exist today, each printing figures measured in this run.
#   1. MongoDB commands per completed document, per claim strategy (on the stand-in).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
servers="$build/bench-servers"
mkdir -p bench/results
trap 'tests/servers/mongo_standin_ctl.sh stop "$servers" >/dev/null 2>&1 || true' EXIT
MONGODB_URI= tests/servers/mongo_standin_ctl.sh start "$servers" >/dev/null
uri=$(cat "$servers/mongodb_uri")
docs=${BENCH_MONGO_DOCS:-5000}
{
  echo "## MongoDB round trips per document ($docs documents per strategy, stand-in, stub at 0 ms)"
  echo
  echo "Command: \`make bench\` ($(date -u +%Y-%m-%d), $(nproc) cores)"
  echo
  "$build/bin/dibs_bench_mongo" --uri "$uri" --docs "$docs" --json bench/results/mongo_round_trips.json
} | tee bench/results/mongo_round_trips.md
