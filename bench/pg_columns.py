#!/usr/bin/env python3
"""The claim's cost with a request body of three columns, on PostgreSQL (`make bench`, part pg).

dibs's no-op drain of N jobs (bench/pg_drain.cpp) of three tables: the seeded one, its claims
returning the key column; the same with three more columns (a VARCHAR, an INT, a jsonb object)
not read; and those three read by the claims. Alternated ROUNDS times on the same server,
freshly seeded each time; the better run of each kept. Writes a markdown table
(--md, also printed) and the figures (--json).

  pg_columns.py --uri postgresql://postgres@127.0.0.1:PORT/dibs_test --build build --jobs 100000
"""
import argparse
import json
import os
import subprocess


SHAPES = ("narrow", "wide", "wide_read")


def drain(binary, uri, jobs, shape):
    seed = ["--columns"] if shape != "narrow" else []
    read = ["--read-columns"] if shape == "wide_read" else []
    subprocess.run([binary, "--uri", uri, "--seed", str(jobs)] + seed, check=True, capture_output=True, text=True)
    run = subprocess.run([binary, "--uri", uri] + read, check=True, capture_output=True, text=True)
    line = [l for l in run.stdout.splitlines() if l.startswith("{")][-1]
    fig = json.loads(line)
    if fig["jobs"] != jobs or fig["failed"]:
        raise RuntimeError("drained %d of %d jobs (%d failed)" % (fig["jobs"], jobs, fig["failed"]))
    return fig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--md")
    args = ap.parse_args()
    uri = args.uri + ("&" if "?" in args.uri else "?") + "table=pg_columns"
    binary = os.path.join(args.build, "bin", "dibs_bench_pg_drain")
    best = {shape: None for shape in SHAPES}
    for _ in range(args.rounds):
        for shape in SHAPES:
            fig = drain(binary, uri, args.jobs, shape)
            if best[shape] is None or fig["jobs_per_s"] > best[shape]["jobs_per_s"]:
                best[shape] = fig
    one, wide, three = (best[s] for s in SHAPES)
    ratio = three["jobs_per_s"] / one["jobs_per_s"] if one["jobs_per_s"] else 0.0
    same_table = three["jobs_per_s"] / wide["jobs_per_s"] if wide["jobs_per_s"] else 0.0
    row = lambda name, f: "| %s | %.0f | %.1f |" % (name, f["jobs_per_s"], f["cpu_s"] / f["jobs"] * 1e6)
    lines = ["| dibs no-op drain (%d jobs, %s) | jobs/s (better of %d) | CPU µs/job |" % (args.jobs, one["settings"], args.rounds),
             "|---|---|---|",
             row("the seeded table, the key column read", one),
             row("three more columns (VARCHAR, INT, jsonb), not read", wide),
             row("the three read (a request body of three columns)", three),
             "| read / seeded table | %.2f | |" % ratio,
             "| read / not read, same table | %.2f | |" % same_table]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.md:
        open(args.md, "w").write(text)
    if args.json:
        json.dump({"jobs": args.jobs, "one_column": one, "wide_not_read": wide, "three_columns": three, "ratio": ratio,
                   "ratio_same_table": same_table}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
