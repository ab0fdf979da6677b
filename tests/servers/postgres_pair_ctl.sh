#!/usr/bin/env bash
# A PostgreSQL primary and its streaming standby on loopback, for the failover tests (a ctest
# fixture, and driven by the tests themselves): the primary is postgres_ctl.sh's server under the
# name postgres_primary; the standby is a pg_basebackup -R copy of it on a port of its own, run as
# the `postgres` user like the primary. DIR/postgres_pair_uri is libpq's multi-host URI of both,
# with target_session_attrs=read-write (what a user of such a pair writes); DIR/postgres_primary_uri
# and DIR/postgres_standby_uri name each server alone.
#   start DIR [async|sync]  a fresh pair (any earlier one stopped first); sync: the primary's
#                           commits wait for the standby (synchronous_standby_names = '*')
#   stop DIR                both stopped, their folders removed
#   kill-primary DIR        SIGKILL to the primary's postmaster and every process it started (a
#                           machine that died), nothing flushed, nothing told to the clients
#   promote DIR             the standby becomes the primary (pg_ctl promote; returns once it
#                           takes writes)
#   stop-standby DIR | start-standby DIR   the standby away (it receives nothing meanwhile), back
# POSTGRES_URI is ignored: a pair is always private.
set -euo pipefail
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
standby_home_file="$dir/postgres_standby.home"
standby_port_file="$dir/postgres_standby.port"
mode_file="$dir/postgres_pair.mode"

# shellcheck source=postgres_common.sh
source "$(dirname "$0")/postgres_common.sh"

primary() {
  POSTGRES_URI='' DIBS_PG_NAME=postgres_primary "$here/postgres_ctl.sh" "$1" "$dir"
}

psql_at() {
  "$pg_bin/psql" -X -q -t -A -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2"
}

# Polls `sql` at `port` until it prints `want` (60 s at most).
wait_for() {
  local port=$1 sql=$2 want=$3 what=$4
  for _ in $(seq 600); do
    [ "$(psql_at "$port" "$sql" 2>/dev/null || true)" = "$want" ] && return 0
    sleep 0.1
  done
  echo "$what: not after 60 s" >&2
  return 1
}

start_standby() {
  local home port
  home=$(cat "$standby_home_file")
  port=$(cat "$standby_port_file")
  export TMPDIR="$home"
  if ! as_pg "$pg_bin/pg_ctl" -D "$home/data" -l "$home/server.log" -w -t 120 \
      -o "-h 127.0.0.1 -p $port -k $home -c fsync=off -c full_page_writes=off -c max_connections=300" \
      start > /dev/null; then
    echo "the standby did not start; its log:" >&2
    tail -30 "$home/server.log" >&2 || true
    return 1
  fi
}

stop_standby() {
  [ -f "$standby_home_file" ] || return 0
  local home pid
  home=$(cat "$standby_home_file")
  [ -f "$home/data/postmaster.pid" ] || return 0
  as_pg "$pg_bin/pg_ctl" -D "$home/data" -m fast -w -t 60 stop > /dev/null 2>&1 && return 0
  as_pg "$pg_bin/pg_ctl" -D "$home/data" -m immediate -w -t 30 stop > /dev/null 2>&1 && return 0
  pid=$(head -1 "$home/data/postmaster.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
}

stop_pair() {
  stop_standby
  if [ -f "$standby_home_file" ]; then rm -rf "$(cat "$standby_home_file")"; rm -f "$standby_home_file"; fi
  primary stop 2> /dev/null || true
}

case "$action" in
  start)
    stop_pair
    echo "${3:-async}" > "$mode_file"
    primary start > /dev/null
    p1=$(cat "$dir/postgres_primary.port")
    home=$(pg_private_home "$dir" postgres_standby)
    echo "$home" > "$standby_home_file"
    p2=$(free_port)
    echo "$p2" > "$standby_port_file"
    # -R: standby.signal and primary_conninfo written for us; -X stream: the WAL of the copy too.
    as_pg "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$p1" -U postgres -D "$home/data" -R -X stream --checkpoint=fast \
      > "$dir/postgres_standby-basebackup.log" 2>&1 || { cat "$dir/postgres_standby-basebackup.log" >&2; exit 1; }
    start_standby
    if [ "$(cat "$mode_file")" = sync ]; then
      # Only now that the standby streams (before, every commit would wait for it): commits wait
      # for it (synchronous_commit on for the role: postgres_ctl.sh turns it off on the command line).
      psql_at "$p1" "ALTER ROLE postgres SET synchronous_commit = on" > /dev/null
      psql_at "$p1" "ALTER SYSTEM SET synchronous_standby_names = '*'" > /dev/null
      psql_at "$p1" "SELECT pg_reload_conf()" > /dev/null
      wait_for "$p1" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'" 1 "a synchronous standby"
    else
      wait_for "$p1" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'" 1 "a streaming standby"
    fi
    echo "postgresql://postgres@127.0.0.1:$p2/dibs_test" > "$dir/postgres_standby_uri"
    echo "postgresql://postgres@127.0.0.1:$p1,127.0.0.1:$p2/dibs_test?target_session_attrs=read-write" > "$dir/postgres_pair_uri"
    echo "PostgreSQL primary on port $p1, $(cat "$mode_file") standby on port $p2"
    ;;
  stop)
    stop_pair
    rm -f "$dir/postgres_pair_uri" "$dir/postgres_standby_uri" "$mode_file"
    ;;
  kill-primary)
    home=$(cat "$dir/postgres_primary.home")
    pid=$(head -1 "$home/data/postmaster.pid")
    # The postmaster's children by their parent's pid (never by name: other servers run here).
    children=$(ps -o pid= --ppid "$pid" | tr -d ' ' | tr '\n' ' ')
    # shellcheck disable=SC2086
    kill -9 "$pid" $children
    for _ in $(seq 300); do
      alive=0
      for p in $pid $children; do kill -0 "$p" 2>/dev/null && alive=1; done
      [ $alive = 0 ] && exit 0
      sleep 0.02
    done
    echo "the primary's processes outlived SIGKILL" >&2
    exit 1
    ;;
  promote)
    as_pg "$pg_bin/pg_ctl" -D "$(cat "$standby_home_file")/data" -w -t 60 promote > /dev/null
    wait_for "$(cat "$standby_port_file")" "SELECT pg_is_in_recovery()" f "the promoted standby taking writes"
    ;;
  stop-standby) stop_standby ;;
  start-standby) start_standby ;;
  *)
    echo "usage: $0 start DIR [async|sync] | stop DIR | kill-primary DIR | promote DIR | stop-standby DIR | start-standby DIR" >&2
    exit 2
    ;;
esac
