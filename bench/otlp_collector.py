#!/usr/bin/env python3
"""make bench, part "otlp": what a collector that is down costs a traced run.

Paired runs of `dibs demo` (memory store, the in-process stub at 0 ms), alternating in each round:
without --otlp-endpoint; traced (every item: OTEL_TRACES_SAMPLER_ARG 1) to a collector that
accepts connections and never answers; traced to one that answers every export 503. The
exporter must cost the run nothing measurable (target: docs/s >= 0.95 of the run without
--otlp-endpoint, median of the rounds), its memory stays bounded (peak RSS), and what it could not
deliver is counted (the run's last words on traces). Writes a Markdown table (with the commands
that reproduce it) and JSON.

  bench/otlp_collector.py --dibs build/bin/dibs [--docs 200000] [--rounds 3] [--md F] [--json F]
"""
import argparse
import http.server
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading


class silent_collector:
    """Accepts every connection, reads what comes, never answers."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.held = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            threading.Thread(target=self.drain, args=(conn,), daemon=True).start()

    @staticmethod
    def drain(conn):
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass


class _refuse(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = b"unavailable"
        self.send_response(503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class refusing_collector:
    def __init__(self):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _refuse)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def run(dibs, docs, endpoint):
    cmd = [dibs, "demo", "--docs", str(docs), "--no-progress", "--samples", "0", "--summary-json", "-"]
    env = dict(os.environ)
    if endpoint:
        cmd += ["--otlp-endpoint", endpoint]
        env["OTEL_TRACES_SAMPLER_ARG"] = "1"
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = p.communicate(timeout=1800)
    if p.returncode != 0:
        sys.stderr.write(err)
        raise SystemExit("dibs demo failed: %s" % " ".join(cmd))
    summary = json.loads(out.strip().splitlines()[-1])
    m = re.search(r"traces: (\d+) span\(s\) exported to \S+?,? (?:(\d+) dropped \((\d+) with the queue full, (\d+) not "
                  r"accepted by the collector or left at the end, (\d+) while it was down\))?", err)
    return cmd, summary, m.groups() if m else None


def rss_of(dibs, docs, endpoint):
    """Peak RSS (KiB) of one run, read by GNU time's %M."""
    cmd = ["/usr/bin/time", "-f", "%M", dibs, "demo", "--docs", str(docs), "--no-progress", "--samples", "0"]
    env = dict(os.environ)
    if endpoint:
        cmd += ["--otlp-endpoint", endpoint]
        env["OTEL_TRACES_SAMPLER_ARG"] = "1"
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    lines = [l for l in p.stderr.strip().splitlines() if l.strip().isdigit()]
    return int(lines[-1]) if lines else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dibs", required=True)
    ap.add_argument("--docs", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    silent, refusing = silent_collector(), refusing_collector()
    modes = [("no --otlp-endpoint", None), ("collector never answers", silent.url), ("collector answers 503", refusing.url)]
    rates = {name: [] for name, _ in modes}
    drops = {name: [] for name, _ in modes}
    commands = {}
    for r in range(a.rounds):
        order = modes if r % 2 == 0 else list(reversed(modes))
        for name, url in order:
            cmd, s, d = run(a.dibs, a.docs, url)
            rates[name].append(s["docs_per_s"])
            drops[name].append(d)
            commands[name] = " ".join(["dibs"] + cmd[1:]).replace(url or "@@", "http://127.0.0.1:PORT")
    rss = {name: rss_of(a.dibs, a.docs, url) for name, url in modes}
    base = statistics.median(rates[modes[0][0]])
    rows = []
    for name, _ in modes:
        med = statistics.median(rates[name])
        rows.append({"run": name, "docs_per_s": rates[name], "median": med, "ratio": med / base if base else 0,
                     "peak_rss_kib": rss[name], "traces": drops[name][-1], "command": commands[name]})
    worst = min(r["ratio"] for r in rows[1:])
    verdict = "met" if worst >= 0.95 else "MISSED"
    out = ["## A collector that is down: %d documents, %d rounds (paired, alternating)" % (a.docs, a.rounds),
           "",
           "`dibs demo` (memory store, in-process stub at 0 ms, default flags), every item traced "
           "(OTEL_TRACES_SAMPLER_ARG=1). Target: docs/s >= 0.95 of the run without --otlp-endpoint. "
           "Worst ratio: **%.3f** (%s)." % (worst, verdict),
           "",
           "| run | docs/s (each round) | median | ratio | peak RSS MiB | spans exported / dropped (queue full, not accepted, while down) |",
           "|---|---|---:|---:|---:|---|"]
    for r in rows:
        t = r["traces"]
        spans = "-" if not t else "%s / %s (%s, %s, %s)" % tuple(x or "0" for x in t)
        rss_mib = "%.0f" % (r["peak_rss_kib"] / 1024) if r["peak_rss_kib"] else "?"
        out.append("| %s | %s | %.0f | %.3f | %s | %s |" % (r["run"], ", ".join("%.0f" % x for x in r["docs_per_s"]),
                                                          r["median"], r["ratio"], rss_mib, spans))
    out += ["", "Commands (PORT: the bench's collector on loopback):", ""]
    out += ["    " + r["command"] for r in rows]
    text = "\n".join(out) + "\n"
    print(text)
    if a.md:
        open(a.md, "w").write(text)
    if a.json:
        json.dump({"docs": a.docs, "rounds": a.rounds, "rows": rows, "worst_ratio": worst}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
