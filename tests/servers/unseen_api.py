#!/usr/bin/python3
"""Two APIs of shapes dibs's adaptive limit was not tuned on (bench/adaptive.py's "unseen" group),
each imitating a server people really run. Python's standard library only; ip-api's answer shape,
{"status":"success","query":KEY,...}, as small_api.py.

  unseen_api.py DIR NAME --shape SHAPE [options]

listens on 127.0.0.1, its port written to DIR/NAME.port once it serves. SHAPE:
  token-bucket  A per-client token bucket in front of a threaded app (an API gateway's throttle:
                --rate tokens a second, at most --burst saved up), taken as a request arrives.
                A request that finds no token is answered at once HTTP 429 with `Retry-After: N`,
                N the wait for a token rounded UP to whole seconds (so nearly always 1), as
                Flask-Limiter and express-rate-limit write it; refusals take no token. Answers
                after --latency-ms (5). HTTP/1.1 keep-alive, a thread per connection.
  prefork       Apache httpd's prefork MPM (or mpm_worker) with MaxRequestWorkers --workers (8),
                KeepAlive On, KeepAliveTimeout --keepalive-s (1), MaxKeepAliveRequests
                --max-keepalive-requests (100), ListenBacklog --backlog (511): each worker takes
                ONE connection and keeps it until the client sends nothing for --keepalive-s or
                it has served its last request (that answer says `Connection: close`). Past
                --workers connections nothing more is accepted: the kernel completes the
                handshake and the connection waits in the listen queue, request and all, until a
                worker is free. Answers after --latency-ms (10): an app behind mod_php.
Options: --latency-ms N, --rate N, --burst B, --workers W, --keepalive-s S,
  --max-keepalive-requests N, --backlog N; --max-seconds S (1800): the server exits by itself
  after S seconds, or as soon as the process that started it is gone, so none is left running.
Routes: GET /json/KEY (the answer; a query string is no part of KEY), GET /stats ({"requests":N,
"refused":N,"connections":N,"peak_connections":N,"idle_closes":N,"recycled":N}).
"""
import argparse
import http.server
import json
import math
import threading
import time
import urllib.parse

from port_file import exit_with_parent, serve_announced

lock = threading.Lock()
stats = {"requests": 0, "refused": 0, "connections": 0, "peak_connections": 0, "idle_closes": 0, "recycled": 0}


class TokenBucket:
    """One client's bucket: `rate` tokens a second, at most `burst` held."""

    def __init__(self, rate, burst):
        self.rate, self.burst = rate, burst
        self.tokens, self.last = float(burst), time.monotonic()

    def take(self):
        """0 when a token was taken; else the seconds until one will be there."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


buckets = {}  # client address -> TokenBucket


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once, as the servers imitated do
    args = None

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        self.served = 0
        with lock:
            stats["connections"] += 1
            stats["peak_connections"] = max(stats["peak_connections"], stats["connections"])

    def finish(self):
        super().finish()
        with lock:
            stats["connections"] -= 1

    def log_error(self, fmt, *args):
        # http.server's one word on a connection that sent nothing for `timeout`: KeepAliveTimeout.
        if "timed out" in fmt:
            with lock:
                stats["idle_closes"] += 1

    def reply(self, status, obj, headers=()):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        a = self.args
        headers = []
        self.served += 1
        if a.shape == "prefork" and self.served >= a.max_keepalive_requests:
            headers.append(("Connection", "close"))  # MaxKeepAliveRequests: the worker takes the next
            self.close_connection = True
            with lock:
                stats["recycled"] += 1
        parts = urllib.parse.unquote(self.path).split("/", 2)
        if parts[1:2] == ["stats"]:
            with lock:
                self.reply(200, dict(stats), headers)
            return
        if parts[1:2] != ["json"] or len(parts) < 3:
            self.reply(404, {"error": "no such route"}, headers)
            return
        key = parts[2].split("?")[0]
        with lock:
            stats["requests"] += 1
            if a.shape == "token-bucket":
                bucket = buckets.setdefault(self.client_address[0], TokenBucket(a.rate, a.burst))
                wait = bucket.take()
                if wait > 0:
                    stats["refused"] += 1
        if a.shape == "token-bucket" and wait > 0:
            headers.append(("Retry-After", str(max(1, math.ceil(wait)))))
            self.reply(429, {"error": "rate limit exceeded"}, headers)
            return
        if a.latency_ms > 0:
            time.sleep(a.latency_ms / 1000)
        self.reply(200, {"status": "success", "query": key, "country": "Nowhere", "countryCode": "NW"}, headers)


class ThreadedServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


class PreforkServer(http.server.HTTPServer):
    """At most `workers` connections accepted at once, each served start to end by one worker."""
    workers = 8

    def server_activate(self):
        self.slots = threading.Semaphore(self.workers)
        super().server_activate()

    def get_request(self):
        self.slots.acquire()  # a free worker first: until then the connection waits in the queue
        try:
            return super().get_request()
        except BaseException:
            self.slots.release()
            raise

    def process_request(self, request, client_address):
        threading.Thread(target=self.work, args=(request, client_address), daemon=True).start()

    def work(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        except Exception:
            pass
        finally:
            self.shutdown_request(request)
            self.slots.release()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("name")
    p.add_argument("--shape", required=True, choices=["token-bucket", "prefork"])
    p.add_argument("--latency-ms", type=float)
    p.add_argument("--rate", type=float, default=400)
    p.add_argument("--burst", type=float, default=20)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--keepalive-s", type=float, default=1.0)
    p.add_argument("--max-keepalive-requests", type=int, default=100)
    p.add_argument("--backlog", type=int, default=511)
    p.add_argument("--max-seconds", type=float, default=1800)
    a = p.parse_args()
    if a.latency_ms is None:
        a.latency_ms = 5.0 if a.shape == "token-bucket" else 10.0
    exit_with_parent(a.max_seconds)
    Handler.args = a
    if a.shape == "prefork":
        Handler.timeout = a.keepalive_s  # no request (the first or the next) for this long: closed
        PreforkServer.workers = a.workers
        server_class = PreforkServer
    else:
        server_class = ThreadedServer
    server_class.request_queue_size = a.backlog
    serve_announced(server_class(("127.0.0.1", 0), Handler), a.dir, a.name)


if __name__ == "__main__":
    main()
