#!/usr/bin/env python3
"""Runs the README's quick starts as a user would, against the test servers.

Each quick start in README.md is a ```sh block right after a marker line
`<!-- quickstart: NAME -->`. This script prepares the user's own data for NAME (a collection or
table dibs did not create, with the user's own field names), starts `dibs stub` as the API, then
runs the block's commands with bash (`set -e`: every command must succeed) with `dibs` on PATH,
changing only where things are:

  localhost:27017    -> the MongoDB-wire test server      127.0.0.1:3306 -> the test MariaDB
  http://ip-api.com  -> the stub on its free port

and checks the store afterwards: every document has its answer, none failed, none leased.

  run_quickstarts.py --readme README.md --bin BUILD/bin --servers BUILD/test-servers NAME
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from marked_block import marked_block

ADDRESSES = ["8.8.8.8", "1.1.1.1", "9.9.9.9", "208.67.222.222", "64.6.64.6"]


def start_stub(bin_dir):
    stub = subprocess.Popen([os.path.join(bin_dir, "dibs"), "stub", "--port", "0"], stdout=subprocess.PIPE, text=True)
    line = stub.stdout.readline()
    m = re.search(r"listening on (http://[0-9.]+:\d+)", line)
    if not m:
        stub.kill()
        sys.exit(f"dibs stub did not say where it listens: {line!r}")
    return stub, m.group(1)


def server_uri(servers, name):
    return open(os.path.join(servers, name), encoding="utf-8").read().strip()


def host_port(uri):
    m = re.search(r"@?([0-9.]+|localhost):(\d+)", uri.split("//", 1)[1])
    return f"{m.group(1)}:{m.group(2)}"


# ---- MongoDB: the user's collection app.messages, documents with originatingIp ----------------
def mongo_prepare(uri):
    import pymongo
    client = pymongo.MongoClient(uri)
    coll = client["app"]["messages"]
    coll.drop()
    coll.insert_many([{"_id": i, "originatingIp": ip, "subject": "hello"} for i, ip in enumerate(ADDRESSES)])
    return client


def mongo_check(client):
    docs = list(client["app"]["messages"].find())
    bad = [d for d in docs if not isinstance(d.get("location"), dict) or d.get("_dibs") not in (None,)]
    if len(docs) != len(ADDRESSES) or bad:
        sys.exit(f"after the quick start the collection holds {len(docs)} documents; unfinished: {bad}")


# ---- MySQL: the user's table shop.orders, rows with client_ip, no dibs columns ------------------
def mysql(uri, sql):
    host, port = host_port(uri).split(":")
    out = subprocess.run(["mariadb", "--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-uroot", "-N", "-e", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout


def mysql_prepare(uri):
    rows = ",".join(f"('{ip}', {i * 10})" for i, ip in enumerate(ADDRESSES))
    mysql(uri, "DROP DATABASE IF EXISTS shop; CREATE DATABASE shop; "
               "CREATE TABLE shop.orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, client_ip VARCHAR(45) NOT NULL, "
               "total_cents INT NOT NULL, geo JSON NULL); "
               f"INSERT INTO shop.orders (client_ip, total_cents) VALUES {rows};")
    return uri


def mysql_check(uri):
    left = mysql(uri, "SELECT COUNT(*) FROM shop.orders WHERE geo IS NULL OR JSON_VALUE(geo, '$.status') IS NULL").strip()
    total = mysql(uri, "SELECT COUNT(*) FROM shop.orders").strip()
    if left != "0" or total != str(len(ADDRESSES)):
        sys.exit(f"after the quick start shop.orders holds {total} rows, {left} without their answer")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--readme", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--servers", required=True)
    ap.add_argument("name", choices=["mongodb", "mysql"])
    a = ap.parse_args()

    script = marked_block(a.readme, "quickstart", a.name)
    if a.name == "mongodb":
        uri = server_uri(a.servers, "mongodb_uri")
        state = mongo_prepare(uri)
        script = script.replace("localhost:27017", host_port(uri))
    else:
        uri = server_uri(a.servers, "mysql_uri")
        state = mysql_prepare(uri)
        script = script.replace("127.0.0.1:3306", host_port(uri)).replace("localhost:3306", host_port(uri))

    stub, api = start_stub(a.bin)
    try:
        script = script.replace("http://ip-api.com", api)
        env = dict(os.environ, PATH=os.path.abspath(a.bin) + os.pathsep + os.environ.get("PATH", ""))
        with tempfile.TemporaryDirectory() as cwd:
            print(script, flush=True)
            run = subprocess.run(["bash", "-e", "-x", "-c", script], cwd=cwd, env=env)
        if run.returncode != 0:
            sys.exit(f"the quick start '{a.name}' failed: a command exited {run.returncode}")
        if a.name == "mongodb":
            mongo_check(state)
        else:
            mysql_check(state)
    finally:
        stub.terminate()
        stub.wait()
    print(f"quick start '{a.name}': every command succeeded and every item has its answer")


if __name__ == "__main__":
    main()
