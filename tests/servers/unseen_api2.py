#!/usr/bin/python3
"""Two more APIs of shapes dibs's adaptive limit was not tuned on (bench/adaptive.py's "unseen"
group, beside unseen_api.py's), each imitating a server people really run. Python's standard
library only (sqlite3 included); ip-api's answer shape, {"status":"success","query":KEY,...}, as
small_api.py.

  unseen_api2.py DIR NAME --shape SHAPE [options]

listens on 127.0.0.1, its port written to DIR/NAME.port once it serves. HTTP/1.1 keep-alive, a
thread per connection. SHAPE:
  cache    Varnish in front of a small origin (a Django or Rails app run by gunicorn with
           --origin-workers (4) sync workers: each takes one request at a time from the listen
           queue, in order). Which keys are in the cache is fixed by a hash of the key, a share
           --hit-share (0.9) of them: the cache at its steady state, warmed by everyone else's
           traffic (misses are not stored here, so every run meets the same hit ratio). A hit is
           answered after --hit-ms (1); a miss waits for a free origin worker (first come, first
           served: there is no limit on Varnish's backend connections, they wait in gunicorn's
           backlog) and is then answered after --miss-ms (80). A miss not answered within
           --first-byte-timeout-s (60, Varnish's first_byte_timeout; the wait for a worker counts)
           is answered as Varnish's builtin VCL does: HTTP 503 "Backend fetch failed" in HTML
           with `Retry-After: 5`. Answers carry Varnish's `X-Varnish`, `Age` and `Via` headers.
           So: answers in two modes (1 ms, and 80 ms or more), the slow mode contending for a
           pool of 4 (at most 4 / 80 ms = 50 misses a second, so 500 answers a second at 90%
           hits), the fast mode never; more in flight, longer misses, nothing refused.
  sqlite   A Django app on SQLite (the settings Django 5.1's docs advise: WAL, synchronous=NORMAL,
           "transaction_mode": "IMMEDIATE", ATOMIC_REQUESTS, Python's busy timeout of 5 s; Rails
           7.1+ on SQLite does the same), served by a threaded server (a thread per connection,
           each with its own database connection, kept). Each request is one transaction:
           BEGIN IMMEDIATE (SQLite's one write lock for the database), the API key's usage
           counter updated (`UPDATE api_keys SET calls = calls + 1, last_used = ?`), the view's
           work for --latency-ms (4) with the transaction open, COMMIT. This is SQLite itself
           (a database file DIR/NAME.sqlite3), not a model of it: a request that finds the lock
           taken sleeps in SQLite's busy handler (1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100
           ms, then 100 ms a try) while requests arriving later take the lock in between, so
           the write lock serves at most 1 / --latency-ms a second whatever the concurrency,
           the median answer stays near --latency-ms and the tail grows with every request in
           flight; one that waited --busy-timeout-s (5) gets "database is locked", which Django
           (DEBUG off) answers HTTP 500 with its HTML page `<h1>Server Error (500)</h1>`.
Options: --hit-share F, --hit-ms N, --miss-ms N, --origin-workers W, --first-byte-timeout-s S,
  --latency-ms N, --busy-timeout-s S; --max-seconds S (1800): the server exits by itself after S
  seconds, or as soon as the process that started it is gone, so none is left running.
Routes: GET /json/KEY (the answer; a query string is no part of KEY), GET /stats ({"requests":N,
"in_flight":N,"peak_in_flight":N,"connections":N,"peak_connections":N,"hits":N,"misses":N,
"origin_waiting":N,"peak_origin_waiting":N,"fetch_failed":N,"locked":N,"committed":N,
"slowest_ms":N}).
"""
import argparse
import collections
import hashlib
import http.server
import json
import os
import sqlite3
import threading
import time
import urllib.parse

from port_file import exit_with_parent, serve_announced

lock = threading.Lock()
stats = {"requests": 0, "in_flight": 0, "peak_in_flight": 0, "connections": 0, "peak_connections": 0,
         "hits": 0, "misses": 0, "origin_waiting": 0, "peak_origin_waiting": 0, "fetch_failed": 0,
         "locked": 0, "committed": 0, "slowest_ms": 0}
xid = [1000]  # Varnish's transaction ids


def share_of(key):
    """A stable number in [0, 1) for a key: the same keys hit the cache in every run."""
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 2**32


class Origin:
    """gunicorn's sync workers: `workers` requests served at once, the rest waiting in turn."""

    def __init__(self, workers):
        self.free = workers
        self.queue = collections.deque()  # one Event a waiting request, first come first served

    def enter(self, timeout):
        """True once the request holds a worker; False when `timeout` passed first (it is gone)."""
        with lock:
            if self.free > 0 and not self.queue:
                self.free -= 1
                return True
            turn = threading.Event()
            self.queue.append(turn)
            stats["origin_waiting"] += 1
            stats["peak_origin_waiting"] = max(stats["peak_origin_waiting"], stats["origin_waiting"])
        got = turn.wait(timeout)
        with lock:
            if not got and not turn.is_set():
                self.queue.remove(turn)
                stats["origin_waiting"] -= 1
                return False
        return True  # the worker was handed over by leave()

    def leave(self):
        with lock:
            if self.queue:
                stats["origin_waiting"] -= 1
                self.queue.popleft().set()  # the worker goes straight to the next in line
            else:
                self.free += 1


origin = [None]
SERVER_ERROR = "\n<!doctype html>\n<html lang=\"en\">\n<head>\n  <title>Server Error (500)</title>\n</head>\n<body>\n" \
               "  <h1>Server Error (500)</h1><p></p>\n</body>\n</html>\n"
GURU = """<!DOCTYPE html>
<html>
  <head>
    <title>503 Backend fetch failed</title>
  </head>
  <body>
    <h1>Error 503 Backend fetch failed</h1>
    <p>Backend fetch failed</p>
    <h3>Guru Meditation:</h3>
    <p>XID: %d</p>
    <hr>
    <p>Varnish cache server</p>
  </body>
</html>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    args = None
    db = threading.local()  # each thread's own connection to the database, kept (CONN_MAX_AGE=None)

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

    def reply(self, status, body, headers=(), content_type="application/json"):
        data = (json.dumps(body) if content_type == "application/json" else body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        parts = urllib.parse.unquote(self.path).split("/", 2)
        if parts[1:2] == ["stats"]:
            with lock:
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
            if self.args.shape == "cache":
                self.cache(key)
            else:
                self.sqlite(key)
        finally:
            with lock:
                stats["in_flight"] -= 1
                stats["slowest_ms"] = max(stats["slowest_ms"], round((time.monotonic() - started) * 1000))

    def answer(self, key):
        return {"status": "success", "query": key, "country": "Nowhere", "countryCode": "NW"}

    def cache(self, key):
        a = self.args
        with lock:
            xid[0] += 2
            me = xid[0]
        if share_of(key) < a.hit_share:
            with lock:
                stats["hits"] += 1
            time.sleep(a.hit_ms / 1000)
            age = int(share_of(key + "age") * 120)  # stored some time in the last 2 minutes (Varnish's default TTL)
            self.reply(200, self.answer(key), [("X-Varnish", "%d %d" % (me, me - 1 - 2 * age)), ("Age", str(age)),
                                               ("Via", "1.1 varnish (Varnish/7.4)")])
            return
        with lock:
            stats["misses"] += 1
        asked = time.monotonic()
        if not origin[0].enter(a.first_byte_timeout_s):
            with lock:
                stats["fetch_failed"] += 1
            self.reply(503, GURU % me, [("X-Varnish", str(me)), ("Age", "0"), ("Via", "1.1 varnish (Varnish/7.4)"),
                                        ("Retry-After", "5")], "text/html; charset=utf-8")
            return
        try:
            time.sleep(min(a.miss_ms / 1000, max(0.0, a.first_byte_timeout_s - (time.monotonic() - asked))))
        finally:
            origin[0].leave()
        if time.monotonic() - asked >= a.first_byte_timeout_s:
            with lock:
                stats["fetch_failed"] += 1
            self.reply(503, GURU % me, [("X-Varnish", str(me)), ("Age", "0"), ("Via", "1.1 varnish (Varnish/7.4)"),
                                        ("Retry-After", "5")], "text/html; charset=utf-8")
            return
        self.reply(200, self.answer(key), [("X-Varnish", str(me)), ("Age", "0"), ("Via", "1.1 varnish (Varnish/7.4)")])

    def database(self):
        con = getattr(self.db, "con", None)
        if con is None:
            # Django's SQLite backend: Python's sqlite3 with `timeout` (its busy timeout), the
            # init_command's PRAGMAs, autocommit off to Django's own BEGIN IMMEDIATE.
            con = sqlite3.connect(self.args.db, timeout=self.args.busy_timeout_s, isolation_level=None,
                                  check_same_thread=False)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            self.db.con = con
        return con

    def sqlite(self, key):
        con = self.database()
        try:
            con.execute("BEGIN IMMEDIATE")  # ATOMIC_REQUESTS: the view in one transaction
            try:
                con.execute("UPDATE api_keys SET calls = calls + 1, last_used = ? WHERE key = ?", (time.time(), "bench"))
                con.execute("SELECT country, country_code FROM places WHERE ip = ?", (key,)).fetchall()
                time.sleep(self.args.latency_ms / 1000)  # the rest of the view, the transaction open
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError:  # "database is locked": the busy timeout ran out
            with lock:
                stats["locked"] += 1
            self.reply(500, SERVER_ERROR, (), "text/html; charset=utf-8")
            return
        with lock:
            stats["committed"] += 1
        self.reply(200, self.answer(key))


class ThreadedServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # Varnish's listen_depth (gunicorn's backlog is 2048): never the bound here


def create_database(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE api_keys (key TEXT PRIMARY KEY, calls INTEGER NOT NULL, last_used REAL)")
    con.execute("CREATE TABLE places (ip TEXT PRIMARY KEY, country TEXT, country_code TEXT)")
    con.execute("INSERT INTO api_keys VALUES ('bench', 0, NULL)")
    con.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("name")
    p.add_argument("--shape", required=True, choices=["cache", "sqlite"])
    p.add_argument("--hit-share", type=float, default=0.9)
    p.add_argument("--hit-ms", type=float, default=1.0)
    p.add_argument("--miss-ms", type=float, default=80.0)
    p.add_argument("--origin-workers", type=int, default=4)
    p.add_argument("--first-byte-timeout-s", type=float, default=60.0)
    p.add_argument("--latency-ms", type=float, default=4.0)
    p.add_argument("--busy-timeout-s", type=float, default=5.0)
    p.add_argument("--max-seconds", type=float, default=1800)
    a = p.parse_args()
    exit_with_parent(a.max_seconds)
    Handler.args = a
    if a.shape == "cache":
        origin[0] = Origin(a.origin_workers)
    else:
        a.db = os.path.join(a.dir, a.name + ".sqlite3")
        create_database(a.db)
    serve_announced(ThreadedServer(("127.0.0.1", 0), Handler), a.dir, a.name)


if __name__ == "__main__":
    main()
