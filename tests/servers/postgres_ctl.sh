#!/usr/bin/env bash
# Starts, stops or restarts a private PostgreSQL server for the tests (a ctest fixture): its own
# data directory, loopback only, a free port, trust authentication (a throwaway test server),
# fsync off. The URI the tests use is written to DIR/postgres_uri.
# PostgreSQL refuses to run as root: run as root, this script runs initdb and the server as the
# `postgres` user (runuser), in a private home that user owns (pg_private_home: DIR/NAME-home, or
# a folder of its own under /tmp when DIR is out of that user's reach), its socket and temporary
# files there too (TMPDIR); that directory is recorded in DIR/postgres.home and removed at stop.
# With POSTGRES_URI set, that server is used instead and nothing is started.
# DIBS_PG_NAME (default postgres) names its files in DIR, so that a second server can run beside
# the first (postgres_pair_ctl.sh's primary); DIBS_PG_OPTIONS adds server options (-c name=value),
# after ours, so they win.
#   postgres_ctl.sh start DIR | stop DIR | restart DIR
set -euo pipefail
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
name=${DIBS_PG_NAME:-postgres}
homefile="$dir/$name.home"
portfile="$dir/$name.port"

# shellcheck source=postgres_common.sh
source "$(dirname "$0")/postgres_common.sh"

start_server() {
  local home=$1 port=$2
  export TMPDIR="$home"
  # -w: returns once the server accepts connections (or fails, with its log below).
  if ! as_pg "$pg_bin/pg_ctl" -D "$home/data" -l "$home/server.log" -w -t 120 \
      -o "-h 127.0.0.1 -p $port -k $home -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 ${DIBS_PG_OPTIONS:-}" \
      start > /dev/null; then
    echo "PostgreSQL did not start; its log:" >&2
    tail -30 "$home/server.log" >&2 || true
    return 1
  fi
}

stop_server() {
  [ -f "$homefile" ] || return 0
  local home
  home=$(cat "$homefile")
  [ -f "$home/data/postmaster.pid" ] || return 0
  # fast, then immediate; a server that ignores both is killed by its own pid (ours: we started
  # it), and each step that fails is said, so a stuck server never passes for a stopped one.
  if as_pg "$pg_bin/pg_ctl" -D "$home/data" -m fast -w -t 60 stop > /dev/null 2>&1; then return 0; fi
  echo "PostgreSQL did not stop in 60 s (fast); trying immediate" >&2
  if as_pg "$pg_bin/pg_ctl" -D "$home/data" -m immediate -w -t 30 stop > /dev/null 2>&1; then return 0; fi
  local pid
  pid=$(head -1 "$home/data/postmaster.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    echo "PostgreSQL (pid $pid) ignored pg_ctl stop; killing it" >&2
    kill -9 "$pid"
  fi
}

case "$action" in
  start)
    if [ -n "${POSTGRES_URI:-}" ]; then
      echo "$POSTGRES_URI" > "$dir/${name}_uri"
      exit 0
    fi
    stop_server
    if [ -f "$homefile" ]; then rm -rf "$(cat "$homefile")"; fi
    home=$(pg_private_home "$dir" "$name")
    echo "$home" > "$homefile"
    as_pg "$pg_bin/initdb" -D "$home/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
      > "$dir/$name-initdb.log" 2>&1 || { cat "$dir/$name-initdb.log" >&2; exit 1; }
    port=$(free_port)
    echo "$port" > "$portfile"
    start_server "$home" "$port"
    "$pg_bin/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE dibs_test" > /dev/null
    echo "postgresql://postgres@127.0.0.1:$port/dibs_test" > "$dir/${name}_uri"
    echo "PostgreSQL on port $port (data in $home)"
    ;;
  restart)
    [ -n "${POSTGRES_URI:-}" ] && { echo "restart: not with POSTGRES_URI" >&2; exit 1; }
    stop_server
    start_server "$(cat "$homefile")" "$(cat "$portfile")"
    ;;
  stop)
    [ -n "${POSTGRES_URI:-}" ] && exit 0
    stop_server
    if [ -f "$homefile" ]; then rm -rf "$(cat "$homefile")"; rm -f "$homefile"; fi
    ;;
  *)
    echo "usage: $0 start|stop|restart DIR" >&2
    exit 2
    ;;
esac
