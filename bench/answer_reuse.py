#!/usr/bin/env python3
"""make bench, part "reuse": answer reuse under a rate limit.

The same documents (--docs D drawn from --distinct D/10 addresses, a skewed draw: every address at
least once, so the repeat factor is exactly 10) are enriched twice through `dibs demo` under the
same --rate: once with every document calling the API, once with --reuse-answers. Under a rate
limit the calls are the bottleneck, so reuse should multiply docs/s by the repeat factor (the
target: within 10%). Writes a Markdown table (with the commands that reproduce it) and JSON.
"""
import argparse
import json
import subprocess
import sys


def run(dibs, args):
    cmd = [dibs, "demo", "--no-progress", "--samples", "0", "--summary-json", "-"] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1800)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit("dibs demo failed: %s" % " ".join(cmd))
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    served = None
    for line in p.stderr.splitlines():
        if "stub served" in line:
            served = int(line.split("stub served ")[1].split()[0])
    return cmd, summary, served


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dibs", required=True)
    ap.add_argument("--docs", type=int, default=40000)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--rate", default="1000/s")
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--json")
    ap.add_argument("--md")
    a = ap.parse_args()
    distinct = a.docs // a.repeats
    common = ["--docs", str(a.docs), "--distinct", str(distinct), "--rate", a.rate,
              "--concurrency", str(a.concurrency), "--seed", "7"]
    rows = []
    for name, extra in (("every document calls", []), ("--reuse-answers", ["--reuse-answers"])):
        cmd, s, served = run(a.dibs, common + extra)
        rows.append({"run": name, "command": " ".join(["dibs"] + cmd[1:]), "summary": s, "requests": served})
    plain, reuse = rows[0]["summary"], rows[1]["summary"]
    if rows[1]["requests"] is None:
        raise SystemExit("answer_reuse: the stub's count of requests was not found: no repeat factor to compare with")
    repeat = a.docs / max(1, rows[1]["requests"])
    ratio = reuse["docs_per_s"] / plain["docs_per_s"] if plain["docs_per_s"] else 0
    verdict = "within 10%" if abs(ratio / repeat - 1) <= 0.10 else "NOT within 10%"
    out = ["## Answer reuse under a rate limit: %d documents from %d addresses at --rate %s" % (a.docs, distinct, a.rate),
           "",
           "`dibs demo` (memory store, in-process stub at 0 ms), concurrency %d; the same seeded documents twice."
           % a.concurrency,
           "Repeat factor: documents per API call made with reuse. Target: the docs/s ratio within 10% of it.",
           "",
           "| run | API requests | elapsed s | docs/s | hit ratio |",
           "|---|---:|---:|---:|---:|"]
    for r in rows:
        s = r["summary"]
        out.append("| %s | %s | %.3f | %.1f | %s |" % (r["run"], r["requests"], s["elapsed_s"], s["docs_per_s"],
                                                   "%.3f" % s["answer_hit_ratio"] if "answer_hit_ratio" in s else "-"))
    out += ["",
            "docs/s ratio %.2f against a repeat factor of %.2f: %.1f%% of it, %s." % (ratio, repeat, 100 * ratio / repeat,
                                                                                  verdict),
            "",
            "Reproduce:",
            ""]
    out += ["    " + r["command"] for r in rows]
    out.append("")
    text = "\n".join(out)
    print(text)
    if a.md:
        open(a.md, "w").write(text)
    if a.json:
        json.dump({"docs": a.docs, "distinct": distinct, "rate": a.rate, "concurrency": a.concurrency,
                   "repeat_factor": repeat, "docs_per_s_ratio": ratio, "runs": rows}, open(a.json, "w"), indent=1)
    return 0  # the verdict is in the table; a miss must not stop the rest of make bench


if __name__ == "__main__":
    sys.exit(main())
