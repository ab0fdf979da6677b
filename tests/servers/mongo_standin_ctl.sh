#!/usr/bin/env bash
# Starts or stops the MongoDB-wire stand-in for ctest (a fixture), unless MONGODB_URI names a
# real server. The URI the tests should use is written to $DIR/mongodb_uri.
#   mongo_standin_ctl.sh start DIR | stop DIR
set -euo pipefail
action=$1
dir=$2
mkdir -p "$dir"
here=$(cd "$(dirname "$0")" && pwd)

case "$action" in
  start)
    if [ -n "${MONGODB_URI:-}" ]; then
      echo "$MONGODB_URI" > "$dir/mongodb_uri"
      echo "using MONGODB_URI (a real server)"
      exit 0
    fi
    rm -f "$dir/mongo_standin.port"
    # Debian's python3 (the packages live there), whatever python3 is first on PATH.
    # The server's clock runs an hour ahead: every test then shows that leases use its clock.
    # (Ahead, not behind: the lock collection's TTL index must not expire fresh locks.)
    /usr/bin/python3 "$here/mongo_standin.py" --port-file "$dir/mongo_standin.port" --clock-skew-s "${DIBS_STANDIN_CLOCK_SKEW_S:-3600}" \
      > "$dir/mongo_standin.log" 2>&1 &
    echo $! > "$dir/mongo_standin.pid"
    for _ in $(seq 1 100); do
      if [ -s "$dir/mongo_standin.port" ]; then
        echo "mongodb://127.0.0.1:$(cat "$dir/mongo_standin.port")/?serverSelectionTimeoutMS=5000" > "$dir/mongodb_uri"
        echo "stand-in on port $(cat "$dir/mongo_standin.port") (pid $(cat "$dir/mongo_standin.pid"))"
        exit 0
      fi
      if ! kill -0 "$(cat "$dir/mongo_standin.pid")" 2>/dev/null; then break; fi
      sleep 0.1
    done
    echo "the MongoDB stand-in did not start:" >&2
    cat "$dir/mongo_standin.log" >&2
    exit 1
    ;;
  stop)
    if [ -f "$dir/mongo_standin.pid" ]; then
      pid=$(cat "$dir/mongo_standin.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/mongo_standin.pid"
    fi
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
