#!/usr/bin/env bash
# Starts or stops tests/servers/quirky_api.py (Python's http.server playing a difficult API) for
# the tests, a ctest fixture: its ports go to DIR/quirky_api.port (127.0.0.1) and
# DIR/quirky_api6.port (::1).
#   quirky_api_ctl.sh start DIR | stop DIR
set -euo pipefail
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
pidfile="$dir/quirky_api.pid"
here=$(cd "$(dirname "$0")" && pwd)

stop_server() {
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  fi
}

case "$action" in
  start)
    stop_server
    rm -f "$dir/quirky_api.port" "$dir/quirky_api6.port"
    /usr/bin/python3 "$here/quirky_api.py" "$dir" 0.5 > "$dir/quirky_api.log" 2>&1 &
    echo $! > "$pidfile"
    for _ in $(seq 1 300); do
      [ -f "$dir/quirky_api.port" ] && [ -f "$dir/quirky_api6.port" ] && break
      kill -0 "$(cat "$pidfile")" 2>/dev/null || break
      sleep 0.1
    done
    if [ ! -f "$dir/quirky_api6.port" ]; then
      echo "quirky_api.py did not start; its log:" >&2
      cat "$dir/quirky_api.log" >&2 || true
      exit 1
    fi
    echo "quirky API on ports $(cat "$dir/quirky_api.port") and [::1]:$(cat "$dir/quirky_api6.port") (pid $(cat "$pidfile"))"
    ;;
  stop)
    stop_server
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
