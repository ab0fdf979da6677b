#!/usr/bin/python3
"""Scale-out: K `dibs enrich` processes draining one store together, as users run dibs on several
hosts against one server. For each K the store is reset and seeded with the same N rows, one
`dibs stub` (0 ms) answers every process, the K processes start together with --concurrency
TOTAL/K each, and the drain is timed from their start to the last one's exit. Figures summed over
the K processes: completed (their --summary-json), claim conflicts (their end line: candidates
another worker locked first), lost leases, the rows/s of the whole drain, and (MariaDB) the
statements the server received per row (its Questions counter around the drain: what each row
costs the server). With --server-pid, the server's CPU per row: its process's user + system time
around the drain (MariaDB: one process, every thread); for PostgreSQL (one backend process per
connection) the postmaster's pid, whose reaped children's time (cutime + cstime) holds each
backend's CPU once dibs has disconnected and the backend exited -- the drain is over when the
last process exits, and the figure is read once no backend of dibs is left (pg_stat_activity).
The server's background processes (checkpointer, WAL writer, autovacuum) are not counted.
Prints a Markdown table.

  k_process.py --dibs build/bin/dibs --store 'mysql://root@127.0.0.1:PORT/dibs_scale?table=jobs' \
      --rows 50000 --ks 1,2,4,8 [--concurrency 1000] [--on-done delete] [--claim batch] [--server-pid PID]
  k_process.py --dibs build/bin/dibs --store 'postgresql://postgres@127.0.0.1:PORT/dibs_test?table=jobs' \
      --server-pid POSTMASTER_PID ...
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

CONFLICTS = re.compile(r"claim conflicts (\d+)")


def reset_store(args):
    """An empty table (MySQL: dropped, `dibs seed` creates it) or collection, then N fresh rows."""
    if args.store.startswith("mysql://"):
        import MySQLdb
        from urllib.parse import urlparse, parse_qs
        u = urlparse(args.store)
        table = parse_qs(u.query).get("table", ["jobs"])[0]
        db = MySQLdb.connect(host=u.hostname, port=u.port or 3306, user=u.username or "root",
                             passwd=u.password or "")
        cur = db.cursor()
        name = u.path.lstrip("/")
        cur.execute("CREATE DATABASE IF NOT EXISTS `%s`" % name)
        cur.execute("DROP TABLE IF EXISTS `%s`.`%s`" % (name, table))
        db.close()
    elif is_postgres(args):
        psql(args, 'DROP TABLE IF EXISTS "%s"' % pg_table(args))
    else:
        import pymongo
        from urllib.parse import urlparse, parse_qs
        u = urlparse(args.store)
        coll = parse_qs(u.query).get("collection", ["message"])[0]
        client = pymongo.MongoClient(args.store.split("?")[0])
        client[u.path.lstrip("/") or "test"].drop_collection(coll)
        client.close()
    subprocess.run([args.dibs, "seed", "--store", args.store, "--docs", str(args.rows)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def is_postgres(args):
    return args.store.startswith(("postgresql://", "postgres://"))


def pg_table(args):
    from urllib.parse import urlparse, parse_qs
    return parse_qs(urlparse(args.store).query).get("table", ["jobs"])[0]


def psql(args, sql):
    """One value by psql (the URI without dibs's own table parameter)."""
    uri = re.sub(r"[?&]table=[^&]*", "", args.store)
    return subprocess.run(["psql", "-X", "-q", "-t", "-A", uri, "-c", sql], check=True, capture_output=True,
                          text=True).stdout.strip()


def wait_for_pg_backends_gone(args):
    """Until no session named dibs is left at the server (their CPU is then the postmaster's children's)."""
    if not is_postgres(args):
        return
    for _ in range(500):
        if psql(args, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dibs'") == "0":
            time.sleep(0.1)  # the postmaster reaps an exited backend when it handles SIGCHLD
            return
        time.sleep(0.02)
    sys.exit("dibs's PostgreSQL sessions outlived the processes")


def mysql_status(args):
    """MariaDB's global status counters (Questions: statements received), or None for other stores."""
    if not args.store.startswith("mysql://"):
        return None
    import MySQLdb
    from urllib.parse import urlparse
    u = urlparse(args.store)
    db = MySQLdb.connect(host=u.hostname, port=u.port or 3306, user=u.username or "root", passwd=u.password or "")
    cur = db.cursor()
    cur.execute("SHOW GLOBAL STATUS")
    out = {}
    for name, value in cur.fetchall():
        try:
            out[name] = int(value)
        except ValueError:
            pass
    db.close()
    return out


DETAIL = ("Com_select", "Com_update", "Com_delete", "Com_commit", "Com_rollback", "Handler_read_key",
          "Handler_read_next", "Innodb_row_lock_waits", "Innodb_row_lock_time", "Innodb_deadlocks")


def process_cpu(pid):
    """CPU seconds (user + system) a process has used, its reaped children's included, from /proc;
    None without a pid."""
    if not pid:
        return None
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def children_cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def start_stub(args):
    stub = subprocess.Popen([args.dibs, "stub", "--port", "0", "--threads", str(args.stub_threads)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = stub.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
    if not m:
        stub.kill()
        sys.exit("dibs stub did not say its port: " + line)
    return stub, int(m.group(1))


def run_k(args, k, port, workdir):
    procs = []
    per = max(1, args.concurrency // k)
    status_before = mysql_status(args)
    wait_for_pg_backends_gone(args)  # dibs seed's session
    server_cpu_before = process_cpu(args.server_pid)
    dibs_cpu_before = children_cpu()
    started = time.monotonic()
    for i in range(k):
        summary = os.path.join(workdir, "summary-%d-%d.json" % (k, i))
        if os.path.exists(summary):
            os.remove(summary)  # a repeat must not read the run before's figures
        cmd = [args.dibs, "enrich", "--store", args.store, "--url", "http://127.0.0.1:%d/json/{originatingIp}" % port,
               "--concurrency", str(per), "--claim-batch", str(args.claim_batch), "--no-progress", "--no-preflight",
               "--summary-json", summary]
        if args.store.startswith("mysql://") or is_postgres(args):
            cmd += ["--on-done", args.on_done]
        else:
            cmd += ["--claim", args.claim]
        if args.shards:
            cmd += ["--shards", str(args.shards)]
        if args.db_threads:
            cmd += ["--db-threads", str(args.db_threads)]
        procs.append((subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), summary))
    completed = conflicts = failed = lost = 0
    codes = []
    for p, summary in procs:
        err, _ = p.communicate()  # the end line (with the conflicts) and any warning
        codes.append(p.returncode)
        if p.returncode not in (0, 1):  # 1: items failed (counted); anything else: a broken run
            sys.exit("process exit %d; its stderr:\n%s" % (p.returncode, err[-2000:]))
        m = CONFLICTS.search(err)
        conflicts += int(m.group(1)) if m else 0
        try:
            s = json.load(open(summary))
            completed += s["completed"]
            failed += s["failed"]
            lost += s["lost_leases"]
        except (OSError, ValueError, KeyError):
            # Its rows would be missing from every figure: the table would lie.
            sys.exit("process exit %d, no summary; its stderr:\n%s" % (p.returncode, err[-2000:]))
    seconds = time.monotonic() - started
    wait_for_pg_backends_gone(args)
    dibs_cpu = children_cpu() - dibs_cpu_before
    server_cpu = None if server_cpu_before is None else process_cpu(args.server_pid) - server_cpu_before
    status = mysql_status(args)
    statements = None if status is None else status["Questions"] - status_before["Questions"] - 1
    if status is not None and args.status_detail:
        print("K=%d per 1000 rows: %s" % (k, ", ".join("%s %.1f" % (n, 1000.0 * (status[n] - status_before[n]) / max(1, completed))
                                                   for n in DETAIL if n in status)), file=sys.stderr)
    return {"k": k, "concurrency_each": per, "completed": completed, "failed": failed, "lost_leases": lost,
            "conflicts": conflicts,
            "dibs_cpu_us_per_row": round(dibs_cpu * 1e6 / max(1, completed)),
            "server_cpu_us_per_row": None if server_cpu is None else round(server_cpu * 1e6 / max(1, completed)),
            "statements_per_row": round(statements / max(1, completed), 2) if statements is not None else None,
            "seconds": round(seconds, 3), "rows_per_s": round(completed / seconds, 1) if seconds > 0 else 0,
            "exit_codes": codes}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dibs", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--rows", type=int, default=50000)
    ap.add_argument("--ks", default="1,2,4,8")
    ap.add_argument("--concurrency", type=int, default=1000, help="total, split across the K processes")
    ap.add_argument("--claim-batch", type=int, default=100)
    ap.add_argument("--on-done", default="delete")
    ap.add_argument("--claim", default="batch", help="MongoDB claim strategy")
    ap.add_argument("--shards", type=int, default=0, help="per process (0: dibs's default, one per core)")
    ap.add_argument("--db-threads", type=int, default=0, help="per process (0: dibs's default)")
    ap.add_argument("--stub-threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="runs per K; the table shows the median by rows/s")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--status-detail", action="store_true", help="MariaDB: print more server counters to stderr")
    ap.add_argument("--server-pid", type=int, help="the database server's pid: its CPU per row is shown too")
    args = ap.parse_args()

    stub, port = start_stub(args)
    results = []
    try:
        with tempfile.TemporaryDirectory() as workdir:
            for k in [int(x) for x in args.ks.split(",")]:
                runs = []
                for _ in range(args.repeat):
                    reset_store(args)
                    runs.append(run_k(args, k, port, workdir))
                runs.sort(key=lambda r: r["rows_per_s"])
                best = dict(runs[len(runs) // 2])
                best["runs_rows_per_s"] = [r["rows_per_s"] for r in runs]
                results.append(best)
    finally:
        stub.terminate()
        stub.wait()

    base = results[0]["rows_per_s"] if results and results[0]["rows_per_s"] else 0
    print("| K processes | concurrency each | rows | seconds | rows/s | x K=%d | claim conflicts | share of rows | lost leases | statements/row | dibs CPU µs/row | server CPU µs/row | exit codes |"
          % results[0]["k"])
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        share = 100.0 * r["conflicts"] / max(1, args.rows)
        ratio = r["rows_per_s"] / base if base else 0
        runs = "" if len(r["runs_rows_per_s"]) < 2 else " (runs: %s)" % ", ".join("%.0f" % x for x in r["runs_rows_per_s"])
        spr = "" if r["statements_per_row"] is None else "%.2f" % r["statements_per_row"]
        server = "" if r["server_cpu_us_per_row"] is None else str(r["server_cpu_us_per_row"])
        print("| %d | %d | %d | %.2f | %.0f%s | %.2f | %d | %.2f%% | %d | %s | %d | %s | %s |"
              % (r["k"], r["concurrency_each"], r["completed"], r["seconds"], r["rows_per_s"], runs, ratio,
                 r["conflicts"], share, r["lost_leases"], spr, r["dibs_cpu_us_per_row"], server,
                 ",".join(str(c) for c in r["exit_codes"])))
    if args.json:
        json.dump({"rows": args.rows, "store": re.sub(r"//[^@/]*@", "//", args.store), "results": results},
                  open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
