#!/usr/bin/python3
"""A third pair of APIs of shapes dibs's adaptive limit was not tuned on (bench/adaptive.py's
"unseen" group, beside unseen_api.py's and unseen_api2.py's), each imitating a server people
really run. Python's standard library only; ip-api's answer shape, {"status":"success","query":
KEY,...}, as small_api.py.

  unseen_api3.py DIR NAME --shape SHAPE [options]

listens on 127.0.0.1, its port written to DIR/NAME.port once it serves. SHAPE:
  gc     A JVM service (Spring Boot on Tomcat: a thread per request, HikariCP's default pool of
         --pool (10) database connections, each request holding one for --latency-ms (20)) whose
         collector stops the world: after every --gc-every (250) answers the young generation is
         full and every thread stops for --gc-ms (150) (a G1/Parallel young pause with a large
         survivor set; Node's and CPython's collectors stall alike). In a pause nothing moves:
         requests in service resume where they were, answers wait, new requests are read after
         it. So latency is bimodal and its spikes follow the server's own allocations, not the
         load: a pause every 250 answers at 1 in flight as at 100. At most --pool / --latency-ms
         answers a second (500) less the pauses (about 385), reached from about --pool in
         flight; past that, requests wait for a pool connection. HTTP/1.1 keep-alive, a thread
         per connection (Tomcat's maxConnections 8192: never the bound).
  sync   gunicorn's default sync worker (how most Django and Flask APIs are served; uWSGI's
         process mode alike): --workers (5: gunicorn's advice, 2 x cores + 1, on 2 cores), each
         accept()ing ONE connection from the shared listen socket, answering its one request
         after --latency-ms (20) with `Connection: close` (a sync worker never keeps a
         connection) and closing it. The listen backlog is --backlog (100: uWSGI's default
         `listen`; gunicorn's 2048 under an older kernel's somaxconn of 128 alike): past workers
         + backlog connections waiting, the kernel itself drops the client's SYN, sent again
         after 1 s, 3 s, 7 s: a connect stalling for seconds, no error from the server. At most
         --workers / --latency-ms answers a second (250), a connection each.
Options: --latency-ms N, --pool N, --gc-every N, --gc-ms N, --workers W, --backlog N;
  --max-seconds S (1800): the server exits by itself after S seconds, or as soon as the process
  that started it is gone, so none is left running.
Routes: GET /json/KEY (the answer; a query string is no part of KEY), GET /stats ({"requests":N,
"in_flight":N,"peak_in_flight":N,"connections":N,"peak_connections":N,"accepted":N,
"gc_pauses":N,"paused_ms":N,"pool_waiting":N,"peak_pool_waiting":N,"busy_workers":N,
"listen_overflows":N (the kernel's ListenOverflows since start, machine-wide),"slowest_ms":N}).
"""
import argparse
import http.server
import json
import threading
import time
import urllib.parse

from port_file import exit_with_parent, serve_announced

lock = threading.Lock()
stats = {"requests": 0, "in_flight": 0, "peak_in_flight": 0, "connections": 0, "peak_connections": 0, "accepted": 0,
         "gc_pauses": 0, "paused_ms": 0, "pool_waiting": 0, "peak_pool_waiting": 0, "busy_workers": 0,
         "listen_overflows": 0, "slowest_ms": 0}


def listen_overflows():
    """The kernel's count of connections dropped as a listen queue was full (all sockets)."""
    try:
        lines = [l.split() for l in open("/proc/net/netstat") if l.startswith("TcpExt:")]
        return int(lines[1][lines[0].index("ListenOverflows")])
    except (OSError, ValueError, IndexError):
        return 0


overflows_at_start = listen_overflows()


class World:
    """The JVM's threads and its collector: `mutator()` is the time the threads have run (the
    wall clock less every pause), which is what a request's work consumes."""

    def __init__(self, every, pause_s):
        self.every, self.pause_s = every, pause_s
        self.answers = 0
        self.paused_total = 0.0  # every pause begun so far, the current one whole
        self.pause_end = 0.0

    def mutator(self):
        now = time.monotonic()
        with lock:
            return now - self.paused_total + max(0.0, self.pause_end - now)

    def safepoint(self):
        """Waits out a pause under way (a thread stopped at a safepoint)."""
        while True:
            with lock:
                left = self.pause_end - time.monotonic()
            if left <= 0:
                return
            time.sleep(left)

    def work(self, seconds):
        """`seconds` of the threads' time, however many pauses fall in it."""
        target = self.mutator() + seconds
        while True:
            left = target - self.mutator()
            if left <= 0:
                break
            time.sleep(left)
        self.safepoint()

    def answered(self):
        """An answer's allocations: the one that fills the young generation starts a pause."""
        with lock:
            self.answers += 1
            if self.answers % self.every == 0:
                self.pause_end = time.monotonic() + self.pause_s
                self.paused_total += self.pause_s
                stats["gc_pauses"] += 1
                stats["paused_ms"] += round(self.pause_s * 1000)


world = [None]
pool = [None]  # HikariCP: a semaphore of --pool connections


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    args = None

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        with lock:
            stats["connections"] += 1
            stats["accepted"] += 1
            stats["peak_connections"] = max(stats["peak_connections"], stats["connections"])

    def finish(self):
        super().finish()
        with lock:
            stats["connections"] -= 1

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.args.shape == "sync":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def version_string(self):
        return "gunicorn" if self.args.shape == "sync" else "Apache-Coyote/1.1"

    def do_GET(self):
        a = self.args
        if a.shape == "gc":
            world[0].safepoint()  # a request that came in a pause is read after it
        parts = urllib.parse.unquote(self.path).split("/", 2)
        if parts[1:2] == ["stats"]:
            with lock:
                stats["listen_overflows"] = listen_overflows() - overflows_at_start
                self.reply(200, dict(stats))
            return
        if parts[1:2] != ["json"] or len(parts) < 3:
            self.reply(404, {"error": "no such route"})
            return
        key = parts[2].split("?")[0]
        started = time.monotonic()
        with lock:
            stats["requests"] += 1
            stats["in_flight"] += 1
            stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            if a.shape == "gc":
                self.jvm()
            else:
                time.sleep(a.latency_ms / 1000)
            self.reply(200, {"status": "success", "query": key, "country": "Nowhere", "countryCode": "NW"})
        finally:
            with lock:
                stats["in_flight"] -= 1
                stats["slowest_ms"] = max(stats["slowest_ms"], round((time.monotonic() - started) * 1000))

    def jvm(self):
        with lock:
            stats["pool_waiting"] += 1
            stats["peak_pool_waiting"] = max(stats["peak_pool_waiting"], stats["pool_waiting"])
        pool[0].acquire()
        with lock:
            stats["pool_waiting"] -= 1
        try:
            world[0].work(self.args.latency_ms / 1000)  # the query and the view, a pool connection held
        finally:
            pool[0].release()
        world[0].answered()
        world[0].safepoint()  # the answer that filled the heap waits out its own pause


class ThreadedServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # Tomcat's acceptCount is 100, but its acceptor never lets it fill here


class SyncServer(http.server.HTTPServer):
    """gunicorn's sync workers: `workers` threads, each blocked in accept() on the one listen
    socket (as gunicorn's worker processes are), serving one connection, then the next."""
    workers = 5

    def serve_forever(self, poll_interval=0.5):
        threads = [threading.Thread(target=self.worker, daemon=True) for _ in range(self.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def worker(self):
        while True:
            try:
                request, client_address = self.get_request()
            except OSError:
                continue
            with lock:
                stats["busy_workers"] += 1
            try:
                self.finish_request(request, client_address)
            except Exception:
                pass
            finally:
                self.shutdown_request(request)
                with lock:
                    stats["busy_workers"] -= 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("name")
    p.add_argument("--shape", required=True, choices=["gc", "sync"])
    p.add_argument("--latency-ms", type=float, default=20.0)
    p.add_argument("--pool", type=int, default=10)
    p.add_argument("--gc-every", type=int, default=250)
    p.add_argument("--gc-ms", type=float, default=150.0)
    p.add_argument("--workers", type=int, default=5)
    p.add_argument("--backlog", type=int, default=100)
    p.add_argument("--max-seconds", type=float, default=1800)
    a = p.parse_args()
    exit_with_parent(a.max_seconds)
    Handler.args = a
    if a.shape == "gc":
        world[0] = World(a.gc_every, a.gc_ms / 1000)
        pool[0] = threading.Semaphore(a.pool)
        server = ThreadedServer(("127.0.0.1", 0), Handler)
    else:
        SyncServer.workers = a.workers
        SyncServer.request_queue_size = a.backlog
        server = SyncServer(("127.0.0.1", 0), Handler)
    serve_announced(server, a.dir, a.name)


if __name__ == "__main__":
    main()
