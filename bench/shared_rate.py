#!/usr/bin/env python3
"""make bench, BENCH_ONLY=sharedrate: the rate one `dibs stub` served to several `dibs enrich`
processes on one MariaDB table, with `--rate-scope store` (one --rate for all of them) and, for
comparison, `--rate-scope process` (each its own). Prints Markdown; --md also writes it to a file."""
import argparse
import os
import re
import signal
import subprocess
import sys
import time


def served_per_second(dibs, uri, table, rows, rate, scope, processes):
    stub = subprocess.Popen([dibs, "stub", "--port", "0", "--per-second"], stdout=subprocess.PIPE, text=True)
    try:
        first = stub.stdout.readline()
        port = re.search(r":(\d+) ", first).group(1)
        table_uri = uri + ("&" if "?" in uri else "?") + "table=" + table  # a new table: seed creates it
        subprocess.run([dibs, "seed", "--store", table_uri, "--docs", str(rows)], check=True, stdout=subprocess.DEVNULL)
        cmd = [dibs, "enrich", "--store", table_uri, "--url", "http://127.0.0.1:%s/json/{originatingIp}" % port,
               "--rate", rate, "--rate-scope", scope, "--claim-batch", "10", "--no-progress", "--log-level", "warn"]
        start = time.monotonic()
        runs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL) for _ in range(processes)]
        codes = [r.wait() for r in runs]
        took = time.monotonic() - start
    finally:
        stub.send_signal(signal.SIGTERM)
        out, _ = stub.communicate(timeout=60)
    counts = [int(m.group(1)) for m in re.finditer(r"second \d+: (\d+) answers", out)]
    return counts, took, codes, " ".join(cmd[:1] + ["enrich", "--store", "'mysql://.../dibs_bench?table=...'"] + cmd[4:5] +
                                        ["'http://127.0.0.1:PORT/json/{originatingIp}'"] + cmd[6:])


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--dibs", required=True)
    a.add_argument("--uri", required=True, help="mysql://user@host:port/db (no table)")
    a.add_argument("--rate", default="20/s")
    a.add_argument("--seconds", type=int, default=30)
    a.add_argument("--processes", type=int, default=4)
    a.add_argument("--md")
    o = a.parse_args()
    per_second = float(o.rate.split("/")[0]) / (60.0 if o.rate.endswith("/min") else 1.0)
    rows = int(per_second * o.seconds)
    block = max(1, int(per_second * 0.5))
    tag = str(os.getpid())
    lines = ["## Shared rate: %d `dibs enrich` processes on one MariaDB table, `--rate %s`" % (o.processes, o.rate), "",
             "%d rows (%d s at the limit), one `dibs stub --per-second` counting what it answered in each second from its"
             " first answer (each process's pre-flight request included). `store`: one --rate for every process"
             " (table dibs_rate, blocks of %d); `process`: each its own, for comparison. Reproduce:"
             " `BENCH_ONLY=sharedrate make bench` (bench/shared_rate.py)." % (rows, o.seconds, block), ""]
    lines += ["| --rate-scope | answers | took | per second: max | mean of full seconds | limit | exit codes |",
              "|---|---|---|---|---|---|---|"]
    details = []
    bad = []
    for scope in ("store", "process"):
        table = "sharedrate_%s_%s" % (scope, tag)
        counts, took, codes, cmd = served_per_second(o.dibs, o.uri, table, rows, o.rate, scope, o.processes)
        bad += [c for c in codes if c != 0]
        full = counts[:-1] if len(counts) > 1 else counts
        mean = sum(full) / len(full) if full else 0
        lines.append("| %s | %d | %.1f s | %d | %.1f | %g/s | %s |" % (scope, sum(counts), took, max(counts or [0]), mean,
                                                                   per_second, ",".join(map(str, codes))))
        details.append("`%s` (%s): per second %s" % (scope, cmd, " ".join(map(str, counts))))
    lines += [""] + ["- " + d for d in details] + [""]
    text = "\n".join(lines)
    print(text)
    # A worker that crashed makes every figure above wrong: shown, never kept as the results.
    if o.md and not bad:
        with open(o.md, "w") as f:
            f.write(text + "\n")
    if bad:
        print("shared_rate: a dibs enrich process failed (exit codes %s)" % bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
