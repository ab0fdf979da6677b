#!/usr/bin/env python3
"""Default flags of two or more dibs binaries, and fixed settings, by turns against some of
bench/adaptive.py's APIs: a change to the adaptive limit measured against the binary before it in
one sitting, where the whole family (bench/adaptive.py, about 50 minutes) would measure each binary
an hour apart on a machine whose speed drifts. Each round runs every binary's default, then each
fixed setting (with the first binary), over a fresh copy of the items; the median docs/s of the
rounds is printed with every run beside it, and the whole runs go to --json.

  python3 bench/adaptive_turns.py --dibs before=/tmp/dibs-before --dibs with=build/bin/dibs \\
      --apis loaddep,keepalive --fixed loaddep=32,256 --fixed keepalive=8 --runs 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import adaptive as A  # noqa: E402  (its servers and its enrich run, as the family runs them)


def apis(servers, tls):
    """name -> (start the API, items): bench/adaptive.py's shapes of the same names, their servers
    started with the same arguments (a copy: adaptive.py builds its table inside main(), beside
    each shape's sweep and items; moving it out is left for a change of that file)."""
    https = lambda port: ("https", port, os.path.join(tls, "cert.pem"))
    small = servers.small_api
    tls_args = ["--tls", os.path.join(tls, "cert.pem"), os.path.join(tls, "key.pem"), "--handshake-ms", "50"]
    return {
        "keepalive": (lambda: small("keepalive", "keepalive"), 20000),
        "close": (lambda: small("close", "close"), 10000),
        "slowtail": (lambda: small("slowtail", "keepalive", "--slow-share", "0.03"), 2000),
        "slowtail6": (lambda: small("slowtail6", "keepalive", "--slow-share", "0.02", "--slow-ms", "6000"), 10000),
        "backend20": (lambda: small("backend20", "keepalive", "--latency-ms", "20"), 10000),
        "nginxslow": (lambda: servers.nginx("slow", small("upstream-slow", "keepalive", "--latency-ms", "20"), "", ""), 2000),
        "cap4": (lambda: small("cap4", "keepalive", "--cap", "4", "--latency-ms", "2"), 3000),
        "close2": (lambda: small("close2", "close", "--latency-ms", "2"), 3000),
        "loaddep": (lambda: small("loaddep", "keepalive", "--latency-ms", "5", "--per-in-flight-ms", "2", "--backlog", "128"), 3000),
        "tls": (lambda: https(small("tls", "keepalive", "--latency-ms", "2", "--backlog", "128", *tls_args)), 3000),
        "tlsclose": (lambda: https(small("tlsclose", "close", "--latency-ms", "2", "--backlog", "128", *tls_args)), 3000),
        "node": (lambda: servers.node_api("node"), 20000),
        "shed": (lambda: small("shed", "keepalive", "--workers", "16", "--latency-ms", "20", "--queue", "16"), 5000),
        "cold": (lambda: small("cold", "keepalive", "--workers", "32", "--latency-ms", "20", "--queue", "32", "--cold-s", "5",
                               "--cold-factor", "5"), 10000),
        # The unseen group's shapes and item counts (adaptive.py's unseen table), for a change aimed at one:
        "prefork": (lambda: servers.unseen_api("prefork", "prefork", "--workers", "8", "--keepalive-s", "1",
                                               "--max-keepalive-requests", "100", "--latency-ms", "10"), 1000),
        "bucket": (lambda: servers.unseen_api("bucket", "token-bucket", "--rate", "400", "--burst", "20",
                                              "--latency-ms", "5"), 1000),
        "varnish": (lambda: servers.unseen_api("varnish", "cache", "--hit-share", "0.9", "--hit-ms", "1", "--miss-ms", "80",
                                               "--origin-workers", "4", script=A.UNSEEN_API2), 2000),
        "sqlite": (lambda: servers.unseen_api("sqlite", "sqlite", "--latency-ms", "4", "--busy-timeout-s", "5",
                                              script=A.UNSEEN_API2), 1000),
        "gcpause": (lambda: servers.unseen_api("gcpause", "gc", "--pool", "10", "--latency-ms", "20", "--gc-every", "250",
                                               "--gc-ms", "150", script=A.UNSEEN_API3), 2000),
        "gunicorn": (lambda: servers.unseen_api("gunicorn", "sync", "--workers", "5", "--latency-ms", "20", "--backlog", "100",
                                                script=A.UNSEEN_API3), 1500),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dibs", action="append", required=True, help="NAME=PATH, a binary run with default flags (repeat)")
    ap.add_argument("--apis", required=True, help="comma-separated: " + "keepalive, close, slowtail, slowtail6, backend20, nginxslow, cap4, "
                    "close2, loaddep, tls, tlsclose, node, shed, cold, prefork, bucket, varnish, sqlite, gcpause, gunicorn")
    ap.add_argument("--fixed", action="append", default=[], help="API=C1,C2: fixed settings run beside (repeat)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--json")
    a = ap.parse_args()
    binaries = [tuple(d.split("=", 1)) for d in a.dibs]
    fixed = {f.split("=", 1)[0]: f.split("=", 1)[1].split(",") for f in a.fixed}
    first = binaries[0][1]
    work = tempfile.mkdtemp(prefix="dibs-turns-")
    servers = A.Servers(work)
    shapes = apis(servers, A.self_signed_cert(work))
    out = {"command": " ".join(sys.argv), "apis": {}}
    try:
        for name in a.apis.split(","):
            start, n = shapes[name]
            port = start()
            items = os.path.join(work, "items-%d.jsonl" % n)
            if not os.path.exists(items):
                subprocess.run([first, "seed", "--store", "jsonl:" + items, "--docs", str(n)], check=True, stdout=subprocess.DEVNULL)
            variants = [(b, path, []) for b, path in binaries]
            variants += [("fixed " + c, first, ["--fixed-concurrency", "--concurrency", c]) for c in fixed.get(name, [])]
            runs = {v[0]: [] for v in variants}
            for _ in range(a.runs):
                for label, path, extra in variants:
                    runs[label].append(A.enrich(path, items, work, port, extra, a.timeout))
            print(name, flush=True)
            for label, figs in runs.items():
                per_s = [round(f["docs_per_s"]) for f in figs]
                print("  %s: %d docs/s (%s), limit %s, refused %d, failed %d" % (
                    label, statistics.median(per_s), ", ".join(map(str, per_s)),
                    " ".join("%s->%s" % (f.get("limit_range", "-"), f.get("limit_end", "-")) for f in figs),
                    sum(f["refused"] for f in figs), sum(f["failed"] for f in figs)), flush=True)
            out["apis"][name] = runs
    finally:
        servers.stop()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
