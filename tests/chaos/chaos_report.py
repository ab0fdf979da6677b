#!/usr/bin/python3
"""Merges the figures of dibs_chaos runs (--report FILE.json, one per store) into OUT.json and
OUT.md, naming the commit (git rev-parse HEAD, and whether the tree had changes), the date, each
exact command and seed: every figure `make chaos` prints lands in the repository.

  chaos_report.py [--title TEXT] [--note FILE] OUT RUN.json [RUN.json ...]

--title: the report's heading (default "make chaos: the latest run"); --note: a text file (another
run's output, e.g. make chaos-cluster's 20,000-row drain) shown whole after the runs.
"""
import datetime
import json
import os
import subprocess
import sys


def git(*args):
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    args = sys.argv[1:]
    title, note = "make chaos: the latest run", None
    while args and args[0] in ("--title", "--note") and len(args) > 1:
        if args[0] == "--title":
            title = args[1]
        else:
            note = args[1]
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    out, paths = args[0], args[1:]
    runs = []
    for p in paths:
        if os.path.exists(p):
            with open(p) as f:
                runs.append(json.load(f))
        else:
            runs.append({"store": p, "missing": "the run wrote no report (it stopped before its end)"})
    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    report = {"commit": commit, "uncommitted_changes": dirty,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "runs": runs}
    with open(out + ".json", "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    lines = ["# " + title, "",
             "Commit `%s`%s, written %s by `tests/chaos/chaos_report.py`." %
             (commit, " (with uncommitted changes)" if dirty else "", report["date"]), ""]
    for r in runs:
        lines += ["## %s" % r.get("store"), ""]
        if "missing" in r:
            lines += [r["missing"], ""]
            continue
        lines += ["- command: `%s`" % r["command"], "- seed: %s (replay with `--seed %s`)" % (r["seed"], r["seed"]),
                  "- date: %s" % r["date"], "",
                  "| figure | value |", "|---|---|"]
        for k in ("rounds", "items_per_round", "workers", "fault_seconds", "poison_rate", "idle_close_ms", "proxy",
                  "items", "done", "failed", "poisoned", "takeovers", "lost_leases", "late_commits",
                  "unknown_trx_start", "rounds_without_write_log", "violations"):
            v = r.get(k)
            v = str(v).lower() if isinstance(v, bool) else v
            lines.append("| %s | %s |" % (k, "-" if v is None else ("**%s**" % v if k == "violations" else v)))
        lines += ["", "Violations by check: %s" % (", ".join("%s %s" % kv for kv in r["violations_by_check"].items()) or "none"),
                  "", "| fault injected | times |", "|---|---|"]
        lines += ["| %s | %s |" % kv for kv in sorted(r["faults"].items())]
        lines.append("")
    if note:
        with open(note) as f:
            text = f.read()
        report["note"] = text
        with open(out + ".json", "w") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
        lines += ["## %s" % os.path.basename(note), "", "```", text.rstrip("\n"), "```", ""]
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines))
    print("chaos: figures written to %s.md and %s.json" % (out, out))


if __name__ == "__main__":
    main()
