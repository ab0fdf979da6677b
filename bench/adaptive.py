#!/usr/bin/env python3
"""make bench, part "adaptive": dibs with default flags against a family of APIs no one here tuned
it on, beside the best fixed concurrency of a sweep against the same API in the same run; the
table's headline is the WORST ratio, not the median.

The family (servers no one here wrote, or written the way people write them; tests/servers/):
  keepalive / close      Python's http.server at its defaults, keep-alive / HTTP/1.0 (a connection
                         per answer); fastest at one or two in flight
  slow tail              keepalive, 3% of the keys answered after 2 s; "2% x 6 s" the same, longer
  python, 20 ms backend  keepalive, every answer after 20 ms (a thread per connection: it scales)
  node http              Node's http module at its defaults
  nginx, slow upstream   nginx (1 worker, 64 connections) before small_api.py answering in 20 ms
  nginx limit_req        nginx answering 503 (no Retry-After) past 300 requests/s
  16 workers x 20 ms     a pool of 16 answering in 20 ms, 503 past 16 waiting (sheds load)
  429 past 32 at once    a per-client cap on calls at once, 50 ms answers
  429 past 4 at once     the same cap at 4, 2 ms answers
  close, 2 ms            HTTP/1.0 (a connection per answer), 2 ms answers, 3,000 items
  https, 50 ms handshake  HTTPS (a certificate of the run's own, --ca-file) whose handshake takes
                         50 ms, a listen backlog of 128, keep-alive, 2 ms answers, 3,000 items
  https, close, 50 ms    the same HTTPS, but `Connection: close` (a handshake for every call)
  load-dependent         keep-alive, a backlog of 128, every answer after 5 ms + 2 ms for each
                         request in flight when it came: more in flight, slower answers
  capacity halves        a pool of 32 x 20 ms that halves at 5 s and comes back at 15 s
  cold start             a pool of 32 x 20 ms, five times slower for its first 5 s
  stub, stub 20/100/500 ms   dibs's own stub: default flags against a fixed 1,000
The unseen group (tests/servers/unseen_api.py, unseen_api2.py, unseen_api3.py), run only when asked (--group
unseen or all, or --only NAME), reported apart (bench/results/adaptive-unseen.md and .json) and
never in the family's worst ratio: shapes written after the family's numbers were in, that nothing
was tuned on:
  token bucket 400/s ...  a per-client token bucket (400/s, burst 20) answering 429 with
                         `Retry-After: 1` (whole seconds, as Flask-Limiter and express-rate-limit
                         write it), 5 ms answers, 1,000 items
  prefork 8 workers ...  Apache prefork: 8 workers, each holding its keep-alive connection until it
                         is idle 1 s (or after 100 requests), connections past 8 waiting in the
                         listen queue; 10 ms answers, 1,000 items
  varnish 90% hits ...   Varnish before a gunicorn origin of 4 sync workers: 90% of the keys (by a
                         hash) hits answered in 1 ms, the rest misses answered in 80 ms once one
                         of the 4 is free (in turn; 503 past Varnish's first_byte_timeout, 60 s):
                         two modes of latency, only the slow one contending; 2,000 items
  django on sqlite ...   Django on SQLite (WAL, BEGIN IMMEDIATE, ATOMIC_REQUESTS, Python's 5 s busy
                         timeout), SQLite itself: each request a write transaction held 4 ms; one
                         write lock, its waiters sleeping in SQLite's busy handler while later
                         requests barge in: flat throughput, a tail growing with calls in flight,
                         HTTP 500 "database is locked" past 5 s; 1,000 items
  jvm gc pauses ...      (unseen_api3.py) A JVM service: a thread per request, HikariCP's pool of
                         10 connections held 20 ms a request, and a stop-the-world pause of 150 ms
                         after every 250 answers (the young generation full): bimodal latency
                         whose spikes follow the server's allocations, not the load; about 385
                         answers a second from about 10 in flight; 2,000 items
  gunicorn sync ...      (unseen_api3.py) gunicorn's sync workers: 5, each accepting one
                         connection, answering in 20 ms with `Connection: close`; a listen backlog
                         of 100 (uWSGI's default), past which the kernel drops the SYN (sent again
                         after 1 s, 3 s): at most 250 answers a second; 1,500 items
Each run: `dibs enrich` in file mode over a fresh copy of the seeded items, default flags (only
--store/--out/--url) or `--fixed-concurrency --concurrency C`; docs/s from the wall time, calls
and refusals (429/503) from its --summary-json. A run is bounded (--timeout): one that does not
end in time is stopped and counted as what it finished. Writes bench/results/adaptive.md and
adaptive.json (the family's rows; a run of unseen APIs alone leaves them as they are). The same
family, simulated in virtual time, is what the unit tests hold the limit to
(tests/sim/api_family.cpp).
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL_API = os.path.join(HERE, "..", "tests", "servers", "small_api.py")
NODE_API = os.path.join(HERE, "..", "tests", "servers", "node_api.js")
UNSEEN_API = os.path.join(HERE, "..", "tests", "servers", "unseen_api.py")
UNSEEN_API2 = os.path.join(HERE, "..", "tests", "servers", "unseen_api2.py")
UNSEEN_API3 = os.path.join(HERE, "..", "tests", "servers", "unseen_api3.py")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port_file(path, proc, what):
    for _ in range(300):
        if os.path.exists(path):
            return int(open(path).read())
        if proc.poll() is not None:
            raise SystemExit("%s did not start" % what)
        time.sleep(0.05)
    raise SystemExit("%s did not start in time" % what)


class Servers:
    def __init__(self, work):
        self.work = work
        self.procs = []

    def small_api(self, name, mode, *extra):
        p = subprocess.Popen(["/usr/bin/python3", SMALL_API, self.work, name, mode] + list(extra),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return wait_port_file(os.path.join(self.work, name + ".port"), p, "small_api.py " + name)

    def unseen_api(self, name, shape, *extra, script=UNSEEN_API):
        # --max-seconds: it exits by itself should this script die without stopping it.
        p = subprocess.Popen(["/usr/bin/python3", script, self.work, name, "--shape", shape,
                              "--max-seconds", "7200"] + list(extra),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return wait_port_file(os.path.join(self.work, name + ".port"), p, os.path.basename(script) + " " + name)

    def node_api(self, name, *extra):
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        p = subprocess.Popen(["/usr/bin/node", NODE_API, d] + list(extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return wait_port_file(os.path.join(d, "node_api.port"), p, "node_api.js " + name)

    def stub(self, dibs, latency_ms=0):
        log = os.path.join(self.work, "stub-%d.log" % latency_ms)
        out = open(log, "w")
        p = subprocess.Popen([dibs, "stub", "--port", "0", "--latency-ms", str(latency_ms)], stdout=out,
                             stderr=subprocess.STDOUT)
        self.procs.append(p)
        for _ in range(100):
            text = open(log).read()
            if "listening" in text:
                return int(text.split("http://127.0.0.1:")[1].split()[0].strip("/").split("/")[0])
            time.sleep(0.05)
        raise SystemExit("dibs stub did not start")

    def nginx(self, name, upstream_port, extra_http, extra_location, workers=1, connections=64):
        prefix = os.path.join(self.work, "nginx-" + name)
        os.makedirs(os.path.join(prefix, "logs"), exist_ok=True)
        os.makedirs(os.path.join(prefix, "tmp"), exist_ok=True)
        port = free_port()
        user = ""
        if os.getuid() == 0:
            import grp
            import pwd
            user = "user %s %s;" % (pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name)
        conf = """%s
worker_processes %d;
pid %s/nginx.pid;
error_log %s/logs/error.log warn;
events { worker_connections %d; }
http {
  access_log off;
  client_body_temp_path %s/tmp/body;
  proxy_temp_path %s/tmp/proxy;
  fastcgi_temp_path %s/tmp/fastcgi;
  uwsgi_temp_path %s/tmp/uwsgi;
  scgi_temp_path %s/tmp/scgi;
  %s
  server {
    listen 127.0.0.1:%d;
    location / {
      proxy_pass http://127.0.0.1:%d;
      %s
    }
  }
}
""" % (user, workers, prefix, prefix, connections, prefix, prefix, prefix, prefix, prefix, extra_http, port,
       upstream_port, extra_location)
        with open(os.path.join(prefix, "nginx.conf"), "w") as f:
            f.write(conf)
        p = subprocess.Popen(["/usr/sbin/nginx", "-p", prefix, "-c", os.path.join(prefix, "nginx.conf"),
                              "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return port
            except OSError:
                time.sleep(0.05)
        raise SystemExit("nginx %s did not start" % name)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def enrich(dibs, seeded, work, port, extra, timeout):
    """One run over a fresh copy of the seeded items: (docs/s, completed, failed, seconds, limit range).
    A port given as ("https", port, ca_file) is an HTTPS API whose certificate ca_file signed."""
    scheme, ca = "http", None
    if isinstance(port, tuple):
        scheme, port, ca = port
        extra = ["--ca-file", ca] + list(extra)
    run_dir = tempfile.mkdtemp(dir=work)
    items = os.path.join(run_dir, "in.jsonl")
    shutil.copy(seeded, items)
    cmd = [dibs, "enrich", "--store", "jsonl:" + items, "--out", os.path.join(run_dir, "out.jsonl"),
           "--url", "%s://127.0.0.1:%d/json/{originatingIp}" % (scheme, port), "--no-progress", "--summary-json", "-"] + extra
    started = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(os.path.join(run_dir, "stderr.log"), "w"), text=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)  # a graceful stop still writes the summary
        out, _ = p.communicate(timeout=60)
        timed_out = True
    elapsed = time.monotonic() - started
    summary = {}
    for line in out.strip().splitlines()[::-1]:
        if line.startswith("{"):
            summary = json.loads(line)
            break
    done = summary.get("completed", 0)
    fig = {"docs_per_s": done / elapsed if elapsed > 0 else 0, "completed": done, "failed": summary.get("failed", 0),
           "seconds": round(elapsed, 2), "timed_out": timed_out, "command": " ".join(["dibs"] + cmd[1:]),
           "calls": summary.get("api_calls", 0), "refused": summary.get("api_refused", 0)}
    limits = summary.get("api_limits") or []
    if limits:
        fig["limit_range"] = "%d-%d" % (limits[0]["lowest"], limits[0]["highest"])
        fig["limit_end"] = limits[0]["limit"]
    shutil.rmtree(run_dir, ignore_errors=True)
    return fig


def self_signed_cert(work):
    """A certificate of its own for the HTTPS APIs (nothing secret committed; 3 days): the folder
    holding cert.pem and key.pem."""
    tls = os.path.join(work, "tls")
    os.makedirs(tls)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "3", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", os.path.join(tls, "key.pem"), "-out", os.path.join(tls, "cert.pem")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return tls


def median_of(n, run, runs=None):
    """The run of median docs/s among n (those given count), with every run's docs/s beside it."""
    runs = list(runs or [])
    while len(runs) < n:
        runs.append(run())
    runs.sort(key=lambda f: f["docs_per_s"])
    mid = dict(runs[len(runs) // 2])
    mid["runs_docs_per_s"] = [round(f["docs_per_s"]) for f in runs]
    return mid


def python_loop(port, n):
    """A sequential urllib loop, the kind of script dibs replaces: requests/s."""
    started = time.monotonic()
    for i in range(n):
        urllib.request.urlopen("http://127.0.0.1:%d/json/10.0.%d.%d" % (port, i // 250, i % 250)).read()
    return n / (time.monotonic() - started)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dibs", required=True)
    ap.add_argument("--items", type=int, default=2000, help="items against the slower APIs (and the short run)")
    ap.add_argument("--keepalive-items", type=int, default=20000)
    ap.add_argument("--close-items", type=int, default=10000)
    ap.add_argument("--stub-items", type=int, default=100000)
    ap.add_argument("--sweep", default="1,2,4,8,16,32,64,128,256,1000")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--repeats", type=int, default=3, help="runs of the default and of the best fixed setting (median kept)")
    ap.add_argument("--only", action="append", default=[],
                    help="an API to run (its name as in the table, e.g. 'nginx, slow upstream', of either group); "
                         "repeat for more")
    ap.add_argument("--group", choices=["family", "unseen", "all"], default="family",
                    help="which APIs to run without --only: the family (the default), the unseen group, or both")
    ap.add_argument("--md", default="bench/results/adaptive.md")
    ap.add_argument("--json", default="bench/results/adaptive.json")
    ap.add_argument("--unseen-md", default="bench/results/adaptive-unseen.md")
    ap.add_argument("--unseen-json", default="bench/results/adaptive-unseen.json")
    a = ap.parse_args()
    # A stopped bench still stops its servers (the finally below): SIGTERM exits as an exception.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sweep = [int(x) for x in a.sweep.split(",")]
    work = tempfile.mkdtemp(prefix="dibs-adaptive-")
    servers = Servers(work)
    results = []
    try:
        seeded = os.path.join(work, "items.jsonl")
        subprocess.run([a.dibs, "seed", "--store", "jsonl:" + seeded, "--docs", str(a.items)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        def seed(name, n):
            path = os.path.join(work, name + ".jsonl")
            subprocess.run([a.dibs, "seed", "--store", "jsonl:" + path, "--docs", str(n)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return path
        stub_seeded = seed("stub-items", a.stub_items)
        keepalive_seeded = seed("keepalive-items", a.keepalive_items)
        close_seeded = seed("close-items", a.close_items)
        mid_seeded = seed("mid-items", 10000)
        small_seeded = seed("small-items", 5000)
        short_seeded = seed("short-items", 3000)
        tls = self_signed_cert(work)
        https = lambda port: ("https", port, os.path.join(tls, "cert.pem"))
        long_seeded = seed("long-items", 30000)
        stub_40k = seed("stub-40k", 40000)
        unseen_seeded = seed("unseen-items", 1000)
        gunicorn_seeded = seed("gunicorn-items", 1500)
        up_to = lambda low: [c for c in sweep if c >= low]
        # The settings of this list that --sweep has (all of them when it has none).
        within = lambda *cs: [c for c in cs if c in sweep] or list(cs)
        # (name, start the API, items, the fixed sweep, sheds load: its refusals are counted)
        apis = [
            ("keepalive", lambda: servers.small_api("keepalive", "keepalive"), keepalive_seeded, sweep, False),
            ("close", lambda: servers.small_api("close", "close"), close_seeded, sweep, False),
            ("slow tail", lambda: servers.small_api("slowtail", "keepalive", "--slow-share", "0.03"), seeded, sweep, False),
            ("slow tail 2% x 6 s", lambda: servers.small_api("slowtail6", "keepalive", "--slow-share", "0.02", "--slow-ms",
                                                              "6000"), mid_seeded, up_to(32), False),
            ("python, 20 ms backend", lambda: servers.small_api("backend20", "keepalive", "--latency-ms", "20"),
             mid_seeded, up_to(4), False),
            ("node http", lambda: servers.node_api("node"), keepalive_seeded, sweep, False),
            ("nginx, slow upstream", lambda: servers.nginx(
                "slow", servers.small_api("upstream-slow", "keepalive", "--latency-ms", "20"), "", ""), seeded, sweep, False),
            ("nginx limit_req", lambda: servers.nginx(
                "limit", servers.small_api("upstream-limit", "keepalive"),
                "limit_req_zone $binary_remote_addr zone=api:1m rate=300r/s;",
                "limit_req zone=api burst=20 nodelay; limit_req_status 503;", connections=1024), seeded, sweep, True),
            ("16 workers x 20 ms, 503 past 16 waiting", lambda: servers.small_api(
                "shed", "keepalive", "--workers", "16", "--latency-ms", "20", "--queue", "16"), small_seeded, up_to(8), True),
            ("429 past 32 at once, 50 ms", lambda: servers.small_api(
                "cap", "keepalive", "--cap", "32", "--latency-ms", "50"), small_seeded, up_to(16), True),
            ("429 past 4 at once, 2 ms", lambda: servers.small_api(
                "cap4", "keepalive", "--cap", "4", "--latency-ms", "2"), short_seeded, [1, 2, 4, 8, 16], True),
            ("close, 2 ms", lambda: servers.small_api("close2", "close", "--latency-ms", "2"), short_seeded,
             [1, 2, 4, 8, 16, 32, 64], False),
            ("https, 50 ms handshake, 2 ms", lambda: https(servers.small_api(
                "tls", "keepalive", "--latency-ms", "2", "--backlog", "128", "--tls", os.path.join(tls, "cert.pem"),
                os.path.join(tls, "key.pem"), "--handshake-ms", "50")), short_seeded, [4, 8, 16, 32, 64, 128, 256], False),
            ("https, Connection: close, 50 ms handshake, 2 ms", lambda: https(servers.small_api(
                "tlsclose", "close", "--latency-ms", "2", "--backlog", "128", "--tls", os.path.join(tls, "cert.pem"),
                os.path.join(tls, "key.pem"), "--handshake-ms", "50")), short_seeded, [16, 32, 64, 128, 256, 512], False),
            ("load-dependent: 5 ms + 2 ms a request in flight", lambda: servers.small_api(
                "loaddep", "keepalive", "--latency-ms", "5", "--per-in-flight-ms", "2", "--backlog", "128"), short_seeded,
             [4, 8, 16, 32, 64, 128, 256], False),
            ("capacity halves at 5 s, back at 15 s", lambda: servers.small_api(
                "halves", "keepalive", "--workers", "32", "--latency-ms", "20", "--queue", "32", "--workers-schedule",
                "5,0.5,15,1"), long_seeded, up_to(16), True),
            ("cold start: 5x slower for 5 s", lambda: servers.small_api(
                "cold", "keepalive", "--workers", "32", "--latency-ms", "20", "--queue", "32", "--cold-s", "5",
                "--cold-factor", "5"), mid_seeded, up_to(16), True),
            ("stub", lambda: servers.stub(a.dibs), stub_seeded, [1000], False),
            ("stub 20 ms", lambda: servers.stub(a.dibs, 20), stub_seeded, [1000], False),
            ("stub 100 ms", lambda: servers.stub(a.dibs, 100), stub_40k, [1000], False),
            ("stub 500 ms", lambda: servers.stub(a.dibs, 500), stub_40k, [1000], False),
        ]
        # Shapes no one tuned on, reported apart (see the docstring): the same runs, their own table.
        unseen = [
            ("token bucket 400/s, 429 Retry-After: 1, 5 ms", lambda: servers.unseen_api(
                "bucket", "token-bucket", "--rate", "400", "--burst", "20", "--latency-ms", "5"), unseen_seeded,
             within(1, 2, 4, 8), True),
            ("prefork 8 workers, keep-alive 1 s, 10 ms", lambda: servers.unseen_api(
                "prefork", "prefork", "--workers", "8", "--keepalive-s", "1", "--max-keepalive-requests", "100",
                "--latency-ms", "10"), unseen_seeded, within(1, 2, 4, 8, 16, 32), False),
            # Throughput is bounded by the origin (4 / 80 ms = 50 misses a second: about 500 answers a
            # second), reached from about 8-16 in flight; past that, only the misses' wait grows.
            ("varnish 90% hits 1 ms, misses 80 ms on 4 origin workers", lambda: servers.unseen_api(
                "varnish", "cache", "--hit-share", "0.9", "--hit-ms", "1", "--miss-ms", "80", "--origin-workers", "4",
                script=UNSEEN_API2), seeded, within(2, 4, 8, 16, 32, 64, 128), False),
            # One write lock held 4 ms a request: at most 250 answers a second at any concurrency (about
            # 180 measured, 1-64 in flight); the tail grows with calls in flight, 500s past 5 s of waiting.
            ("django on sqlite, write lock 4 ms, busy timeout 5 s", lambda: servers.unseen_api(
                "sqlite", "sqlite", "--latency-ms", "4", "--busy-timeout-s", "5", script=UNSEEN_API2), unseen_seeded,
             within(1, 2, 4, 8, 16, 32, 64), False),
            # Stop-the-world pauses (150 ms every 250 answers) over a pool of 10 x 20 ms: about 385 answers a
            # second from about 10 in flight, whatever the concurrency past that; no refusals.
            ("jvm gc pauses 150 ms every 250 answers, pool of 10 x 20 ms", lambda: servers.unseen_api(
                "gcpause", "gc", "--pool", "10", "--latency-ms", "20", "--gc-every", "250", "--gc-ms", "150",
                script=UNSEEN_API3), seeded, within(1, 2, 4, 8, 16, 32, 64, 128, 256), False),
            # 5 sync workers x 20 ms, a connection an answer: at most 250 a second; past 105 connections
            # waiting the kernel drops the SYN (a 1 s stall), which the top of the sweep meets.
            ("gunicorn sync 5 workers, Connection: close, backlog 100, 20 ms", lambda: servers.unseen_api(
                "gunicorn", "sync", "--workers", "5", "--latency-ms", "20", "--backlog", "100", script=UNSEEN_API3),
             gunicorn_seeded, within(1, 2, 4, 8, 16, 32, 64, 128, 256), False),
        ]
        only = set(x.strip() for x in a.only)
        known = [api[0] for api in apis + unseen]
        if only - set(known):
            raise SystemExit("--only: no API named %s; the names: %s" % (
                ", ".join(repr(x) for x in sorted(only - set(known))), "; ".join(repr(x) for x in known)))
        runs = [api + ("family",) for api in apis if a.group in ("family", "all")]
        runs += [api + ("unseen",) for api in unseen if a.group in ("unseen", "all")]
        if only:
            runs = [api + ("family",) for api in apis if api[0] in only]
            runs += [api + ("unseen",) for api in unseen if api[0] in only]
        for name, start, items, fixed, sheds, group in runs:
            port = start()
            pinned = lambda c: ["--fixed-concurrency", "--concurrency", str(c)]
            row = {"api": name, "group": group, "fixed": {}, "sheds": sheds, "stub": name.startswith("stub")}
            for c in fixed:
                row["fixed"][c] = enrich(a.dibs, items, work, port, pinned(c), a.timeout)
            if name == "close":
                row["python_loop_per_s"] = python_loop(port, 500)
            if name == "nginx limit_req":
                # The ceiling against a rate limit: the rate known and set by hand (a hair under
                # nginx's 300 r/s), which the default's pace has to find by itself.
                row["known_rate"] = median_of(a.repeats, lambda: enrich(a.dibs, items, work, port, ["--rate", "295/s"], a.timeout))
            best = max(row["fixed"], key=lambda c: row["fixed"][c]["docs_per_s"])
            # The default and the sweep's best setting, run in turns (default, best, default, ...)
            # so both meet the same moments of a noisy machine, and the median of each kept. The
            # sweep's own run of the best is not among them: the best of ten single runs is the
            # luckiest of them. (Before, the default ran first and the best after the sweep, a
            # minute apart, and the best's median kept its lucky sweep run.)
            defaults, bests = [], []
            for _ in range(a.repeats):
                defaults.append(enrich(a.dibs, items, work, port, [], a.timeout))
                bests.append(enrich(a.dibs, items, work, port, pinned(best), a.timeout))
            row["default"] = median_of(a.repeats, None, defaults)
            row["sweep_best_run"] = row["fixed"][best]
            row["fixed"][best] = median_of(a.repeats, None, bests)
            row["best_fixed"] = best
            if items != seeded and group == "family":
                # The short run a small job makes (2,000 items), default against the best setting.
                short_defaults, short_bests = [], []
                for _ in range(a.repeats):
                    short_defaults.append(enrich(a.dibs, seeded, work, port, [], a.timeout))
                    short_bests.append(enrich(a.dibs, seeded, work, port, pinned(best), a.timeout))
                row["short"] = {"items": a.items, "default": median_of(a.repeats, None, short_defaults),
                                "fixed": median_of(a.repeats, None, short_bests)}
            row["ratio"] = row["default"]["docs_per_s"] / max(1e-9, row["fixed"][best]["docs_per_s"])
            d = row["default"]
            row["refused_share"] = d["refused"] / d["calls"] if d["calls"] else 0
            results.append(row)
            print("%-22s default %8.0f docs/s, best fixed %8.0f at %4d: %.2f" % (
                name, row["default"]["docs_per_s"], row["fixed"][best]["docs_per_s"], best, row["ratio"]),
                file=sys.stderr, flush=True)
    finally:
        servers.stop()
        shutil.rmtree(work, ignore_errors=True)

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], stdout=subprocess.PIPE, text=True).stdout.strip()

    def report(results, heading, command, notes, worst_words):
        """The markdown of one group's rows."""
        worst = min(results, key=lambda r: r["ratio"]) if results else None
        lines = [heading,
                 "",
                 "`%s` at commit %s%s, %s, %d cores, loopback." % (
                     command, commit, "+changes" if dirty else "", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     os.cpu_count()),
                 "File mode; each run a fresh copy of the items; docs/s = completed / wall time; runs bounded at %.0f s "
                 "(a run stopped there counts what it finished). Items per API so a default run lasts seconds." % a.timeout,
                 "After the sweep, the default and the sweep's best setting run %d times each, in turns (default, best, "
                 "default, ...): the median of each is shown (every run in the .json); the other C= columns are the sweep's "
                 "single runs." % a.repeats,
                 "Goal: default / best fixed >= 0.85 on every API, >= 0.9 of a fixed 1,000 on the stub at every latency; "
                 "refused calls (429/503) <= 5% of the default's calls where the API sheds load; no item failed.",
                 ] + notes + [
                 "",
                 "**%s: %.2f (%s).**" % (worst_words, worst["ratio"], worst["api"]) if worst else "",
                 "",
                 "| API | default docs/s | limit moved in | refused | best fixed (C) | default / best | goal | "
                 + " | ".join("C=%d" % c for c in sweep) + " |",
                 "|---|---:|---:|---:|---:|---:|---|" + "---:|" * len(sweep)]
        for r in results:
            goal = 0.9 if r["stub"] else 0.85
            d = r["default"]
            met = r["ratio"] >= goal and d["failed"] == 0 and (not r["sheds"] or r["refused_share"] <= 0.05)
            cells = []
            for c in sweep:
                f = r["fixed"].get(c)
                cells.append("%.0f%s" % (f["docs_per_s"], " (t/o)" if f["timed_out"] else "") if f else "")
            lines.append("| %s | %.0f%s | %s | %.1f%% | %.0f (%d) | %.2f | %s | %s |" % (
                r["api"], d["docs_per_s"], " (t/o)" if d["timed_out"] else "", d.get("limit_range", "-"),
                100 * r["refused_share"], r["fixed"][r["best_fixed"]]["docs_per_s"], r["best_fixed"], r["ratio"],
                "met" if met else "MISSED", " | ".join(cells)))
        for r in results:
            if "python_loop_per_s" in r:
                lines += ["", "A sequential Python urllib loop against the `close` API: %.0f requests/s." % r["python_loop_per_s"]]
        for r in results:
            if "short" in r:
                sh = r["short"]
                lines += ["", "A short run against %s (%d items, %.2f s at the best setting): default %.0f docs/s, "
                          "fixed %d %.0f: %.2f (the process's start and the limit's first steps weigh there)." % (
                              r["api"], sh["items"], sh["fixed"]["seconds"], sh["default"]["docs_per_s"], r["best_fixed"],
                              sh["fixed"]["docs_per_s"], sh["default"]["docs_per_s"] / max(1e-9, sh["fixed"]["docs_per_s"]))]
        for r in results:
            if "known_rate" in r:
                k = r["known_rate"]
                lines += ["", "Against nginx `limit_req` with its rate known and set by hand (`--rate 295/s`): %.0f docs/s "
                          "(the default's pace, found by itself: %.2f of that)." % (
                              k["docs_per_s"], r["default"]["docs_per_s"] / max(1e-9, k["docs_per_s"]))]
        lines += ["", "Failed items per run (default): " + ", ".join("%s %d" % (r["api"], r["default"]["failed"]) for r in results)]
        return "\n".join(lines) + "\n"

    # The command as it was run (its flags move the figures: --timeout, --repeats, --only).
    command_run = " ".join(["python3 bench/adaptive.py"] + [shlex.quote(x) for x in sys.argv[1:]])
    family = [r for r in results if r["group"] == "family"]
    unseen = [r for r in results if r["group"] == "unseen"]
    texts = []
    if family or not unseen:
        texts.append((report(family, "## Adaptive concurrency: default flags against the best fixed concurrency, per API",
                             command_run, [], "Worst ratio"), a.md, a.json, family))
    if unseen:
        texts.append((report(
            unseen, "## Adaptive concurrency, unseen APIs: default flags against the best fixed concurrency, per API",
            command_run,
            ["Shapes written after the family's figures were in, that nothing in dibs was tuned on "
             "(tests/servers/unseen_api.py, unseen_api2.py and unseen_api3.py; the shapes in bench/adaptive.py's docstring). "
             "Apart from the family: "
             "these rows are in none of its figures, its worst ratio included (bench/results/adaptive.md); "
             "the goal column applies the family's goal to them for reference."],
            "Worst ratio among the unseen APIs"), a.unseen_md, a.unseen_json, unseen))
    for text, md, js, rows in texts:
        print(text)
        with open(md, "w") as f:
            f.write(text)
        with open(js, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
