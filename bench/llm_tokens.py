#!/usr/bin/env python3
"""make bench, part "llm": dibs against an LLM provider's API that meters tokens per minute as
OpenAI and Anthropic do (tests/servers/llm_api.py: a bucket of --tpm tokens refilled continuously,
each request charged max_tokens + its prompt on arrival and settled with its usage, 429 past it,
the provider's rate-limit headers on every answer, --latency-ms a completion plus 2 ms a token).
ITEMS product reviews (60-110 words), a 50-token max_tokens, the request shape of the docs
(--method POST --body --map), default flags otherwise; each row one run:
  - one process on a JSON Lines file, OpenAI's and Anthropic's headers;
  - one process, a server that states nothing (--no-headers), with --token-rate alone;
  - PROCESSES processes on one MariaDB table (when --mysql-uri is given), OpenAI's headers.
The figures: the share of the limit used, tokens settled / (a full bucket + the refill over the
run's span, first request to last answer: what an ideal client could use; goal >= 0.95, 0.9 with
--token-rate alone), and the share of calls answered 429 (goal <= 0.5%, 1% with --token-rate alone).

  bench/llm_tokens.py --dibs build/bin/dibs [--mysql-uri mysql://root@127.0.0.1:PORT/dibs_bench]
                      [--items 3000] [--tpm 150000] [--md F] [--json F]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
LLM_API = os.path.join(HERE, "..", "tests", "servers", "llm_api.py")
WORDS = "good bad fine great awful battery screen price delivery broke works love hate quick slow cheap sturdy".split()


def reviews(n):
    rnd = random.Random(7)
    return [(i, "Review %d" % i, " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(60, 110)))) for i in range(n)]


def start_api(tmp, style, tpm, latency_ms, headers, backlog=0, apart=None):
    extra = ([] if headers else ["--no-headers"]) + (["--backlog", str(backlog)] if backlog else [])
    limits = ["--itpm", str(apart[0]), "--otpm", str(apart[1])] if apart else ["--tpm", str(tpm)]
    proc = subprocess.Popen(["/usr/bin/python3", LLM_API, tmp, "api", "--style", style] + limits +
                            ["--latency-ms", str(latency_ms)] + extra)
    port_file = os.path.join(tmp, "api.port")
    deadline = time.monotonic() + 30
    while not os.path.exists(port_file):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("llm_api.py did not start")
        time.sleep(0.05)
    return proc, int(open(port_file).read())


def request_shape(style, port):
    if style == "openai":
        return ["--url", "http://127.0.0.1:%d/v1/chat/completions" % port, "--method", "POST", "--body",
                '{"model": "gpt-4o-mini", "max_tokens": 50, "messages": [{"role": "user", '
                '"content": "Label this review: {title}\\n{text}"}]}',
                "--map", "label=/choices/0/message/content,tokens=/usage/total_tokens"]
    return ["--url", "http://127.0.0.1:%d/v1/messages" % port, "--method", "POST", "--body",
            '{"model": "claude-haiku", "max_tokens": 50, "messages": [{"role": "user", '
            '"content": "Label this review: {title}\\n{text}"}]}',
            "--map", "label=/content/0/text,tokens=/usage/output_tokens"]


def mysql(uri, sql):
    # mysql://user@host:port/db
    rest = uri[len("mysql://"):]
    user, rest = rest.split("@", 1)
    hostport, db = rest.split("/", 1)
    host, port = hostport.split(":")
    db = db.split("?")[0]
    subprocess.run(["mariadb", "--no-defaults", "-h", host, "-P", port, "-u", user, "--protocol=TCP", db], input=sql, text=True,
                   check=True)
    return db


def one_run(o, style, headers, processes, flags, store_kind, apart=None):
    tmp = tempfile.mkdtemp(prefix="dibs-llm-bench-")
    api, port = start_api(tmp, style, o.tpm, o.latency_ms, headers, o.backlog, apart)
    rows = reviews(o.items)
    try:
        if store_kind == "jsonl":
            path = os.path.join(tmp, "reviews.jsonl")
            with open(path, "w") as f:
                for i, title, text in rows:
                    f.write(json.dumps({"id": i, "title": title, "text": text}) + "\n")
            stores = ["jsonl:" + path]
            outs = [["--out", os.path.join(tmp, "out.jsonl")]]
        else:
            table = "reviews_%d_%s" % (os.getpid(), style)
            db = o.mysql_uri.rsplit("/", 1)[1]
            mysql(o.mysql_uri.rsplit("/", 1)[0] + "/mysql", "CREATE DATABASE IF NOT EXISTS %s;" % db)
            values = ",".join("(%d,'%s','%s')" % (i, t, x) for i, t, x in rows)
            mysql(o.mysql_uri, "DROP TABLE IF EXISTS %s; CREATE TABLE %s (id INT PRIMARY KEY, title VARCHAR(64), text TEXT); "
                               "INSERT INTO %s VALUES %s" % (table, table, table, values))
            store = o.mysql_uri + "?table=" + table
            mapped = request_shape(style, 0)[-1]  # the mapping, its columns typed: dibs init adds them
            typed = ",".join(part + (":INT" if part.startswith("tokens=") else ":TEXT") for part in mapped.split(","))
            subprocess.run([o.dibs, "init", "--store", store, "--source", "text", "--target", "answer", "--new-target",
                            "--map", typed], check=True, stdout=subprocess.DEVNULL)
            stores = [store] * processes
            outs = [[]] * processes
        cmds = [[o.dibs, "enrich", "--store", s, "--no-status-check", "--no-progress"] + out + request_shape(style, port) + flags
                for s, out in zip(stores, outs)]
        start = time.monotonic()
        runs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for c in cmds]
        outputs = [r.communicate(timeout=1800)[0] for r in runs]
        wall = time.monotonic() - start
        stats = json.loads(urllib.request.urlopen("http://127.0.0.1:%d/stats" % port, timeout=10).read())
    finally:
        api.terminate()
        api.wait()
    if not stats.get("first_request_at") or not stats.get("last_answer_at"):
        raise RuntimeError("the API got no request; dibs said:\n" + "\n".join(o[-2000:] for o in outputs))
    span = stats["last_answer_at"] - stats["first_request_at"]
    ideal = o.tpm + o.tpm * span / 60.0
    if apart:  # buckets apart: the share of the one used the most (the one that binds)
        share_of_limit = max(stats[k] / (lim + lim * span / 60.0)
                             for k, lim in (("input_settled", apart[0]), ("output_settled", apart[1])))
    else:
        share_of_limit = stats["tokens_settled"] / ideal
    codes = [r.returncode for r in runs]
    done = sum(int(m) for out in outputs for m in __import__("re").findall(r"summary: completed=(\d+)", out))
    return {"style": style, "headers": headers, "processes": processes, "flags": " ".join(flags), "store": store_kind,
            "items": o.items, "done": done, "exit_codes": codes, "wall_s": round(wall, 1), "span_s": round(span, 1),
            "requests": stats["requests"], "refused_429": stats["refused_429"], "overloaded": stats["overloaded"],
            "share_429": stats["refused_429"] / max(1, stats["requests"]), "tokens": stats["tokens_settled"],
            "share_of_limit": share_of_limit, "apart": apart,
            "refused_at_s": [r[0] if isinstance(r, list) else r for r in stats.get("refused_at", [])][:200], "command": " ".join(cmds[0][:1] + cmds[0][1:])}


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--dibs", required=True)
    a.add_argument("--mysql-uri", help="mysql://user@host:port/db (no table): the 4-process rows")
    a.add_argument("--items", type=int, default=3000)
    a.add_argument("--tpm", type=int, default=150000)
    a.add_argument("--latency-ms", type=float, default=300)
    a.add_argument("--processes", type=int, default=4)
    a.add_argument("--stores", default="jsonl,mariadb", help="which rows: jsonl, mariadb or both")
    a.add_argument("--rows", help="only these rows, by name (openai, anthropic, token-rate, openai-N, anthropic-N, "
                                  "token-rate-N, token-rate-N-apart, anthropic-io, anthropic-io-N: input and output apart); default: all but token-rate-N-apart")
    a.add_argument("--itpm", type=int, default=150000, help="the input tokens a minute of the rows with buckets apart")
    a.add_argument("--otpm", type=int, default=25000, help="their output tokens a minute")
    a.add_argument("--backlog", type=int, default=0, help="the API's listen backlog (default: Python's, 5)")
    a.add_argument("--md")
    a.add_argument("--json")
    o = a.parse_args()
    token_rate = ["--token-rate", "%d/min" % o.tpm]
    apart = (o.itpm, o.otpm)
    named = [("openai", ("openai", True, 1, [], "jsonl")), ("anthropic", ("anthropic", True, 1, [], "jsonl")),
             ("token-rate", ("openai", False, 1, token_rate, "jsonl")),
             # Anthropic's input and output tokens metered apart, each bucket of its own.
             ("anthropic-io", ("anthropic", True, 1, [], "jsonl", apart))]
    if o.mysql_uri:
        n = o.processes
        named += [("openai-%d" % n, ("openai", True, n, [], "mariadb")), ("anthropic-%d" % n, ("anthropic", True, n, [], "mariadb")),
                  ("anthropic-io-%d" % n, ("anthropic", True, n, [], "mariadb", apart)),
                  # A server that states nothing: the token rate held through the store, or (apart) each
                  # process's own, the whole limit each.
                  ("token-rate-%d" % n, ("openai", False, n, token_rate + ["--rate-scope", "store"], "mariadb")),
                  ("token-rate-%d-apart" % n, ("openai", False, n, token_rate, "mariadb"))]
    wanted = o.rows.split(",") if o.rows else [name for name, _ in named if not name.endswith("-apart")]
    plan = [p for name, p in named if name in wanted and p[4] in o.stores.split(",")]
    results = []
    for p in plan:
        results.append(one_run(o, *p))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    lines = ["## An LLM API metering %d tokens a minute (llm_api.py, %d ms a completion + 2 ms a token)" % (o.tpm, o.latency_ms),
             "", "%d reviews, max_tokens 50, default flags but the request shape. Share of the limit: tokens settled / "
             "(a full bucket + the refill over the run's span). Reproduce: `BENCH_ONLY=llm make bench` "
             "(bench/llm_tokens.py)." % o.items, "",
             "| API | headers | processes | flags | store | done | span | requests | 429s | share 429 | share of limit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append("| %s | %s | %d | %s | %s | %d/%d | %.0f s | %d | %d | %.2f%% | %.3f |" % (
            r["style"] + (" (input %d, output %d a minute, apart)" % tuple(r["apart"]) if r["apart"] else ""), "yes" if r["headers"] else "none", r["processes"], r["flags"] or "(defaults)", r["store"],
            r["done"], r["items"], r["span_s"], r["requests"], r["refused_429"], 100 * r["share_429"], r["share_of_limit"]))
    text = "\n".join(lines) + "\n"
    print(text)
    if o.md:
        open(o.md, "w").write(text)
    if o.json:
        json.dump(results, open(o.json, "w"), indent=1)
    bad = [r for r in results if r["done"] != r["items"]]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
