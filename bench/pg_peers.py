#!/usr/bin/env python3
"""dibs against Graphile Worker and pg-boss on the same PostgreSQL server (`make bench`, part pg).

For each kind of job (no-op, then a GET of one shared external stub) and each side (dibs,
Graphile Worker, pg-boss): enqueue N jobs with the side's own bulk API (not timed), VACUUM
ANALYZE, then drain them, reading around the drain alone
  - the side's own figures (one JSON line: jobs, seconds, jobs/s, CPU seconds of its processes),
  - the server's CPU: the postmaster's utime+stime+cutime+cstime plus its live children's
    utime+stime from /proc (backends that exit are reaped into the postmaster's cutime/cstime),
  - the server's transactions (pg_stat_database xact_commit + xact_rollback),
and write a markdown table (--md) and the figures (--json).

  pg_peers.py --uri postgresql://postgres@127.0.0.1:PORT/dibs_test --pg-home DIR --build build
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu_s(postmaster):
    """CPU seconds the server has used so far: the postmaster with its reaped children, and its live children."""
    def fields(pid):
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
        return s[s.rindex(")") + 2:].split()  # fields from 3 (state) on: index 0 is field 3

    total = sum(int(x) for x in fields(postmaster)[11:15])  # utime stime cutime cstime
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            f = fields(int(entry))
        except (OSError, ValueError):
            continue  # gone meanwhile
        if int(f[1]) == postmaster:  # ppid
            total += int(f[11]) + int(f[12])
    return total / TICKS


def process_cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    f = s[s.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / TICKS


def psql(uri, sql):
    out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-d", uri, "-c", sql], check=True,
                         capture_output=True, text=True).stdout
    return out.strip()


def transactions(uri):
    # A new connection: its snapshot of the statistics is fresh; the drain's backends have exited
    # (and so flushed their counts) before this runs.
    return int(psql(uri, "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"))


def wait_for_backends_to_end(uri):
    # The drain's backends flush their statistics as they exit, which may be just after its
    # client does: read the figures once no other client backend is left (within 10 s). Returns
    # how many queries it made (each a transaction of its own).
    for n in range(1, 201):
        if psql(uri, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                     "AND pid <> pg_backend_pid()") == "0":
            return n
        time.sleep(0.05)
    return 200


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError("no JSON line in:\n" + text)


class Side:
    def __init__(self, name, enqueue, drain, left_sql):
        self.name, self.enqueue, self.drain, self.left_sql = name, enqueue, drain, left_sql


def sides(args, base_uri):
    dibs_uri = base_uri + ("&" if "?" in base_uri else "?") + "table=pg_drain"
    drain_bin = os.path.join(args.build, "bin", "dibs_bench_pg_drain")
    node = ["node"]
    graphile = os.path.join(HERE, "peers", "graphile_drain.js")
    pgboss = os.path.join(HERE, "peers", "pgboss_drain.js")
    procs = ["--processes", str(args.processes)]
    return [
        Side("dibs",
             lambda n: [drain_bin, "--uri", dibs_uri, "--seed", str(n)],
             lambda url: [drain_bin, "--uri", dibs_uri, "--shards", str(args.processes)] + (["--url", url] if url else []),
             "SELECT count(*) FROM pg_drain"),
        Side("graphile-worker",
             lambda n: node + [graphile, "enqueue", "--uri", base_uri, "--jobs", str(n)],
             lambda url: node + [graphile, "drain", "--uri", base_uri] + procs + (["--url", url] if url else []),
             "SELECT count(*) FROM graphile_worker._private_jobs"),
        Side("pg-boss",
             lambda n: node + [pgboss, "enqueue", "--uri", base_uri, "--jobs", str(n)],
             lambda url: node + [pgboss, "drain", "--uri", base_uri] + procs + (["--url", url] if url else []),
             "SELECT count(*) FROM pgboss.job WHERE state <> 'completed'"),
    ]


def measure(side, args, uri, postmaster, url, stub_pid):
    subprocess.run(side.enqueue(args.jobs), check=True, capture_output=True, text=True)
    psql(uri, "VACUUM ANALYZE")
    load = float(open("/proc/loadavg").read().split()[0])
    tx0, cpu0, stub0 = transactions(uri), server_cpu_s(postmaster), process_cpu_s(stub_pid)
    run = subprocess.run(side.drain(url), capture_output=True, text=True)
    polls = wait_for_backends_to_end(uri)
    cpu1, stub1 = server_cpu_s(postmaster), process_cpu_s(stub_pid)
    tx1 = transactions(uri)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        raise RuntimeError("%s drain exited with %d" % (side.name, run.returncode))
    fig = last_json_line(run.stdout)
    fig["server_cpu_s"] = cpu1 - cpu0
    fig["stub_cpu_s"] = stub1 - stub0
    fig["loadavg_1min_before"] = load
    # Minus the queries of transactions() and wait_for_backends_to_end() (counted once they exit).
    fig["server_transactions"] = tx1 - tx0 - 1 - polls
    fig["left"] = int(psql(uri, side.left_sql))
    if fig["jobs"] != args.jobs or fig["left"] != 0 or fig.get("failed", 0):
        sys.stderr.write("warning: %s did %d of %d jobs (%d failed, %d left)\n"
                         % (side.name, fig["jobs"], args.jobs, fig.get("failed", 0), fig["left"]))
    return fig


def start_stub(dibs):
    stub = subprocess.Popen([dibs, "stub", "--port", "0"], stdout=subprocess.PIPE, text=True)
    line = stub.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
    if not m:
        stub.kill()
        raise RuntimeError("dibs stub said: " + line)
    return stub, "http://127.0.0.1:%s/json/" % m.group(1)


def per_job_us(seconds, jobs):
    return seconds / jobs * 1e6 if jobs else 0.0


def table(runs, jobs):
    rows = ["| jobs | side | jobs/s | dibs / faster peer | client CPU µs/job | server CPU µs/job | stub CPU µs/job "
            "| server transactions/job | settings |",
            "|---|---|---|---|---|---|---|---|---|"]
    for kind in ("noop", "get_stub"):
        figs = [r for r in runs if r["processing"] == kind]
        dibs = next(r for r in figs if r["side"] == "dibs")
        best_peer = max((r["jobs_per_s"] for r in figs if r["side"] != "dibs"), default=0)
        label = "no-op" if kind == "noop" else "GET the stub"
        for r in figs:
            ratio = "%.2f" % (dibs["jobs_per_s"] / best_peer) if r["side"] == "dibs" and best_peer else ""
            rows.append("| %s | %s | %.0f | %s | %.1f | %.1f | %.1f | %.3f | %s |" % (
                label, r["side"], r["jobs_per_s"], ratio, per_job_us(r["cpu_s"], r["jobs"]),
                per_job_us(r["server_cpu_s"], r["jobs"]), per_job_us(r["stub_cpu_s"], r["jobs"]),
                r["server_transactions"] / r["jobs"] if r["jobs"] else 0,
                r["settings"]))
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--uri", required=True)
    p.add_argument("--pg-home", required=True, help="the server's home (postgres_ctl.sh's postgres.home): data/postmaster.pid")
    p.add_argument("--build", default="build")
    p.add_argument("--jobs", type=int, default=100000)
    p.add_argument("--processes", type=int, default=os.cpu_count(), help="worker processes per peer, shards for dibs")
    p.add_argument("--only", default="", help="comma-separated sides to run (dibs,graphile-worker,pg-boss)")
    p.add_argument("--kinds", default="noop,get_stub")
    p.add_argument("--json")
    p.add_argument("--md")
    p.add_argument("--header", default="", help="a first line for --md (what produced the figures)")
    args = p.parse_args()

    with open(os.path.join(args.pg_home, "data", "postmaster.pid")) as f:
        postmaster = int(f.readline())
    stub, url = start_stub(os.path.join(args.build, "bin", "dibs"))
    runs = []
    try:
        for kind in args.kinds.split(","):
            for side in sides(args, args.uri):
                if args.only and side.name not in args.only.split(","):
                    continue
                fig = measure(side, args, args.uri, postmaster, url if kind == "get_stub" else "", stub.pid)
                fig["processing"] = kind
                runs.append(fig)
                print(json.dumps(fig), file=sys.stderr, flush=True)
    finally:
        stub.terminate()
        stub.wait()
    load = open("/proc/loadavg").read().split()[:3]
    md = table(runs, args.jobs) if not args.only else json.dumps(runs, indent=1)
    md += ("\n\n%d jobs per run, %d worker processes per peer and %d dibs shards, %s; load average at the end %s "
           "(1, 5, 15 min; %d cores: above that, other processes were competing for the CPU)."
           % (args.jobs, args.processes, args.processes, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              " ".join(load), os.cpu_count()))
    print(md)
    if args.md:
        with open(args.md, "w") as f:
            f.write((args.header + "\n\n" if args.header else "") + md + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": args.header, "jobs": args.jobs, "processes": args.processes, "loadavg_at_end": load, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
