#!/usr/bin/env python3
"""Runs docs/embeddings.md's walkthrough as a user would, against tests/servers/embeddings_api.py
(an OpenAI-compatible /v1/embeddings on loopback whose vectors are a hash of each text, answering
in an order of its own) and, for the table, the test PostgreSQL. Each step is the ```sh block after
`<!-- embed-walkthrough: NAME -->`, run with bash (`set -e`) and `dibs` on PATH, changing only where
things are (the API's address, the database's) and the key (the one the test API checks).

Checks what the doc promises: every row's vector its own text's (none on another row), the rows
packed many a request, the key sent.

  run_embed_walkthrough.py --doc docs/embeddings.md --bin BUILD/bin --servers BUILD/test-servers NAME
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

from marked_block import marked_block
from walkthrough_rig import psql as rig_psql, start_server

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "servers", "embeddings_api.py")
KEY = "sk-test-embeddings"
ROWS = 1500


def texts():
    return ["Passage %d: \"Caf\u00e9\" notes on kettles, line %d" % (i, i * 7919 % 10007) for i in range(ROWS)]


def fail(why):
    sys.exit("embed walkthrough: " + why)


def start_api(workdir):
    return start_server(API, workdir, ["--shuffle", "--key", KEY], fail)


def psql(uri, sql):
    return rig_psql(uri, sql, fail)


def checked(path, text_path, vector_path):
    out = subprocess.run([sys.executable, API, "--check", path, text_path, vector_path], capture_output=True, text=True)
    print(out.stdout.strip(), flush=True)
    if out.stdout.strip() != "right=%d wrong=0 missing=0" % ROWS:
        fail("not every row holds its own text's vector: " + out.stdout.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--servers", required=True)
    ap.add_argument("name", choices=["file", "table"])
    a = ap.parse_args()
    script = marked_block(a.doc, "embed-walkthrough", a.name)
    rows = texts()
    with tempfile.TemporaryDirectory() as apidir, tempfile.TemporaryDirectory() as cwd:
        api, base = start_api(apidir)
        try:
            script = script.replace("sk-...", KEY).replace("https://api.openai.com", base)
            pg_uri = None
            if a.name == "file":
                with open(os.path.join(cwd, "passages.jsonl"), "w") as f:
                    for i, t in enumerate(rows):
                        f.write(json.dumps({"id": i, "text": t}) + "\n")
            else:
                pg_uri = open(os.path.join(a.servers, "postgres_uri")).read().strip()
                values = ", ".join("('%s')" % t.replace("'", "''") for t in rows)
                psql(pg_uri, "DROP TABLE IF EXISTS passages; CREATE TABLE passages (id BIGSERIAL PRIMARY KEY, body TEXT); "
                             f"INSERT INTO passages (body) VALUES {values};")
                script = script.replace("postgresql://app@127.0.0.1:5432/kb", pg_uri.split("?")[0])
            env = dict(os.environ, PATH=os.path.abspath(a.bin) + os.pathsep + os.environ.get("PATH", ""))
            print(script, flush=True)
            run = subprocess.run(["bash", "-e", "-x", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
            print(run.stdout + run.stderr, flush=True)
            if run.returncode != 0:
                fail(f"'{a.name}' exited {run.returncode}")
            if "completed=%d failed=0" % ROWS not in run.stdout + run.stderr:
                fail("not every row done")
            stats = json.load(urllib.request.urlopen(base + "/stats"))
            if stats["requests"] * 64 > stats["inputs"]:
                fail(f"{stats['requests']} requests for {stats['inputs']} inputs: fewer than 64 rows a request")
            if a.name == "file":
                checked(os.path.join(cwd, "passages.out.jsonl"), "text", "vector")
            else:
                export = os.path.join(cwd, "rows.jsonl")
                with open(export, "w") as f:
                    f.write(psql(pg_uri, "SELECT json_build_object('body', body, 'embedding', embedding) FROM passages"))
                checked(export, "body", "embedding")
                types = psql(pg_uri, "SELECT data_type FROM information_schema.columns WHERE table_name = 'passages' "
                                     "AND column_name = 'embedding'").strip()
                if types != "jsonb":
                    fail(f"dibs init made the embedding column {types}")
        finally:
            api.terminate()
            api.wait()
    print(f"embed walkthrough '{a.name}': every command behaved as the doc says")


if __name__ == "__main__":
    main()
