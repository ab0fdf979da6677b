#!/usr/bin/env bash
# Starts or stops a private nginx (Debian's nginx-light) for the tests, a ctest fixture: a reverse
# proxy on 127.0.0.1 in front of an upstream that the test itself starts (dibs's stub) on the
# port written to DIR/nginx_upstream.port; nginx's own port goes to DIR/nginx.port. Everything it
# writes (config, pid, logs, temp files) stays under DIR/nginx. It behaves like a strict
# production proxy: kept-alive connections closed after 1 s idle or 50 requests, answers sent
# chunked (sub_filter drops the upstream's Content-Length), at most 16 connections per client
# (limit_conn; the rest get 503), and GET /nginx_status counts its connections.
#   nginx_ctl.sh start DIR | stop DIR
set -euo pipefail
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)
prefix="$dir/nginx"
pidfile="$prefix/nginx.pid"

# A port below the kernel's range for outgoing connections, reserved against the other starts.
free_port() { /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/free_port.py"; }

stop_server() {
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(cat "$pidfile")
    kill -QUIT "$pid" 2>/dev/null || true  # graceful: the master stops its workers
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$pidfile"
  fi
}

case "$action" in
  start)
    stop_server
    rm -rf "$prefix"
    mkdir -p "$prefix/logs" "$prefix/tmp"
    port=$(free_port)
    upstream=$(free_port)
    # As root, the workers would switch to nobody, who can't write here: keep the caller's user.
    user_line=""
    if [ "$(id -u)" -eq 0 ]; then user_line="user $(id -un) $(id -gn);"; fi
    cat > "$prefix/nginx.conf" <<CONF
$user_line
worker_processes 1;
pid $pidfile;
error_log $prefix/logs/error.log warn;
events { worker_connections 512; }
http {
  access_log $prefix/logs/access.log;
  client_body_temp_path $prefix/tmp/body;
  proxy_temp_path $prefix/tmp/proxy;
  fastcgi_temp_path $prefix/tmp/fastcgi;
  uwsgi_temp_path $prefix/tmp/uwsgi;
  scgi_temp_path $prefix/tmp/scgi;
  keepalive_timeout 1s;
  keepalive_requests 50;
  limit_conn_zone \$binary_remote_addr zone=per_client:1m;
  upstream stub {
    server 127.0.0.1:$upstream;
    keepalive 16;
  }
  server {
    listen 127.0.0.1:$port;
    location = /nginx_status { stub_status; }
    location / {
      limit_conn per_client 16;
      limit_conn_status 503;
      proxy_pass http://stub;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      chunked_transfer_encoding on;
      # A no-op substitution, so nginx drops the upstream's Content-Length and sends chunks.
      sub_filter_types application/json;
      sub_filter '"status"' '"status"';
      sub_filter_once on;
    }
  }
}
CONF
    echo "$upstream" > "$dir/nginx_upstream.port"
    /usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -g 'daemon on;' 2> "$prefix/logs/start.log" \
      || { cat "$prefix/logs/start.log" >&2; exit 1; }
    for _ in $(seq 1 100); do [ -s "$pidfile" ] && break; sleep 0.1; done
    [ -s "$pidfile" ] || { echo "nginx did not start:" >&2; cat "$prefix/logs/error.log" >&2; exit 1; }
    echo "$port" > "$dir/nginx.port"
    echo "nginx on port $port in front of 127.0.0.1:$upstream (pid $(cat "$pidfile"))"
    ;;
  stop)
    stop_server
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
