#!/usr/bin/env bash
# make bench: the benchmarks that exist today, each printing figures measured in this run,
# side by side where there is something to compare with. Results: bench/results/latest.md.
#   1. engine: the HTTP ceiling and dibs's ratio to it, latency hiding, 1 against 2 shards.
#   1b. client: wrk -t1 as the ceiling against dibs end to end on the same stub (scripts/bench_client.sh).
#   2. MariaDB drain rate: dibs against the classic Python SKIP LOCKED consumer (same server,
#      same rows, one run).
#   3. MongoDB: commands per completed document per claim strategy, and dibs against the
#      one-at-a-time pymongo loop it replaces (on the stand-in).
#   4. PostgreSQL: dibs against Graphile Worker and pg-boss (installed with npm into
#      bench/peers/node_modules for this part only), same server, no-op and HTTP jobs.
#   5. answer reuse: docs/s under the same --rate with and without --reuse-answers, documents
#      drawn from docs/10 addresses (bench/answer_reuse.py; bench/results/reuse.md).
#   6. Shared rate: 4 `dibs enrich --rate-scope store` processes on one MariaDB table against one
#      stub counting what it served per second (bench/shared_rate.py; bench/results/shared_rate.md).
#   7. Scale-out: K = 1, 2, 4, 8 `dibs enrich` processes draining one MariaDB table and one
#      stand-in collection together, same total concurrency: rows/s and claim conflicts
#      (bench/k_process.py; also written to bench/results/scale.md).
#   8. Adaptive concurrency: default flags against the best fixed --concurrency of a sweep, per
#      small API (Python's http.server with keep-alive, Connection: close and a slow tail; nginx
#      in front of a slow upstream; nginx limit_req) and the stub (bench/adaptive.py; also written
#      to bench/results/adaptive.md).
#   10. An API's quota (X-RateLimit-*, 50 a 1 s window on the clock's seconds): default flags,
#      answers in 10 and 50 ms, kept alive and HTTP/1.0: the share answered 429 and the rate against
#      the quota's (bench/quota.py; bench/results/quota.md).
#   9. A collector that is down: `dibs demo` untraced against traced to a collector that never
#      answers and to one that answers 503, paired (bench/otlp_collector.py; bench/results/otlp.md).
#   11. An LLM API metering tokens a minute (tests/servers/llm_api.py, OpenAI- and Anthropic-like):
#      default flags, the share of the limit used and of calls answered 429, one process on a file
#      and four on one MariaDB table (bench/llm_tokens.py; bench/results/llm.md).
#   12. Embeddings, many rows a request (tests/servers/embeddings_api.py, OpenAI-compatible): default
#      flags beside a sweep of fixed batch sizes x concurrencies, then beside the sweep's best by
#      turns; rows/s, requests a row, every vector checked (bench/embeddings.py;
#      bench/results/embeddings.md); the same against two shapes written apart, text-embeddings-
#      inference's and Ollama's (tests/servers/unseen_embeddings.js; bench/results/embeddings-tei.md,
#      embeddings-ollama.md), and llama.cpp's and vLLM's (tests/servers/unseen_embeddings_more.js;
#      embeddings-llamacpp.md, embeddings-vllm.md).
# BENCH_ONLY=engine|client|mysql|mongo|pg|reuse|sharedrate|scale|adaptive|otlp|quota|llm|embeddings runs one part; BENCH_MYSQL_ROWS, BENCH_MONGO_DOCS,
# BENCH_PG_JOBS, BENCH_REUSE_DOCS, BENCH_OTLP_DOCS, BENCH_SHARED_RATE, BENCH_SHARED_SECONDS, BENCH_SCALE_ROWS and
# BENCH_SCALE_DOCS size them.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
servers="$build/bench-servers"
only=${BENCH_ONLY:-}
mkdir -p bench/results
# One part (BENCH_ONLY) writes its own file and leaves the full run's latest.md/.json and JSONs alone.
out=bench/results/latest${only:+-$only}.md
cleanup() {
  tests/servers/mongo_standin_ctl.sh stop "$servers" >/dev/null 2>&1 || true
  tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null 2>&1 || true
  tests/servers/postgres_ctl.sh stop "$servers" >/dev/null 2>&1 || true
}
trap cleanup EXIT
# Every figure names what produced it: the commit (with "+changes" when the tree was not clean),
# the time, and the command.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain 2>/dev/null)" ] && commit="$commit+changes"
when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
command="make bench${only:+ (BENCH_ONLY=$only)}"
{
  echo "# dibs benchmarks"
  echo
  echo "\`$command\` at commit $commit, $when, $(nproc) cores, $(uname -m), loopback only."
  echo
} > "$out"
[ -n "$only" ] || rm -f bench/results/engine.json bench/results/client.json bench/results/mysql_drain.json bench/results/mongo_round_trips.json \
  bench/results/pg_peers.json bench/results/pg_columns.json bench/results/reuse.json bench/results/otlp.json bench/results/scale_mysql.json bench/results/scale_mysql_pool.json bench/results/scale_mongo.json

if [ -z "$only" ] || [ "$only" = engine ]; then
  "$build/bin/dibs_bench_engine" --dibs "$build/bin/dibs" --json bench/results/engine.json | tee -a "$out"
fi

if [ -z "$only" ] || [ "$only" = client ]; then
  bash scripts/bench_client.sh "$build" | tee -a "$out"
fi

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
      --python bench/mysql_reference.py --json bench/results/mysql_drain.json
    echo
  } | tee -a "$out"
  tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null
fi

if [ -z "$only" ] || [ "$only" = mongo ]; then
  MONGODB_URI= tests/servers/mongo_standin_ctl.sh start "$servers" >/dev/null
  uri=$(cat "$servers/mongodb_uri")
  # 2,000 keeps make bench under 10 minutes: the stand-in scans its collection on every claim,
  # so the per-document strategies slow down with the square of the size (commands/doc don't).
  docs=${BENCH_MONGO_DOCS:-2000}
  {
    echo "## MongoDB: commands per completed document ($docs documents per strategy, stand-in, stub at 0 ms)"
    echo
    echo "dibs: 2 shards, concurrency 200, claim batch 100. The pymongo loop: bench/mongo_reference.py, 10 threads."
    echo "The stand-in (Python, one command at a time, a full scan per claim) limits every docs/s here; the"
    echo "commands per document are what would carry over to a real server. dibs's CPU includes the"
    echo "in-process stub's; the loop's does not."
    echo
    "$build/bin/dibs_bench_mongo" --uri "$uri" --docs "$docs" --json bench/results/mongo_round_trips.json \
      --python bench/mongo_reference.py
    echo
  } | tee -a "$out"
fi

if [ -z "$only" ] || [ "$only" = pg ]; then
  # The peers are Node packages, pinned in bench/peers/package-lock.json; the product itself
  # uses Debian's packages only.
  npm ci --prefix bench/peers --no-audit --no-fund --loglevel=error >/dev/null
  POSTGRES_URI= tests/servers/postgres_ctl.sh start "$servers" >/dev/null
  jobs=${BENCH_PG_JOBS:-100000}
  {
    echo "## PostgreSQL: draining $jobs jobs, dibs against Graphile Worker and pg-boss"
    echo
    echo "Same server (PostgreSQL $(psql --version | awk '{print $3}'), fsync off), each side's jobs enqueued with its own bulk"
    echo "API (not timed) then drained; no-op jobs, then jobs that GET one shared \`dibs stub\` (0 ms, its CPU in a column"
    echo "of its own, on no side). Client CPU: the side's own processes over the drain; server CPU: the postmaster"
    echo "and its children (/proc). dibs: bench/pg_drain.cpp; the peers: bench/peers/*.js with the settings"
    echo "shown (Graphile Worker's performance page; pg-boss's batch fetch). Ratio: dibs's jobs/s over the"
    echo "faster peer's."
    echo
    /usr/bin/python3 bench/pg_peers.py --uri "$(cat "$servers/postgres_uri")" --pg-home "$(cat "$servers/postgres.home")" \
      --build "$build" --jobs "$jobs" --json bench/results/pg_peers.json --md bench/results/pg_peers.md \
      --header "\`$command\` at commit $commit, $when, $(nproc) cores, $(uname -m), loopback only."
    echo
    echo "### The claim's cost with a request body of three columns"
    echo
    /usr/bin/python3 bench/pg_columns.py --uri "$(cat "$servers/postgres_uri")" --build "$build" --jobs "$jobs" \
      --json bench/results/pg_columns.json --md bench/results/pg_columns.md
    echo
  } | tee -a "$out"
  tests/servers/postgres_ctl.sh stop "$servers" >/dev/null
fi

if [ -z "$only" ] || [ "$only" = reuse ]; then
  {
    echo "\`$command\` at commit $commit, $when, $(nproc) cores, $(uname -m), loopback only."
    echo
  } > bench/results/reuse.md
  /usr/bin/python3 bench/answer_reuse.py --dibs "$build/bin/dibs" --docs "${BENCH_REUSE_DOCS:-40000}" \
    --json bench/results/reuse.json --md bench/results/reuse.part.md | tee -a "$out"
  cat bench/results/reuse.part.md >> bench/results/reuse.md
  rm -f bench/results/reuse.part.md
  echo | tee -a "$out"
fi

# A part with a results file of its own, bench/results/NAME.md (and .json): the commit and time
# first, then what `bench/SCRIPT --dibs ... ARGS --json ... --md ...` wrote.
part_with_own_file() {
  local name=$1 script=$2
  shift 2
  {
    echo "\`$command\` at commit $commit, $when, $(nproc) cores, $(uname -m), loopback only."
    echo
  } > "bench/results/$name.md"
  /usr/bin/python3 "bench/$script" --dibs "$build/bin/dibs" "$@" \
    --json "bench/results/$name.json" --md "bench/results/$name.part.md" | tee -a "$out"
  cat "bench/results/$name.part.md" >> "bench/results/$name.md"
  rm -f "bench/results/$name.part.md"
  echo | tee -a "$out"
}

if [ -z "$only" ] || [ "$only" = quota ]; then
  part_with_own_file quota quota.py --items "${BENCH_QUOTA_ITEMS:-2000}"
fi

if [ -z "$only" ] || [ "$only" = llm ]; then
  MYSQL_URI= tests/servers/mariadb_ctl.sh start "$servers" >/dev/null
  port=$(cat "$servers/mariadb.port")
  part_with_own_file llm llm_tokens.py --items "${BENCH_LLM_ITEMS:-3000}" --mysql-uri "mysql://root@127.0.0.1:$port/dibs_bench"
  tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null
fi

if [ -z "$only" ] || [ "$only" = embeddings ]; then
  part_with_own_file embeddings embeddings.py --items "${BENCH_EMBED_ITEMS:-20000}"
  # Two shapes dibs was not tuned on (tests/servers/unseen_embeddings.js): reported apart.
  part_with_own_file embeddings-tei embeddings.py --items "${BENCH_EMBED_ITEMS:-20000}" --server tei --repeats 1 --pairs 3
  part_with_own_file embeddings-ollama embeddings.py --items "${BENCH_EMBED_ITEMS:-20000}" --server ollama --repeats 1 --pairs 3
  # Two more (tests/servers/unseen_embeddings_more.js): llama.cpp's server, vLLM's.
  part_with_own_file embeddings-llamacpp embeddings.py --items "${BENCH_EMBED_ITEMS:-20000}" --server llamacpp --repeats 1 --pairs 3
  part_with_own_file embeddings-vllm embeddings.py --items "${BENCH_EMBED_ITEMS:-20000}" --server vllm --repeats 1 --pairs 3
fi

if [ -z "$only" ] || [ "$only" = otlp ]; then
  part_with_own_file otlp otlp_collector.py --docs "${BENCH_OTLP_DOCS:-200000}"
fi

if [ -z "$only" ] || [ "$only" = sharedrate ]; then
  MYSQL_URI= tests/servers/mariadb_ctl.sh start "$servers" >/dev/null
  port=$(cat "$servers/mariadb.port")
  {
    /usr/bin/python3 bench/shared_rate.py --dibs "$build/bin/dibs" --uri "mysql://root@127.0.0.1:$port/dibs_bench" \
      --rate "${BENCH_SHARED_RATE:-20/s}" --seconds "${BENCH_SHARED_SECONDS:-30}" --processes 4 \
      --md bench/results/shared_rate.md
    echo "\`$command\` at commit $commit, $when." >> bench/results/shared_rate.md
  } | tee -a "$out"
  tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null
fi

if [ -z "$only" ] || [ "$only" = adaptive ]; then
  /usr/bin/python3 bench/adaptive.py --dibs "$build/bin/dibs" --md bench/results/adaptive.md --json bench/results/adaptive.json \
    | tee -a "$out"
fi

if [ -z "$only" ] || [ "$only" = scale ]; then
  MYSQL_URI= tests/servers/mariadb_ctl.sh start "$servers" >/dev/null
  MONGODB_URI= tests/servers/mongo_standin_ctl.sh start "$servers" >/dev/null
  rows=${BENCH_SCALE_ROWS:-50000}
  docs=${BENCH_SCALE_DOCS:-2000}
  port=$(cat "$servers/mariadb.port")
  mongo_port=$(cat "$servers/mongo_standin.port")
  mysql_cmd=(/usr/bin/python3 bench/k_process.py --dibs "$build/bin/dibs" --rows "$rows" --ks 1,2,4,8 --repeat 3
    --store "mysql://root@127.0.0.1:$port/dibs_scale?table=jobs" --on-done delete --json bench/results/scale_mysql.json
    --server-pid "$(cat "$servers/mariadb.pid")")
  mongo_cmd=(/usr/bin/python3 bench/k_process.py --dibs "$build/bin/dibs" --rows "$docs" --ks 1,2,4,8
    --store "mongodb://127.0.0.1:$mongo_port/dibs_scale?collection=jobs" --claim batch --json bench/results/scale_mongo.json
    --server-pid "$(cat "$servers/mongo_standin.pid")")
  {
    echo "## Scale-out: K processes draining one store together"
    echo
    echo "\`$command\` at commit $commit, $when, $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "Each K: the store reset and seeded, one \`dibs stub\` (0 ms, 2 threads) that all the processes call, K \`dibs enrich\`"
    echo "processes started together with --concurrency 1000/K each (default shards: one per core, fewer under two claim"
    echo "batches a core; one database connection per shard, at most 4), timed from their"
    echo "start to the last exit. Claim conflicts: candidates another worker took first, summed over the processes."
    echo "Every process, the stub and the server share this machine's cores: on a small machine, K = 8 pays for"
    echo "eight processes' threads and connections in CPU the server no longer has."
    echo
    echo "### MariaDB, $rows rows, --on-done delete"
    echo
    printf '   '; printf ' %q' "${mysql_cmd[@]}"; echo
    echo
    "${mysql_cmd[@]}"
    echo
    # The same server with its thread pool: on 2 cores, K processes' connections (K x shards)
    # otherwise outnumber the cores and InnoDB spins; the pool runs one statement per core.
    tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null
    MYSQL_URI= MARIADB_EXTRA_ARGS=--thread-handling=pool-of-threads tests/servers/mariadb_ctl.sh start "$servers" >/dev/null
    port=$(cat "$servers/mariadb.port")
    pool_cmd=(/usr/bin/python3 bench/k_process.py --dibs "$build/bin/dibs" --rows "$rows" --ks 1,2,4,8 --repeat 3
      --store "mysql://root@127.0.0.1:$port/dibs_scale?table=jobs" --on-done delete
      --json bench/results/scale_mysql_pool.json --server-pid "$(cat "$servers/mariadb.pid")")
    echo "### MariaDB with its thread pool (--thread-handling=pool-of-threads), $rows rows, --on-done delete"
    echo
    echo "The server started with MARIADB_EXTRA_ARGS=--thread-handling=pool-of-threads, as a DBA sets it for many"
    echo "client connections on few cores."
    echo
    printf '   '; printf ' %q' "${pool_cmd[@]}"; echo
    echo
    "${pool_cmd[@]}"
    echo
    echo "### MongoDB stand-in, $docs documents, --claim batch"
    echo
    echo "The stand-in serves one command at a time in Python: its docs/s say nothing about MongoDB's; the"
    echo "conflicts are what carries over."
    echo
    printf '   '; printf ' %q' "${mongo_cmd[@]}"; echo
    echo
    "${mongo_cmd[@]}"
    echo
  } | tee bench/results/scale.md | tee -a "$out"
  tests/servers/mongo_standin_ctl.sh stop "$servers" >/dev/null
  tests/servers/mariadb_ctl.sh stop "$servers" >/dev/null
fi

[ -z "$only" ] || exit 0  # one part: its results file is written; the full run's plots and summary stay
bash bench/plot.sh
{
  echo "Plots: [docs/s against concurrency](docs_per_s.png), [MongoDB commands per document](commands_per_doc.png)."
} >> "$out"
COMMIT="$commit" WHEN="$when" COMMAND="$command" /usr/bin/python3 - <<'PY'
import json, os
out = {"meta": {"commit": os.environ["COMMIT"], "date": os.environ["WHEN"], "command": os.environ["COMMAND"],
                "cores": os.cpu_count()}}
for name in ("engine", "client", "mysql_drain", "mongo_round_trips", "pg_peers", "pg_columns", "reuse", "otlp", "scale_mysql", "scale_mysql_pool", "scale_mongo"):
    path = "bench/results/%s.json" % name
    if os.path.exists(path):
        out[name] = json.load(open(path))
json.dump(out, open("bench/results/latest.json", "w"), indent=1)
PY
