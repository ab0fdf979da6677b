#!/usr/bin/env python3
"""Runs the API shapes of docs/http.md (and the README's) as a user would, against a real API.

Each shape is a ```sh block right after a marker line `<!-- api-shape: NAME -->`. This script
starts tests/servers/shaped_api.py (Python's http.server) with what the shape needs (a key it
checks, a quota), prepares the user's data (a JSON Lines file places.jsonl; for map-sql a MariaDB
table shop.orders with its own typed columns), runs the block with bash (`set -e`) with `dibs` on
PATH, changing only where things are:

  https://api.example.com -> the test API       127.0.0.1:3306 -> the test MariaDB

and checks what the shape promises (every item answered, the key sent, the body's values, the
mapped columns typed, no 429, the budget's calls and no more).

  run_api_shapes.py --doc docs/http.md --bin BUILD/bin --servers BUILD/test-servers NAME
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

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "servers", "shaped_api.py")
IPS = ["8.8.8.8", "1.1.1.1", "9.9.9.9", "208.67.222.222", "64.6.64.6"]


def start_api(workdir, options):
    proc = subprocess.Popen([sys.executable, API, workdir] + options)
    port_file = os.path.join(workdir, "api.port")
    for _ in range(300):
        if os.path.exists(port_file):
            return proc, "http://127.0.0.1:" + open(port_file).read().strip()
        time.sleep(0.05)
    proc.kill()
    sys.exit("shaped_api.py did not start")


def requests_of(workdir):
    return [json.loads(line) for line in open(os.path.join(workdir, "requests.jsonl")) if '"/stats"' not in line]


def fail(why):
    sys.exit("api shape: " + why)


def write_places(cwd, n, extra=lambda i: {}):
    with open(os.path.join(cwd, "places.jsonl"), "w") as f:
        for i in range(n):
            f.write(json.dumps(dict({"ip": f"10.0.0.{i}"}, **extra(i))) + "\n")


def answered_lines(cwd):
    lines = [json.loads(line) for line in open(os.path.join(cwd, "places.out.jsonl"))]
    return [line for line in lines if isinstance(line.get("location"), dict)]


def mysql(uri, sql):
    host, port = re.search(r"@?([0-9.]+|localhost):(\d+)", uri.split("//", 1)[1]).groups()
    out = subprocess.run(["mariadb", "--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-uroot", "-N", "-e", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout


def psql(uri, sql):
    out = subprocess.run(["psql", uri, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql], check=True, capture_output=True, text=True)
    return out.stdout


REVIEWS = [("Great kettle", "Boils fast, \"quiet\" and caf\u00e9-grade", "positive"),
           ("Broke in a week", "Handle cracked.\nReturned it.", "negative"),
           ("Good value", "Does the job", "positive")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--servers", required=True)
    ap.add_argument("name", choices=["header-key", "post-body", "map-sql", "sql-columns", "llm-columns", "quota", "budget"])
    a = ap.parse_args()
    script = marked_block(a.doc, "api-shape", a.name)
    options = {"header-key": ["--key", "Authorization:Bearer tok-live-123"],
               "quota": ["--quota", "20", "--window", "1", "--quota-style", "github"]}.get(a.name, [])
    with tempfile.TemporaryDirectory() as apidir, tempfile.TemporaryDirectory() as cwd:
        api, base = start_api(apidir, options)
        try:
            mysql_uri = None
            if a.name == "post-body":
                write_places(cwd, 3, lambda i: {"name": f"caf\u00e9 \"{i}\"", "visits": i * 10, "where": {"floor": i}})
            elif a.name == "quota":
                write_places(cwd, 60)
            elif a.name == "sql-columns":
                mysql_uri = open(os.path.join(a.servers, "mysql_uri")).read().strip()
                mysql(mysql_uri, "DROP DATABASE IF EXISTS shop; CREATE DATABASE shop; CREATE TABLE shop.addresses "
                                 "(id BIGINT AUTO_INCREMENT PRIMARY KEY, street VARCHAR(80), city VARCHAR(40), zip INT, geo JSON NULL); "
                                 "INSERT INTO shop.addresses (street, city, zip) VALUES ('Bahnhofstrasse 1', 'Z\u00fcrich', 8001), "
                                 "('Rue du \"Lac\" 2', 'Gen\u00e8ve', 1201), ('Marktgasse 3', 'Bern', 3011);")
                hp = re.search(r"@?([0-9.]+|localhost):(\d+)", mysql_uri.split("//", 1)[1])
                script = script.replace("127.0.0.1:3306", f"{hp.group(1)}:{hp.group(2)}")
            elif a.name == "map-sql":
                mysql_uri = open(os.path.join(a.servers, "mysql_uri")).read().strip()
                rows = ",".join(f"('{ip}')" for ip in IPS)
                # The mapped columns are dibs init's to add (--map with types).
                mysql(mysql_uri, "DROP DATABASE IF EXISTS shop; CREATE DATABASE shop; CREATE TABLE shop.orders "
                                 "(id BIGINT AUTO_INCREMENT PRIMARY KEY, client_ip VARCHAR(45) NOT NULL, geo JSON NULL); "
                                 f"INSERT INTO shop.orders (client_ip) VALUES {rows};")
                hp = re.search(r"@?([0-9.]+|localhost):(\d+)", mysql_uri.split("//", 1)[1])
                script = script.replace("127.0.0.1:3306", f"{hp.group(1)}:{hp.group(2)}")
            elif a.name == "llm-columns":
                pg_uri = open(os.path.join(a.servers, "postgres_uri")).read().strip()
                values = ", ".join("(%s, %s)" % tuple("'" + v.replace("'", "''") + "'" for v in r[:2]) for r in REVIEWS)
                psql(pg_uri, "DROP TABLE IF EXISTS reviews; CREATE TABLE reviews (id BIGSERIAL PRIMARY KEY, title TEXT, "
                             f"description TEXT); INSERT INTO reviews (title, description) VALUES {values};")
                script = script.replace("postgresql://app@127.0.0.1:5432/shop", pg_uri.split("?")[0])
            else:
                write_places(cwd, 5)
            script = script.replace("https://api.example.com", base)
            env = dict(os.environ, PATH=os.path.abspath(a.bin) + os.pathsep + os.environ.get("PATH", ""))
            print(script, flush=True)
            run = subprocess.run(["bash", "-e", "-x", "-c", script], cwd=cwd, env=env)
            if run.returncode != 0:
                fail(f"'{a.name}' failed: a command exited {run.returncode}")
            got = requests_of(apidir)
            if a.name == "header-key":
                if len(answered_lines(cwd)) != 5 or any(dict(r["headers"]).get("Authorization") != "Bearer tok-live-123" for r in got):
                    fail("not every item was answered with the key sent")
            elif a.name == "post-body":
                lines = answered_lines(cwd)
                if len(lines) != 3 or any(l["location"]["received"] != {"name": l["name"], "visits": l["visits"], "where": l["where"]}
                                          for l in lines):
                    fail("the API did not receive each item's fields as JSON values")
            elif a.name == "map-sql":
                out = mysql(mysql_uri, "SELECT COUNT(*) FROM shop.orders WHERE country = 'Freedonia' AND lat = 48.5 "
                                       "AND lon = -2.25 AND geo IS NOT NULL").strip()
                if out != str(len(IPS)):
                    fail(f"{out} of {len(IPS)} rows have their mapped columns")
                types = mysql(mysql_uri, "SELECT GROUP_CONCAT(CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE) ORDER BY COLUMN_NAME) FROM "
                                         "information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'orders' "
                                         "AND COLUMN_NAME IN ('country', 'lat', 'lon')").strip()
                if types != "country varchar(64),lat double,lon double":
                    fail(f"dibs init made the mapped columns {types}")
            elif a.name == "sql-columns":
                want = [{"street": "Bahnhofstrasse 1", "city": "Z\u00fcrich", "zip": 8001},
                        {"street": "Rue du \"Lac\" 2", "city": "Gen\u00e8ve", "zip": 1201},
                        {"street": "Marktgasse 3", "city": "Bern", "zip": 3011}]
                import base64
                bodies = [json.loads(base64.b64decode(r["body_b64"])) for r in got]
                if sorted(bodies, key=lambda b: b["zip"]) != sorted(want, key=lambda b: b["zip"]):
                    fail(f"the API received {bodies}, not each row's three columns with their types")
                done = mysql(mysql_uri, "SELECT COUNT(*) FROM shop.addresses WHERE geo IS NOT NULL").strip()
                if done != "3":
                    fail(f"{done} of 3 rows were answered")
            elif a.name == "llm-columns":
                import base64
                for r in got:
                    if dict(r["headers"]).get("Authorization") != "Bearer sk-...":
                        fail("a request went without the key from the environment")
                prompts = sorted(json.loads(base64.b64decode(r["body_b64"]))["messages"][0]["content"] for r in got)
                want = sorted("Is this review positive or negative? One word.\nTitle: %s\n%s" % (t, d) for t, d, _ in REVIEWS)
                if prompts != want:
                    fail(f"the API received the prompts {prompts}, not each row's title and description")
                labels = psql(pg_uri, "SELECT string_agg(title || '=' || label || '=' || (answer->>'label'), ',' ORDER BY id) "
                                      "FROM reviews").strip()
                expected = ",".join(f"{t}={l}={l}" for t, _, l in REVIEWS)
                if labels != expected:
                    fail(f"the rows' labels are {labels}, not {expected}")
                # The tokens each answer's usage said (shaped_api.py counts the prompt's words, plus one).
                tokens = psql(pg_uri, "SELECT string_agg(tokens::text, ',' ORDER BY id) FROM reviews").strip()
                want_tokens = ",".join(str(len(("Is this review positive or negative? One word.\nTitle: %s\n%s" % (t, d)).split()) + 1)
                                       for t, d, _ in REVIEWS)
                if tokens != want_tokens:
                    fail(f"the rows' tokens are {tokens}, not {want_tokens}")
            elif a.name == "quota":
                stats = json.load(urllib.request.urlopen(base + "/stats"))
                if len(answered_lines(cwd)) != 60 or stats["refused"] != 0:
                    fail(f"the quota was not honoured: {stats}")
            elif a.name == "budget":
                if len(got) != 3:
                    fail(f"--max-calls 3 made {len(got)} calls")
        finally:
            api.terminate()
            api.wait()
    print(f"api shape '{a.name}': every command behaved as the doc says")


if __name__ == "__main__":
    main()
