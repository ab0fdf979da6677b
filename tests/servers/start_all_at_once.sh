#!/usr/bin/env bash
# The check that the test servers' starts are safe to run at once and in any order (ctest -j
# starts the fixtures side by side): ROUNDS times, every server the fixtures start (MariaDB, the
# three Galera nodes, PostgreSQL, the PostgreSQL primary and standby pair, the MongoDB-wire
# stand-in, nginx, the quirky API) and MARIADB_COPIES (5) more MariaDB servers are started at the
# same moment in DIR, then each is asked a question through the URI or port its start wrote (so a
# URI naming another server's port, or a server that died after its start said ready, fails the
# round), then all are stopped. The MariaDB copies are where a shared tmpdir bites: a server's
# start removes the `#sql*` files it finds there, another's bootstrap tables among them (with
# every server on /tmp, the first round of this check failed). Each start's output is kept in
# DIR/roundN/*.log. Exits non-zero at the first round with a failure.
#   start_all_at_once.sh DIR [ROUNDS]
set -uo pipefail
top=$(mkdir -p "$1" && cd "$1" && pwd)
rounds=${2:-1}
copies=${MARIADB_COPIES:-5}
here=$(cd "$(dirname "$0")" && pwd)
# Always the private servers, whatever the caller's environment points the tests at.
unset MYSQL_URI POSTGRES_URI MONGODB_URI
servers=(mariadb_ctl.sh galera_ctl.sh postgres_ctl.sh postgres_pair_ctl.sh mongo_standin_ctl.sh nginx_ctl.sh
  quirky_api_ctl.sh)
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

# Each server's question: one line that only that live server answers so.
ask() {
  local dir=$1
  for m in "$dir" "$dir"/mariadb-copy*; do
    [ -f "$m/mariadb.port" ] || continue
    mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$(cat "$m/mariadb.port")" -uroot -N -B \
      -e "SELECT @@datadir = '$m/mariadb-data/'" | grep -qx 1 || { echo "$m/mysql_uri: not that MariaDB"; return 1; }
  done
  local galera_port
  galera_port=$(sed -E 's|.*@127.0.0.1:([0-9]+),.*|\1|' "$dir/galera_uri")
  mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$galera_port" -uroot -N -B \
    -e "SHOW STATUS LIKE 'wsrep_cluster_size'" | grep -q '3$' || { echo "galera_uri: not a cluster of 3"; return 1; }
  for name in postgres postgres_primary postgres_standby; do
    "$pg_bin/psql" -X -q -t -A "$(cat "$dir/${name}_uri")" -c "SHOW data_directory" | grep -q "$(cat "$dir/${name}.home" 2>/dev/null || echo "$name")" \
      || { echo "${name}_uri: not this round's server"; return 1; }
  done
  /usr/bin/python3 - "$dir" <<'PY' || return 1
import socket, sys, urllib.request
d = sys.argv[1]
port = int(open(d + "/mongo_standin.port").read())
with socket.create_connection(("127.0.0.1", port), timeout=5):
    pass
for name, path in (("nginx.port", "/nginx_status"), ("quirky_api.port", "/")):
    port = int(open(d + "/" + name).read())
    try:
        urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5).read()
    except urllib.error.HTTPError:
        pass  # an answer of any status is the server answering
PY
}

for round in $(seq 1 "$rounds"); do
  dir="$top/round$round"
  rm -rf "$dir"
  mkdir -p "$dir"
  started=$(date +%s.%N)
  pids=()
  for s in "${servers[@]}"; do
    bash "$here/$s" start "$dir" > "$dir/${s%_ctl.sh}.log" 2>&1 &
    pids+=($!)
  done
  copy_pids=()
  for c in $(seq 1 "$copies"); do
    bash "$here/mariadb_ctl.sh" start "$dir/mariadb-copy$c" > "$dir/mariadb-copy$c.log" 2>&1 &
    copy_pids+=($!)
  done
  failed=()
  for i in "${!servers[@]}"; do
    wait "${pids[$i]}" || failed+=("${servers[$i]}")
  done
  for i in "${!copy_pids[@]}"; do
    wait "${copy_pids[$i]}" || failed+=("mariadb-copy$((i + 1))")
  done
  took=$(python3 -c "import time; print('%.1f' % (time.time() - $started))")
  if [ ${#failed[@]} -eq 0 ]; then
    answer=$(ask "$dir" 2>&1) || failed+=("asked: $answer")
  fi
  for s in "${servers[@]}"; do bash "$here/$s" stop "$dir" > /dev/null 2>&1 || true; done
  for c in $(seq 1 "$copies"); do bash "$here/mariadb_ctl.sh" stop "$dir/mariadb-copy$c" > /dev/null 2>&1 || true; done
  if [ ${#failed[@]} -ne 0 ]; then
    echo "round $round of $rounds: FAILED (${failed[*]}) after $took s" >&2
    for s in "${failed[@]}"; do
      log="$dir/${s%_ctl.sh}.log"
      [ -f "$log" ] || log="$dir/$s.log"
      [ -f "$log" ] && { echo "--- $log" >&2; tail -20 "$log" >&2; }
    done
    exit 1
  fi
  echo "round $round of $rounds: $(( ${#servers[@]} + copies )) server starts at once in $took s, each answering"
done
echo "start_all_at_once: $rounds of $rounds rounds passed"
