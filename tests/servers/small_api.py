#!/usr/bin/python3
"""A small JSON API written the way people write one: Python's standard http.server at its
defaults (ThreadingHTTPServer, a thread per connection, a listen backlog of 5, headers and body
sent in two writes without TCP_NODELAY). dibs's adaptive-concurrency tests and bench call it; it
answers ip-api's shape: {"status":"success","query":KEY,...}.

  small_api.py DIR NAME MODE [options]

listens on 127.0.0.1, a free port written to DIR/NAME.port once it serves. MODE:
  keepalive   HTTP/1.1, connections kept alive (the default of most frameworks)
  close       HTTP/1.0: every answer ends its connection (BaseHTTPRequestHandler's default)
Options:
  --slow-share F     this share of keys (by a hash of the key, so always the same keys) are
                     answered after --slow-ms (default 2000): a slow tail
  --latency-ms N     every answer waits N ms first (POST /latency/N changes it while it runs)
  --per-in-flight-ms N  ... and N ms more for each request in flight when it arrives (itself
                     included): a latency that grows with load, as a backend whose every request
                     contends for one lock or one disk
  --fail-share F     this share of keys (by the same hash) get HTTP 500: an API bug that only
                     some items meet (e.g. every IPv6 address)
  --backlog N        the listen backlog (socketserver's default is 5)
  --accept-delay-ms N  the accept loop sleeps N ms before each accept: a server too busy to
                     accept at once, whose backlog overflows under a burst of connects
  --rate N --burst B  past N requests a second (B more allowed in a burst), HTTP 503 (or
                     --rate-status, e.g. 429) without Retry-After (with --rate-retry-after-ms MS,
                     OpenAI's retry-after-ms: MS), counted in /stats as "refused":
                     nginx limit_req's rule (a leaky bucket, refused requests not counted in it)
  --not-found-share F  this share of keys (by a hash of the key) get HTTP 404 with the API's own
                     JSON, {"error": "no location known for this address"}: keys it has nothing for
  --not-found-keys K,K  these keys get that 404 too
  --html             every key is answered 200 with an HTML page, as a web server's default site
                     (a wrong host or port where the API should be)
  --hold KEY --hold-until N  KEY is answered only once N other answers went out after its
                     request came (at most 30 s): an item as slow as the rest of the run makes
                     it, whatever the machine's speed. /stats says "hold_met" when they did.
  --workers W        a pool of W workers, each held for a request's --latency-ms (a backend call:
                     gunicorn's sync workers, PHP-FPM); requests past W wait for one ...
  --queue Q          ... and past Q waiting are answered --shed-status (503) at once, without
                     Retry-After: an API that sheds load (counted in /stats as "shed")
  --workers-schedule S,F,...  from second S of the run (its first request) the pool is W x F:
                     "5,0.5,15,1" halves it at 5 s and gives it back at 15 s
  --cap N            more than N requests at once: answered --cap-status (429) at once (a
                     per-client cap on calls at once), counted in /stats as "capped"
  --tls CERT KEY     HTTPS (TLS 1.2/1.3, Python's ssl defaults), each connection's handshake in its
                     own thread, after --handshake-ms N (a server far away or busy with its keys);
                     /stats counts "handshakes" (and "peak_handshaking": the most at once)
  --cold-s S --cold-factor F  the first S seconds of the run every latency is F times longer
  --quota N --window S  N requests per fixed window of S seconds (1), the windows aligned to the
                     clock (a window ends at every multiple of S since the epoch, as GitHub-style
                     APIs count), each request counted as it arrives (before --latency-ms); past
                     N, HTTP 429 at once. Every answer says so: X-RateLimit-Limit, -Remaining and
                     -Reset, the reset as epoch seconds (--reset-style epoch), epoch milliseconds
                     (epoch-ms) or seconds from now rounded up (seconds). /stats: "quota_refused"
Routes: GET /json/KEY (the answer; a query string is no part of KEY), POST /json with a JSON body
{"ip": KEY, ...} (the same answer; any other body: 400), GET /stats ({"requests":N,"peak_in_flight":N,
"peak_connections":N,...}), GET /asked ({"keys":N,"again":{KEY:TIMES,...}}: how many keys were
asked, and each one asked more than once with how many times), POST /latency/N, POST /down/1 (every key answered 503 without
Retry-After, as an API whose backend is gone) and POST /down/0. --down-after N: the same outage begins by
itself at the request after the first N, however fast they came.
"""
import argparse
import hashlib
import http.server
import json
import os
import socketserver
import ssl
import threading
import time
import urllib.parse

lock = threading.Lock()
stats = {"requests": 0, "in_flight": 0, "peak_in_flight": 0, "connections": 0, "peak_connections": 0,
         "answered": 0, "hold_met": False, "refused": 0, "shed": 0, "capped": 0, "quota_refused": 0,
         "handshakes": 0, "handshaking": 0, "peak_handshaking": 0}
quota_window = {"index": None, "used": 0}
answered = threading.Condition(lock)
asked = {}  # key -> times asked (GET /asked)
settings = {"latency_ms": 0.0, "down": False}
bucket = {"excess": 0.0, "last": 0.0}


def take_quota(limit, window):
    """(allowed, remaining, the window's end as epoch seconds): the window counts arrivals."""
    with lock:
        now = time.time()
        index = int(now // window)
        if index != quota_window["index"]:
            quota_window["index"], quota_window["used"] = index, 0
        allowed = quota_window["used"] < limit
        if allowed:
            quota_window["used"] += 1
        else:
            stats["quota_refused"] += 1
        return allowed, limit - quota_window["used"], (index + 1) * window


def over_rate(rate, burst):
    """nginx limit_req: excess requests drain at `rate`; one that would make them more than `burst`
    is refused (and not counted)."""
    with lock:
        now = time.monotonic()
        excess = max(0.0, bucket["excess"] - (now - bucket["last"]) * rate) + 1 if bucket["last"] else 0.0
        if excess > burst:
            stats["refused"] += 1
            return True
        bucket["excess"] = excess
        bucket["last"] = now
        return False


class Pool:
    """--workers: W workers (scaled by --workers-schedule over the run), a queue of at most Q."""

    def __init__(self, workers, queue, schedule):
        self.base, self.queue, self.schedule = workers, queue, schedule
        self.busy = self.waiting = 0
        self.cond = threading.Condition(lock)
        self.started = None

    def size(self, now):
        f = 1.0
        for at, factor in self.schedule:
            if now - self.started >= at:
                f = factor
        return max(1, int(round(self.base * f)))

    def enter(self):
        """False when the request is shed (the queue is full); else it holds a worker."""
        with self.cond:
            now = time.monotonic()
            if self.started is None:
                self.started = now
            if self.busy >= self.size(now):
                if self.queue >= 0 and self.waiting >= self.queue:
                    stats["shed"] += 1
                    return False
                self.waiting += 1
                while self.busy >= self.size(time.monotonic()):
                    self.cond.wait(0.05)
                self.waiting -= 1
            self.busy += 1
            return True

    def leave(self):
        with self.cond:
            self.busy -= 1
            self.cond.notify()


pool = [None]
run_started = [None]


def share_of(key):
    """A stable number in [0, 1) for a key: the same keys are slow (or failing) in every run."""
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 2**32


class Handler(http.server.BaseHTTPRequestHandler):
    args = None

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        with lock:
            stats["connections"] += 1
            stats["peak_connections"] = max(stats["peak_connections"], stats["connections"])

    def finish(self):
        super().finish()
        with lock:
            stats["connections"] -= 1

    def reply(self, status, obj):
        # As http.server does by default: the headers in one write (end_headers), the body in a
        # second, Nagle on. A client that delays its ACK waits 40 ms for the body.
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in getattr(self, "extra_headers", ()):
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def reply_html(self, status, page):
        data = page.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        parts = self.path.split("?")[0].split("/")
        if parts[1:] == ["json"]:
            # The same answers as GET /json/KEY, the key in a JSON body: {"ip": KEY, ...}.
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"null")
            except ValueError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("ip"), str):
                self.reply(400, {"error": "expected a JSON object with an ip string"})
                return
            self.answer(body["ip"])
        elif len(parts) == 3 and parts[1] == "latency":
            settings["latency_ms"] = float(parts[2])
            self.reply(200, {"latency_ms": settings["latency_ms"]})
        elif len(parts) == 3 and parts[1] == "down":
            settings["down"] = parts[2] == "1"
            self.reply(200, {"down": settings["down"]})
        else:
            self.reply(404, {"error": "no such route"})

    def do_GET(self):
        parts = urllib.parse.unquote(self.path).split("/", 2)
        route = parts[1] if len(parts) > 1 else ""
        if route == "stats":
            with lock:
                self.reply(200, dict(stats))
            return
        if route == "asked":
            with lock:
                self.reply(200, {"keys": len(asked), "again": {k: n for k, n in asked.items() if n > 1}})
            return
        if route != "json" or len(parts) < 3:
            self.reply(404, {"error": "no such route"})
            return
        self.answer(parts[2].split("?")[0])  # a query (?key=...) is no part of the key

    def quota_said(self, remaining, reset_at):
        a = self.args
        if a.reset_style == "epoch-ms":
            reset = str(int(reset_at * 1000))
        elif a.reset_style == "seconds":
            reset = str(max(1, int(reset_at - time.time() + 0.999)))
        else:
            reset = str(int(reset_at))
        self.extra_headers = [("X-RateLimit-Limit", str(a.quota)), ("X-RateLimit-Remaining", str(max(remaining, 0))),
                              ("X-RateLimit-Reset", reset)]

    def answer(self, key):
        self.extra_headers = []
        if self.args.quota > 0:
            allowed, remaining, reset_at = take_quota(self.args.quota, self.args.window)
            self.quota_said(remaining, reset_at)
            if not allowed:
                with lock:
                    stats["requests"] += 1
                self.reply(429, {"error": "quota spent"})
                return
        with lock:
            asked[key] = asked.get(key, 0) + 1
            stats["requests"] += 1
            stats["in_flight"] += 1
            stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
            if self.args.down_after > 0 and stats["requests"] == self.args.down_after + 1:
                settings["down"] = True  # once, so POST /down/0 ends the outage for good
        worker = False
        try:
            a = self.args
            if a.cap > 0 and stats["in_flight"] > a.cap:
                with lock:
                    stats["capped"] += 1
                self.reply(a.cap_status, {"error": "too many requests at once"})
                return
            if pool[0] is not None:
                worker = pool[0].enter()
                if not worker:
                    self.reply(a.shed_status, {"error": "overloaded"})
                    return
            wait_ms = settings["latency_ms"]
            if a.per_in_flight_ms > 0:
                wait_ms += a.per_in_flight_ms * stats["in_flight"]
            with lock:
                if run_started[0] is None:
                    run_started[0] = time.monotonic()
                if a.cold_s > 0 and time.monotonic() - run_started[0] < a.cold_s:
                    wait_ms *= a.cold_factor
            if a.slow_share > 0 and share_of("slow:" + key) < a.slow_share:
                wait_ms = max(wait_ms, a.slow_ms)
            if wait_ms > 0:
                time.sleep(wait_ms / 1000)
            if a.hold is not None and key == a.hold:
                with answered:
                    goal = stats["answered"] + a.hold_until
                    met = answered.wait_for(lambda: stats["answered"] >= goal, timeout=30)
                    stats["hold_met"] = bool(met)
            if a.html:
                self.reply_html(200, "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head>"
                                     "<body><h1>Welcome to nginx!</h1></body></html>")
            elif key in a.not_found_keys or (a.not_found_share > 0 and share_of("nf:" + key) < a.not_found_share):
                self.reply(404, {"error": "no location known for this address"})
            elif settings["down"]:
                self.reply(503, {"error": "backend unavailable"})
            elif a.rate > 0 and over_rate(a.rate, a.burst):
                if a.rate_retry_after_ms:
                    self.extra_headers = [("retry-after-ms", str(a.rate_retry_after_ms))]
                self.reply(a.rate_status, {"error": "rate limit"})
            elif a.fail_share > 0 and share_of("fail:" + key) < a.fail_share:
                self.reply(500, {"error": "internal error"})
            else:
                self.reply(200, {"status": "success", "query": key, "country": "Nowhere", "countryCode": "NW"})
        finally:
            if worker:
                pool[0].leave()
            with answered:
                stats["in_flight"] -= 1
                stats["answered"] += 1
                answered.notify_all()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    accept_delay = 0.0
    tls = None  # an ssl.SSLContext: HTTPS, each connection's handshake in its own thread
    handshake_delay = 0.0

    def get_request(self):
        if self.accept_delay > 0:
            time.sleep(self.accept_delay)
        return super().get_request()

    def finish_request(self, request, client_address):
        if self.tls is not None:
            # In the connection's thread: a handshake that takes handshake_delay (a server far
            # away, or busy with its keys), the others' unaffected.
            with lock:
                stats["handshaking"] += 1
                stats["peak_handshaking"] = max(stats["peak_handshaking"], stats["handshaking"])
            if self.handshake_delay > 0:
                time.sleep(self.handshake_delay)
            with lock:
                stats["handshakes"] += 1
                stats["handshaking"] -= 1
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        super().finish_request(request, client_address)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("name")
    p.add_argument("mode", choices=["keepalive", "close"])
    p.add_argument("--slow-share", type=float, default=0)
    p.add_argument("--slow-ms", type=float, default=2000)
    p.add_argument("--latency-ms", type=float, default=0)
    p.add_argument("--per-in-flight-ms", type=float, default=0)
    p.add_argument("--fail-share", type=float, default=0)
    p.add_argument("--backlog", type=int, default=socketserver.TCPServer.request_queue_size)
    p.add_argument("--accept-delay-ms", type=float, default=0)
    p.add_argument("--rate", type=float, default=0)
    p.add_argument("--burst", type=float, default=0)
    p.add_argument("--rate-status", type=int, default=503)
    p.add_argument("--rate-retry-after-ms", type=int, default=0)
    p.add_argument("--not-found-share", type=float, default=0)
    p.add_argument("--not-found-keys", type=lambda v: set(v.split(",")), default=set())
    p.add_argument("--html", action="store_true")
    p.add_argument("--hold")
    p.add_argument("--hold-until", type=int, default=10)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--queue", type=int, default=-1)
    p.add_argument("--shed-status", type=int, default=503)
    p.add_argument("--workers-schedule", default="")
    p.add_argument("--cap", type=int, default=0)
    p.add_argument("--cap-status", type=int, default=429)
    p.add_argument("--cold-s", type=float, default=0)
    p.add_argument("--cold-factor", type=float, default=1)
    p.add_argument("--down-after", type=int, default=0)
    p.add_argument("--quota", type=int, default=0)
    p.add_argument("--window", type=float, default=1.0)
    p.add_argument("--reset-style", choices=["epoch", "epoch-ms", "seconds"], default="epoch")
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    p.add_argument("--handshake-ms", type=float, default=0)
    a = p.parse_args()
    if a.workers > 0:
        nums = [float(x) for x in a.workers_schedule.split(",") if x]
        pool[0] = Pool(a.workers, a.queue, list(zip(nums[0::2], nums[1::2])))
    settings["latency_ms"] = a.latency_ms
    Handler.args = a
    Handler.protocol_version = "HTTP/1.1" if a.mode == "keepalive" else "HTTP/1.0"
    Server.request_queue_size = a.backlog
    Server.accept_delay = a.accept_delay_ms / 1000
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        Server.tls = ctx
        Server.handshake_delay = a.handshake_ms / 1000
    server = Server(("127.0.0.1", 0), Handler)
    tmp = os.path.join(a.dir, a.name + ".port.tmp")
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, os.path.join(a.dir, a.name + ".port"))  # written last: a port file means it serves
    server.serve_forever()


if __name__ == "__main__":
    main()
