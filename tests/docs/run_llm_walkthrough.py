#!/usr/bin/env python3
"""Runs docs/llm.md's walkthrough as a user would, against tests/servers/llm_api.py (an OpenAI- or
Anthropic-compatible API on loopback metering 6,000 tokens a minute, so the bucket empties and
refills during the run) and, for the table, the test PostgreSQL. Each step is the ```sh block after
`<!-- llm-walkthrough: NAME -->`, run with bash (`set -e`) and `dibs` on PATH, changing only where
things are (the API's address, the database's) and the key (the one the test API checks).

Checks what the doc promises: every row labelled from inside the model's JSON, the key sent, no
call answered 429, each row's tokens kept, the one row the model refuses failed with its reason
and not written, and the cost the summary states equal to the usage times the prices.

  run_llm_walkthrough.py --doc docs/llm.md --bin BUILD/bin --servers BUILD/test-servers NAME
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

from marked_block import marked_block
from walkthrough_rig import psql as rig_psql, start_server

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "servers", "llm_api.py")
KEY = "sk-test-walkthrough"
# 40 reviews of 40-80 words (about 60-110 tokens each with the prompt, plus the 60-token
# max_tokens reserved): more than the 6,000 tokens a minute the test API allows.
WORDS = "good bad kettle boils fast quiet handle cracked returned value works broke cheap sturdy".split()


def reviews():
    out = []
    for i in range(40):
        text = " ".join(WORDS[(i * 7 + w * 3) % len(WORDS)] for w in range(40 + (i * 11) % 40))
        title = "Caf\u00e9 \"kettle\" %d" % i
        if i == 13:
            text = "REFUSE " + text  # the test API's model refuses this one
        out.append((i, title, text))
    return out


def fail(why):
    sys.exit("llm walkthrough: " + why)


def start_api(workdir, style):
    return start_server(API, workdir, ["--style", style, "--tpm", "6000", "--latency-ms", "50", "--latency-per-token-ms", "1", "--key", KEY], fail)


def psql(uri, sql):
    return rig_psql(uri, sql, fail)


def check_cost(output, price_in, price_out, tokens_settled):
    m = re.search(r"(\d+) tokens used \((\d+) input, (\d+) output\), costing ([0-9.eE+-]+) at --price", output)
    if not m:
        fail("the summary states no tokens and cost")
    total, tin, tout, cost = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4))
    if total != tokens_settled:
        fail(f"the summary says {total} tokens, the API settled {tokens_settled}")
    want = tin * price_in + tout * price_out
    if abs(cost - want) > 0.005 * want:  # the bar, however small the run
        fail(f"the summary's cost {cost} is not {tin} x {price_in} + {tout} x {price_out} = {want}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--servers", required=True)
    ap.add_argument("name", choices=["openai-file", "anthropic-table"])
    a = ap.parse_args()
    script = marked_block(a.doc, "llm-walkthrough", a.name)
    style = "openai" if a.name == "openai-file" else "anthropic"
    rows = reviews()
    with tempfile.TemporaryDirectory() as apidir, tempfile.TemporaryDirectory() as cwd:
        api, base = start_api(apidir, style)
        try:
            pg_uri = None
            if a.name == "openai-file":
                with open(os.path.join(cwd, "reviews.jsonl"), "w") as f:
                    for i, title, text in rows:
                        f.write(json.dumps({"id": i, "title": title, "text": text}) + "\n")
                script = script.replace("sk-...", KEY).replace("https://api.openai.com", base)
            else:
                pg_uri = open(os.path.join(a.servers, "postgres_uri")).read().strip()
                values = ", ".join("('%s', '%s')" % (t.replace("'", "''"), d.replace("'", "''")) for _, t, d in rows)
                psql(pg_uri, "DROP TABLE IF EXISTS reviews; CREATE TABLE reviews (id BIGSERIAL PRIMARY KEY, title TEXT, "
                             f"description TEXT); INSERT INTO reviews (title, description) VALUES {values};")
                script = (script.replace("sk-ant-...", KEY).replace("https://api.anthropic.com", base)
                          .replace("postgresql://app@127.0.0.1:5432/shop", pg_uri.split("?")[0]))
            env = dict(os.environ, PATH=os.path.abspath(a.bin) + os.pathsep + os.environ.get("PATH", ""))
            print(script, flush=True)
            run = subprocess.run(["bash", "-e", "-x", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
            print(run.stdout + run.stderr, flush=True)
            if run.returncode != 1:  # one row refused: a failed item, exit code 1
                fail(f"'{a.name}' exited {run.returncode}, not 1 (one row refused)")
            stats = json.load(urllib.request.urlopen(base + "/stats"))
            if stats["refused_429"] != 0:
                fail(f"{stats['refused_429']} calls were answered 429")
            if stats["requests"] != len(rows):
                fail(f"{stats['requests']} calls for {len(rows)} rows")
            if stats["tokens_settled"] <= 6000:
                fail("the run never needed the bucket to refill: the walkthrough shows nothing of the limit")
            output = run.stdout + run.stderr
            if "completed=39 failed=1" not in output:
                fail("not 39 rows done and the refused one failed")
            if a.name == "openai-file":
                check_cost(output, 0.15e-6, 0.60e-6, stats["tokens_settled"])
                lines = [json.loads(l) for l in open(os.path.join(cwd, "reviews.out.jsonl"))]
                labelled = [l for l in lines if isinstance(l.get("label"), str) and isinstance(l.get("tokens"), int)]
                if len(labelled) != 39 or any(l["label"] not in ("positive", "negative", "neutral") for l in labelled):
                    fail(f"{len(labelled)} of 39 lines labelled from the model's JSON")
                refused = [l for l in lines if l["id"] == 13]
                if not refused or "the model refused" not in json.dumps(refused[0]) or "label" in refused[0]:
                    fail(f"the refused row is {refused}")
            else:
                check_cost(output, 1e-6, 5e-6, stats["tokens_settled"])
                got = psql(pg_uri, "SELECT count(*) FROM reviews WHERE label IN ('positive','negative','neutral') AND "
                                   "input_tokens > 0 AND output_tokens > 0").strip()
                if got != "39":
                    fail(f"{got} of 39 rows have their label and tokens in their columns")
                types = psql(pg_uri, "SELECT string_agg(column_name || ' ' || data_type, ',' ORDER BY column_name) FROM "
                                     "information_schema.columns WHERE table_name = 'reviews' AND column_name IN "
                                     "('label', 'input_tokens', 'output_tokens')").strip()
                if types != "input_tokens integer,label text,output_tokens integer":
                    fail(f"dibs init made the mapped columns {types}")
                if psql(pg_uri, "SELECT count(*) FROM reviews WHERE label IS NULL AND id = 14").strip() != "1":
                    fail("the refused row has a label")
        finally:
            api.terminate()
            api.wait()
    print(f"llm walkthrough '{a.name}': every command behaved as the doc says")


if __name__ == "__main__":
    main()
