#!/usr/bin/env python3
"""make bench, part "quota": dibs with default flags against an API that meters a quota and says
so in every answer, as GitHub-style APIs do: Python's http.server (tests/servers/small_api.py
--quota N --window 1) allowing N requests a window of 1 s, the windows on the clock's seconds
(X-RateLimit-Reset: the next second's epoch), each request counted as it arrives, 429 past N.
For each shape (answers in 10 ms and 50 ms; kept-alive connections and HTTP/1.0, a connection per
request) one run of ITEMS items: the share of calls answered 429 (goal: at most 1%, 0 the aim)
and the run's accepted requests a second against the quota's rate (goal: at least 0.9). The
quota's rate is the ceiling no client can pass: it is the figure compared with.

  bench/quota.py --dibs build/bin/dibs [--items 2000] [--quota 50] [--md F] [--json F]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SMALL_API = os.path.join(HERE, "..", "tests", "servers", "small_api.py")


def start_api(tmp, mode, latency_ms, quota, reset_style):
    name = "api"
    proc = subprocess.Popen(["/usr/bin/python3", SMALL_API, tmp, name, mode, "--quota", str(quota), "--window", "1",
                             "--latency-ms", str(latency_ms), "--reset-style", reset_style],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(tmp, name + ".port")
    for _ in range(300):
        if os.path.exists(port_file):
            return proc, int(open(port_file).read())
        time.sleep(0.05)  # polling for the port file, bounded
    proc.kill()
    raise SystemExit("small_api.py did not start")


def stats(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=10) as r:
        return json.loads(r.read())


def one_run(dibs, items, mode, latency_ms, quota, reset_style):
    with tempfile.TemporaryDirectory(prefix="dibs-quota-bench-") as tmp:
        proc, port = start_api(tmp, mode, latency_ms, quota, reset_style)
        try:
            inp = os.path.join(tmp, "in.jsonl")
            with open(inp, "w") as f:
                for i in range(items):
                    f.write('{"ip":"10.1.%d.%d"}\n' % (i // 250, i % 250))
            cmd = [dibs, "enrich", "--store", "jsonl:" + inp, "--out", os.path.join(tmp, "out.jsonl"), "--url",
                   "http://127.0.0.1:%d/json/{ip}" % port, "--no-progress"]
            started = time.monotonic()
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            seconds = time.monotonic() - started
            s = stats(port)
            done = re.search(r"summary: completed=(\d+) failed=(\d+)", run.stdout + run.stderr)
            completed = int(done.group(1)) if done else -1
            failed = int(done.group(2)) if done else -1
            accepted = s["requests"] - s["quota_refused"]
            return {"mode": mode, "latency_ms": latency_ms, "reset": reset_style, "items": items, "rc": run.returncode,
                    "completed": completed, "failed": failed, "requests": s["requests"], "refused_429": s["quota_refused"],
                    "share_429": s["quota_refused"] / max(1, s["requests"]), "seconds": seconds,
                    "accepted_per_s": accepted / seconds, "of_quota": accepted / seconds / quota,
                    "command": " ".join(cmd[:1] + ["enrich", "--store", "jsonl:IN", "--out", "OUT", "--url",
                                                   "http://127.0.0.1:PORT/json/{ip}", "--no-progress"])}
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dibs", required=True)
    p.add_argument("--items", type=int, default=2000)
    p.add_argument("--quota", type=int, default=50)
    p.add_argument("--md")
    p.add_argument("--json")
    a = p.parse_args()
    shapes = [("keepalive", 10, "epoch"), ("close", 10, "epoch"), ("keepalive", 50, "epoch"), ("close", 50, "epoch"),
              ("keepalive", 10, "epoch-ms"), ("keepalive", 10, "seconds")]
    rows = []
    for mode, latency, reset in shapes:
        r = one_run(a.dibs, a.items, mode, latency, a.quota, reset)
        rows.append(r)
        print("quota %d/s, %s, %d ms, reset %s: %d of %d calls answered 429 (%.2f%%), %.1f accepted/s = %.3f of the quota, "
              "%d done, %d failed, exit %d" % (a.quota, mode, latency, reset, r["refused_429"], r["requests"],
                                               100 * r["share_429"], r["accepted_per_s"], r["of_quota"], r["completed"],
                                               r["failed"], r["rc"]), flush=True)
    met = all(r["share_429"] <= 0.01 and r["of_quota"] >= 0.9 and r["completed"] == a.items for r in rows)
    lines = ["## An API's quota, as GitHub-style APIs state it (default flags)", "",
             "Python's http.server (`tests/servers/small_api.py MODE --quota %d --window 1 --latency-ms MS "
             "--reset-style STYLE`): %d requests a window of 1 s, the windows on the clock's seconds, each request counted "
             "as it arrives, 429 past them; `X-RateLimit-Limit`, `-Remaining`, `-Reset` on every answer. dibs: `%s`. "
             "%d items a run. Goals: at most 1%% of calls answered 429, at least 0.9 of the quota's rate (the ceiling "
             "no client can pass)." % (a.quota, a.quota, rows[0]["command"], a.items), "",
             "| connections | answers in | reset as | calls | answered 429 | accepted/s | of the quota | done | exit |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %d ms | %s | %d | %d (%.2f%%) | %.1f | %.3f | %d | %d |" % (
            "kept alive" if r["mode"] == "keepalive" else "HTTP/1.0, one a request", r["latency_ms"], r["reset"],
            r["requests"], r["refused_429"], 100 * r["share_429"], r["accepted_per_s"], r["of_quota"], r["completed"], r["rc"]))
    lines += ["", "Goals %s." % ("met in every shape" if met else "NOT met in every shape: see the rows"), ""]
    text = "\n".join(lines)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
