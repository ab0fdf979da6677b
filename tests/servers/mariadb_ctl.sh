#!/usr/bin/env bash
# Starts, stops or restarts a private MariaDB server for the tests (a ctest fixture), in DIR:
# its own data directory, temporary directory and socket (a MariaDB server removes the `#sql*`
# files it finds in its tmpdir when it starts: sharing /tmp, one server's start could delete
# another's bootstrap tables), loopback only, a free port, no authentication
# (--skip-grant-tables: a throwaway test server). The URI the tests use is written to DIR/mysql_uri. The server also
# speaks TLS, with a certificate made at start (openssl CLI) in DIR/tls: ca.pem signed
# server-cert.pem (for 127.0.0.1 and localhost); other-ca.pem signed nothing here.
# With MYSQL_URI set, that server is used instead and nothing is started.
#   mariadb_ctl.sh start DIR | stop DIR | restart DIR
# MARIADB_EXTRA_ARGS adds server options (the scale bench: --thread-handling=pool-of-threads).
set -euo pipefail
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
data="$dir/mariadb-data"
pidfile="$dir/mariadb.pid"
portfile="$dir/mariadb.port"
tls="$dir/tls"
tmp="$dir/mariadb-tmp"
sock="$dir/mariadb.sock"
export TMPDIR="$tmp"

# A port below the kernel's range for outgoing connections, reserved against the other starts.
free_port() { /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/free_port.py"; }

# Ready when our own socket answers: a TCP ping could reach another server that took the port.
wait_ready() {
  for _ in $(seq 1 300); do
    if mariadb-admin --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1; then
      return 0
    fi
    if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then break; fi
    sleep 0.1
  done
  return 1
}

# A fresh CA per run (nothing secret or expiring is committed), EC keys: quick to make.
make_certs() {
  rm -rf "$tls"
  mkdir -p "$tls"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -days 3 -subj "/CN=dibs test CA" -keyout "$tls/ca-key.pem" -out "$tls/ca.pem" 2>/dev/null
  openssl req -x509 "${ec[@]}" -days 3 -subj "/CN=another CA" -keyout "$tls/other-ca-key.pem" -out "$tls/other-ca.pem" 2>/dev/null
  openssl req "${ec[@]}" -subj "/CN=127.0.0.1" -keyout "$tls/server-key.pem" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' > "$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca-key.pem" -CAcreateserial -days 3 \
    -extfile "$tls/server.ext" -out "$tls/server-cert.pem" 2>/dev/null
}

start_server() {
  local port=$1
  mkdir -p "$tmp"
  /usr/sbin/mariadbd --no-defaults --user=root --datadir="$data" --socket="$sock" --tmpdir="$tmp" \
    --port="$port" --bind-address=127.0.0.1 --skip-grant-tables --skip-name-resolve \
    --pid-file="$dir/mariadbd.pid" --log-error="$dir/mariadb.err" --innodb-buffer-pool-size=128M \
    --innodb-flush-log-at-trx-commit=2 --max-connections=1000 --skip-log-bin \
    --ssl-ca="$tls/ca.pem" --ssl-cert="$tls/server-cert.pem" --ssl-key="$tls/server-key.pem" \
    ${MARIADB_EXTRA_ARGS:-} > /dev/null 2>&1 &
  # Our own pid file, not the server's --pid-file: mariadbd rewrites that one as it starts, and a
  # read of it caught empty said the server had died (killed at "Server socket created", under
  # load, in the start-at-once test).
  echo $! > "$pidfile"
  wait_ready
}

# A port picked free can be taken by another start before this server binds it (the fixtures
# start at once): a server that dies so is started again on another port, three times at most.
start_on_free_port() {
  for attempt in 1 2 3; do
    port=$(free_port)
    echo "$port" > "$portfile"
    : > "$dir/mariadb.err"
    if start_server "$port"; then return 0; fi
    stop_server
    grep -q "Address already in use\|Do you already have another" "$dir/mariadb.err" || break
    echo "MariaDB: port $port was taken meanwhile (attempt $attempt); another port" >&2
  done
  echo "MariaDB did not start; its log:" >&2
  tail -30 "$dir/mariadb.err" >&2 || true
  return 1
}

stop_server() {
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  fi
}

case "$action" in
  start)
    if [ -n "${MYSQL_URI:-}" ]; then
      echo "$MYSQL_URI" > "$dir/mysql_uri"
      exit 0
    fi
    stop_server
    rm -rf "$data" "$tmp"
    mkdir -p "$tmp"
    mariadb-install-db --no-defaults --user=root --datadir="$data" --tmpdir="$tmp" --skip-test-db \
      --auth-root-authentication-method=normal > "$dir/mariadb-install.log" 2>&1 \
      || { cat "$dir/mariadb-install.log" >&2; exit 1; }
    make_certs
    start_on_free_port
    mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$port" -uroot \
      -e "CREATE DATABASE IF NOT EXISTS dibs_test; CREATE DATABASE IF NOT EXISTS dibs_bench"
    echo "mysql://root@127.0.0.1:$port/dibs_test" > "$dir/mysql_uri"
    echo "MariaDB on port $port (pid $(cat "$pidfile"))"
    ;;
  restart)
    [ -n "${MYSQL_URI:-}" ] && { echo "restart: not with MYSQL_URI" >&2; exit 1; }
    stop_server
    start_server "$(cat "$portfile")" || { echo "MariaDB did not restart; its log:" >&2; tail -30 "$dir/mariadb.err" >&2; exit 1; }
    ;;
  stop)
    [ -n "${MYSQL_URI:-}" ] && exit 0
    stop_server
    ;;
  *)
    echo "usage: $0 start|stop|restart DIR" >&2
    exit 2
    ;;
esac
