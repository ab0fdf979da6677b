#!/usr/bin/python3
"""An API the way real ones behave on a bad day, written with Python's own http.server (HTTP/1.1,
a thread per connection), for dibs's tests. It listens on 127.0.0.1 and ::1, on free ports
written to DIR/quirky_api.port and DIR/quirky_api6.port, and closes a kept-alive connection idle
for IDLE seconds (0.5 by default), as servers do after their keep-alive timeout.

  GET /json/KEY         {"status":"success","query":KEY,...} with a Content-Length
  GET /pretty/KEY       the same object pretty-printed over several lines
  GET /http10/KEY       the same, as HTTP/1.0 with no Content-Length: the body ends when the
                        server closes the connection
  GET /retry-once/KEY   the first request for KEY: 503 with Retry-After: 2 (the connection kept
                        alive, and so closed by the server while the client waits); then 200
  GET /huge-retry/KEY   the first request for KEY: 503 with Retry-After: 999999999; then 200
  GET /host             {"host": the Host header received}
  GET /idle-closes      how many connections were closed for being idle, as {"closed": N}
  GET /peak-open/PREFIX the most connections open at once that served keys PREFIX-..., as
                        {"peak": N} (a connection counts from its first such request to its close)

Usage: quirky_api.py DIR [IDLE_SECONDS]
"""
import http.server
import json
import os
import socket
import sys
import threading
import urllib.parse

lock = threading.Lock()
seen = {}  # key -> requests so far
idle_closes = 0
open_by_prefix = {}  # key prefix (up to its last '-') -> connections open now that served one
peak_by_prefix = {}


def answer(key):
    # A string with a space, an escaped quote and an escaped newline: compacting must keep it.
    return {"status": "success", "query": key, "source": "quirky api", "note": "a \"b\"\nc"}


def compact(obj):
    return json.dumps(obj, separators=(",", ":"))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 0.5  # set from the command line: a kept-alive connection idle this long is closed

    def log_message(self, fmt, *args):
        pass

    def count_connection(self, key):
        """Counts this connection for its first key's prefix (a test run's own keys)."""
        if getattr(self, "prefix", None) is not None or "-" not in key:
            return
        self.prefix = key.rsplit("-", 1)[0]
        with lock:
            n = open_by_prefix.get(self.prefix, 0) + 1
            open_by_prefix[self.prefix] = n
            peak_by_prefix[self.prefix] = max(peak_by_prefix.get(self.prefix, 0), n)

    def finish(self):
        # Before the socket is closed: a client that sees the close sees the count lowered.
        super().finish()
        if getattr(self, "prefix", None) is not None:
            with lock:
                open_by_prefix[self.prefix] -= 1

    def log_error(self, fmt, *args):
        # http.server's only sign that a connection was closed for being idle (its timeout).
        global idle_closes
        if fmt.startswith("Request timed out"):
            with lock:
                idle_closes += 1

    def reply(self, status, body, headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        parts = urllib.parse.unquote(self.path).split("/")
        route = parts[1] if len(parts) > 1 else ""
        key = "/".join(parts[2:])
        with lock:
            seen[key] = seen.get(key, 0) + 1
            n = seen[key]
        if route != "peak-open":
            self.count_connection(key)
        if route == "json":
            self.reply(200, compact(answer(key)))
        elif route == "pretty":
            self.reply(200, json.dumps(answer(key), indent=2) + "\n")
        elif route == "http10":
            # HTTP/1.0: no Content-Length, no keep-alive; the body ends at the close.
            self.protocol_version = "HTTP/1.0"
            self.close_connection = True
            data = compact(answer(key)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(data)
        elif route == "retry-once":
            if n == 1:
                self.reply(503, '{"error":"busy"}', [("Retry-After", "2")])
            else:
                self.reply(200, compact(answer(key)))
        elif route == "huge-retry":
            if n == 1:
                self.reply(503, '{"error":"busy"}', [("Retry-After", "999999999")])
            else:
                self.reply(200, compact(answer(key)))
        elif route == "host":
            self.reply(200, json.dumps({"host": self.headers.get("Host", "")}))
        elif route == "peak-open":
            with lock:
                peak = peak_by_prefix.get(key, 0)
            self.reply(200, json.dumps({"peak": peak}))
        elif route == "idle-closes":
            with lock:
                closed = idle_closes
            self.reply(200, json.dumps({"closed": closed}))
        else:
            self.reply(404, '{"error":"no such route"}')


class Server4(http.server.ThreadingHTTPServer):
    daemon_threads = True


class Server6(Server4):
    address_family = socket.AF_INET6


def main():
    directory = sys.argv[1]
    if len(sys.argv) > 2:
        Handler.timeout = float(sys.argv[2])
    servers = [(Server4(("127.0.0.1", 0), Handler), "quirky_api.port"),
               (Server6(("::1", 0), Handler), "quirky_api6.port")]
    for server, name in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    for server, name in servers:  # written last: a port file means it is serving
        tmp = os.path.join(directory, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(tmp, os.path.join(directory, name))
    threading.Event().wait()


if __name__ == "__main__":
    main()
