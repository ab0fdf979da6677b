#!/usr/bin/env bash
# A private three-node MariaDB Galera cluster for the tests (a ctest fixture), in DIR/galera:
# three mariadbd on loopback, each with its own data directory, temporary directory (a MariaDB
# server removes the `#sql*` files in its tmpdir at start: a shared /tmp lets one server's start
# delete another's bootstrap tables), socket, client port, group port
# (gmcast.listen_addr), IST port and SST port (rsync); root without a password from 127.0.0.1.
# Not --skip-grant-tables as mariadb_ctl.sh: there a trigger's definer is the empty user, which
# the other nodes refuse to create ("Invalid role specification"), so a trigger made on one node
# would be missing on the others. Node 1 starts the cluster (--wsrep-new-cluster), nodes 2 and 3
# join it by SST (which copies the grants); each start waits for wsrep_local_state_comment = Synced.
#   galera_ctl.sh start DIR          the cluster, fresh; writes DIR/galera_uri (every node, in the
#                                    multi-host form mysql://root@h1:p1,h2:p2,h3:p3/dibs_test) and
#                                    DIR/galera_node1_uri .. galera_node3_uri (one node each)
#   galera_ctl.sh stop DIR           every node
#   galera_ctl.sh kill DIR N         node N with SIGKILL (no shutdown: as a crashed host)
#   galera_ctl.sh rejoin DIR N       node N again on its ports, after a kill: its position
#                                    recovered from InnoDB (--wsrep-recover, as mysqld_safe does),
#                                    then it catches up by IST from the gcache of a live node
#   galera_ctl.sh status DIR N       node N's wsrep_local_state_comment (or "down")
# The group timeouts are short (a dead node is suspected after 2 s, evicted after 4 s) so that a
# kill shows the survivors' behaviour within a test's time; Galera's defaults are 5 s and 15 s.
# Run as root, the nodes run as the `mysql` user (--user=mysql, their folders its own): the rsync
# daemon a joiner starts for its SST would otherwise drop to `nobody` and be refused its datadir.
set -euo pipefail
action=$1
top=$(mkdir -p "$2" && cd "$2" && pwd)
dir="$top/galera"
mkdir -p "$dir"
nodes=(1 2 3)
run_as=$(id -un)
if [ "$(id -u)" -eq 0 ]; then run_as=mysql; fi
own() { if [ "$(id -u)" -eq 0 ]; then chown -R mysql: "$@"; fi; }

# A port below the kernel's range for outgoing connections, reserved against the other starts.
free_port() { /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/free_port.py"; }

# Node N's ports, chosen once at start and kept (a rejoin uses the same ones): client group ist sst.
ports() { cat "$dir/node$1.ports"; }
port_of() { ports "$1" | cut -d' ' -f"$2"; }

cluster_address() {
  local a=""
  for n in "${nodes[@]}"; do a+="${a:+,}127.0.0.1:$(port_of "$n" 2)"; done
  echo "gcomm://$a"
}

node_args() {
  local n=$1 d="$dir/node$1"
  echo --no-defaults --user="$run_as" --datadir="$d/data" --socket="$d/mariadb.sock" --tmpdir="$d/tmp" \
    --port="$(port_of "$n" 1)" --bind-address=127.0.0.1 --skip-name-resolve \
    --pid-file="$d/mariadbd.pid" --log-error="$d/mariadb.err" --innodb-buffer-pool-size=64M \
    --innodb-log-file-size=16M --innodb-flush-log-at-trx-commit=2 --max-connections=1000 \
    --binlog-format=ROW --innodb-autoinc-lock-mode=2 --default-storage-engine=InnoDB \
    --wsrep-on=ON --wsrep-provider=/usr/lib/galera/libgalera_smm.so \
    --wsrep-cluster-name=dibs_test --wsrep-node-name="node$n" --wsrep-node-address=127.0.0.1 \
    --wsrep-cluster-address="$(cluster_address)" --wsrep-sst-method=rsync \
    --wsrep-sst-receive-address="127.0.0.1:$(port_of "$n" 4)" \
    "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:$(port_of "$n" 2);ist.recv_addr=127.0.0.1:$(port_of "$n" 3);gcache.size=256M;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;evs.keepalive_period=PT0.5S;evs.inactive_check_period=PT0.5S;evs.install_timeout=PT4S"
}

client() { mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$(port_of "$1" 1)" -uroot "${@:2}"; }

# Asked through the node's own socket: a TCP port could be another server's by now.
state_of() {
  mariadb --no-defaults --socket="$dir/node$1/mariadb.sock" -uroot -N -B \
    -e "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | cut -f2 || true
}

wait_synced() {
  local n=$1 d="$dir/node$1"
  for _ in $(seq 1 1200); do
    [ "$(state_of "$n")" = Synced ] && return 0
    if [ -f "$d/mariadb.pid" ] && ! kill -0 "$(cat "$d/mariadb.pid")" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "Galera node $n did not reach Synced; its log:" >&2
  tail -40 "$d/mariadb.err" >&2 || true
  return 1
}

# Starts node N in the background (setsid: a kill of the test's process group leaves it be).
launch() {
  local n=$1 d="$dir/node$1"
  shift
  mkdir -p "$d/tmp"
  own "$d/tmp"
  # shellcheck disable=SC2046
  TMPDIR="$d/tmp" setsid /usr/sbin/mariadbd $(node_args "$n") "$@" > /dev/null 2>&1 < /dev/null &
  echo $! > "$d/mariadb.pid"
}

stop_node() {
  local d="$dir/node$1"
  if [ -f "$d/mariadb.pid" ]; then
    local pid
    pid=$(cat "$d/mariadb.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$d/mariadb.pid"
  fi
}

kill_node() {
  local d="$dir/node$1"
  [ -f "$d/mariadb.pid" ] || { echo "node $1 is not running" >&2; return 1; }
  local pid
  pid=$(cat "$d/mariadb.pid")
  kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  rm -f "$d/mariadb.pid"
}

# After a SIGKILL grastate.dat says seqno -1: the position is recovered from InnoDB's own log
# (mariadbd --wsrep-recover prints "WSREP: Recovered position: UUID:SEQNO"), and given to the
# start, so that the node asks the cluster for the write-sets after it (IST) and not for a copy.
rejoin_node() {
  local n=$1 d="$dir/node$1"
  local recover_log="$d/recover.err"
  # shellcheck disable=SC2046
  TMPDIR="$d/tmp" /usr/sbin/mariadbd $(node_args "$n") --log-error="$recover_log" --wsrep-recover > /dev/null 2>&1 < /dev/null || true
  local position
  position=$(sed -n 's/.*WSREP: Recovered position: *\([^ ]*\).*/\1/p' "$recover_log" | tail -1)
  if [ -n "$position" ]; then launch "$n" --wsrep-start-position="$position"; else launch "$n"; fi
  wait_synced "$n"
}

uri_of() { echo "mysql://root@127.0.0.1:$(port_of "$1" 1)/dibs_test"; }

case "$action" in
  start)
    for n in "${nodes[@]}"; do [ -f "$dir/node$n.ports" ] && stop_node "$n"; done
    rm -rf "$dir"
    mkdir -p "$dir"
    for n in "${nodes[@]}"; do
      mkdir -p "$dir/node$n/tmp"
      echo "$(free_port) $(free_port) $(free_port) $(free_port)" > "$dir/node$n.ports"
    done
    own "$dir"
    TMPDIR="$dir/node1/tmp" mariadb-install-db --no-defaults --user="$run_as" --datadir="$dir/node1/data" \
      --tmpdir="$dir/node1/tmp" --skip-test-db --auth-root-authentication-method=normal > "$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; exit 1; }
    launch 1 --wsrep-new-cluster
    wait_synced 1
    mariadb --no-defaults --socket="$dir/node1/mariadb.sock" -uroot \
      -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION"
    for n in 2 3; do
      mkdir -p "$dir/node$n/data"
      own "$dir/node$n"
      launch "$n"
      wait_synced "$n"
    done
    client 1 -e "CREATE DATABASE IF NOT EXISTS dibs_test"
    hosts=""
    for n in "${nodes[@]}"; do
      hosts+="${hosts:+,}127.0.0.1:$(port_of "$n" 1)"
      uri_of "$n" > "$top/galera_node${n}_uri"
    done
    echo "mysql://root@$hosts/dibs_test" > "$top/galera_uri"
    echo "Galera cluster of 3 on ports $hosts (size $(client 1 -N -B -e "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2))"
    ;;
  stop)
    for n in "${nodes[@]}"; do [ -f "$dir/node$n.ports" ] && stop_node "$n"; done
    ;;
  kill)
    kill_node "$3"
    ;;
  rejoin)
    rejoin_node "$3"
    ;;
  status)
    if [ -f "$dir/node$3/mariadb.pid" ]; then s=$(state_of "$3"); echo "${s:-down}"; else echo down; fi
    ;;
  *)
    echo "usage: $0 start|stop DIR | kill|rejoin|status DIR N" >&2
    exit 2
    ;;
esac
