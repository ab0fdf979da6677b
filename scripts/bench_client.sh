#!/usr/bin/env bash
# make bench, part `client` (BENCH_ONLY=client): dibs's HTTP client near the machine's limit.
# One external `dibs stub` (its own process, one thread) serves every row; `wrk -t1` (Debian's
# package: one thread, minimal HTTP/1.1) is the ceiling, dibs end to end (claim on the memory
# store, GET, JSON check, compact, fenced write) runs with one shard: one thread each (and with
# two, one per core, as a run does by default). Rounds
# alternate wrk and dibs so that both see the same machine; the median of the rounds is shown.
# Then 1,000 against 10,000 pipelines at 20 ms API latency, with and without --max-connections.
# Prints markdown (bench.sh appends it to latest.md) and writes bench/results/client.md and
# bench/results/client.json.
#   scripts/bench_client.sh BUILD_DIR     (BENCH_CLIENT_ROUNDS, BENCH_CLIENT_SECONDS size it)
set -euo pipefail
build=${1:-build}
dibs="$build/bin/dibs"
one="$build/bin/dibs_bench_engine"
rounds=${BENCH_CLIENT_ROUNDS:-3}
secs=${BENCH_CLIENT_SECONDS:-5}
md=bench/results/client.md
json=bench/results/client.json
# 10,000 pipelines need more than 10,000 descriptors (a soft limit of 1024 would turn them into errors).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
command -v wrk >/dev/null || { echo "bench client: wrk is not installed (apt-get install wrk)" >&2; exit 1; }

stub_pid=
start_stub() {  # $1: latency ms; sets $url
  local out
  out=$(mktemp)
  "$dibs" stub --port 0 --latency-ms "$1" >"$out" 2>&1 &
  stub_pid=$!
  for _ in $(seq 50); do grep -q listening "$out" && break; sleep 0.1; done
  url=$(grep -o 'http://[0-9.]*:[0-9]*' "$out")
  rm -f "$out"
}
stop_stub() { [ -n "$stub_pid" ] && kill "$stub_pid" 2>/dev/null && wait "$stub_pid" 2>/dev/null || true; stub_pid=; }
trap stop_stub EXIT

wrk_rps() {  # $1 connections
  wrk -t1 -c"$1" -d"${secs}s" "$url/json/8.8.8.8" 2>/dev/null | awk '/Requests\/sec/ {print $2}'
}
dibs_run() {  # $1 docs, $2 pipelines, $3 shards, $4 max connections: "docs/s cpu_us/doc"
  "$one" --one "$url,$1,$2,$3,$4" | awk '{printf "%.0f %.1f\n", $1, $2}'
}
# fig=$(dibs_run ...), not read < <(dibs_run ...): set -e then stops on a run that did not complete.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start_stub 0
docs=$(awk -v s="$secs" 'BEGIN {print int(s * 20000)}')
declare -A runs
for r in $(seq "$rounds"); do
  for c in 100 1000; do
    runs[wrk_$c]+="$(wrk_rps $c) "
    fig=$(dibs_run "$docs" $c 1 0); read -r dps cpu <<<"$fig"
    runs[dibs_$c]+="$dps "
    runs[cpu_$c]+="$cpu "
    fig=$(dibs_run "$docs" $c 2 0); read -r dps cpu <<<"$fig"  # the default here: one shard per core
    runs[dibs2_$c]+="$dps "
    runs[cpu2_$c]+="$cpu "
  done
  fig=$(dibs_run "$docs" 10000 1 0); read -r dps cpu <<<"$fig"
  runs[dibs_10000]+="$dps "
  runs[cpu_10000]+="$cpu "
done
stop_stub
med() { tr ' ' '\n' <<<"${runs[$1]}" | grep . | median; }
w100=$(med wrk_100); w1000=$(med wrk_1000)
d100=$(med dibs_100); d1000=$(med dibs_1000); d10000=$(med dibs_10000)
e100=$(med dibs2_100); e1000=$(med dibs2_1000)

start_stub 20
lat_docs=60000
fig=$(dibs_run $lat_docs 1000 2 0); read -r l1000 lc1000 <<<"$fig"
fig=$(dibs_run $lat_docs 10000 2 0); read -r l10000 lc10000 <<<"$fig"
fig=$(dibs_run $lat_docs 10000 2 1000); read -r lm10000 lcm10000 <<<"$fig"
stop_stub
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
{
  echo "## Client: dibs against wrk on one stub (0 ms), one thread each"
  echo
  echo "One \`dibs stub\` process (one thread, unpinned) serves every row; \`wrk -t1 -c{100,1000} -d${secs}s $url/json/8.8.8.8\`"
  echo "is the ceiling; dibs end to end is \`dibs_bench_engine --one URL,$docs,C,1,0\` (memory store, 1 shard: claim, GET,"
  echo "JSON check, compact, fenced write). Median of $rounds alternating rounds. Load average before: $load_before; after: $load_after."
  echo
  echo "| measurement | requests or docs/s | ratio to wrk at the same connections | CPU µs/doc |"
  echo "|---|---|---|---|"
  echo "| wrk -t1, 100 connections | $w100 | 1.00 | |"
  echo "| wrk -t1, 1,000 connections | $w1000 | 1.00 | |"
  echo "| dibs end to end, 100 pipelines | $d100 | $(ratio "$d100" "$w100") | $(med cpu_100) |"
  echo "| dibs end to end, 1,000 pipelines | $d1000 | $(ratio "$d1000" "$w1000") | $(med cpu_1000) |"
  echo "| dibs end to end, 10,000 pipelines | $d10000 | $(ratio "$d10000" "$w1000") (to wrk at 1,000) | $(med cpu_10000) |"
  echo "| dibs end to end, 2 shards (one per core), 100 pipelines | $e100 | $(ratio "$e100" "$w100") | $(med cpu2_100) |"
  echo "| dibs end to end, 2 shards (one per core), 1,000 pipelines | $e1000 | $(ratio "$e1000" "$w1000") | $(med cpu2_1000) |"
  echo
  echo "### 1,000 against 10,000 pipelines at 20 ms API latency (2 shards, $lat_docs docs)"
  echo
  echo "| pipelines | --max-connections | docs/s | ratio to 1,000 pipelines | CPU µs/doc |"
  echo "|---|---|---|---|---|"
  echo "| 1,000 | none | $l1000 | 1.00 | $lc1000 |"
  echo "| 10,000 | none | $l10000 | $(ratio "$l10000" "$l1000") | $lc10000 |"
  echo "| 10,000 | 1,000 | $lm10000 | $(ratio "$lm10000" "$l1000") | $lcm10000 |"
  echo
} | tee "$md"
cat >"$json" <<EOF
{"wrk_100": $w100, "wrk_1000": $w1000, "dibs_100": $d100, "dibs_1000": $d1000, "dibs_10000": $d10000, "dibs_2shards_100": $e100, "dibs_2shards_1000": $e1000,
 "ratio_100": $(ratio "$d100" "$w100"), "ratio_1000": $(ratio "$d1000" "$w1000"),
 "latency20_1000": $l1000, "latency20_10000": $l10000, "latency20_10000_max1000": $lm10000,
 "load_before": "$load_before", "load_after": "$load_after"}
EOF
