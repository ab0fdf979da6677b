#!/usr/bin/python3
"""The classic Python SKIP LOCKED consumer, as the recipe is usually written, for a side-by-side
drain rate with dibs: N processes, each looping over

  candidate ids by a random first character of a payload column (LIMIT batch, no transaction)
  START TRANSACTION; SELECT ... WHERE id IN (...) FOR UPDATE SKIP LOCKED
  UPDATE the claimed rows' lease; COMMIT
  (process each row: nothing, or GET the API and keep its answer)
  DELETE the rows; COMMIT

until the table is empty. Prints one line: rows=N seconds=S rows_per_s=R cpu_s=C.

  mysql_reference.py --host 127.0.0.1 --port P --user root --db dibs_bench --table T
                     [--processes 10] [--batch 100] [--url http://127.0.0.1:PORT/json/]
"""
import argparse
import multiprocessing
import os
import random
import urllib.request

import MySQLdb

import timed_workers


def worker(args, wid, counter):
    db = MySQLdb.connect(host=args.host, port=args.port, user=args.user, passwd=args.password, db=args.db)
    db.autocommit(True)
    cur = db.cursor()
    opener = urllib.request.build_opener()
    done = 0
    while True:
        first = random.choice("123456789")
        cur.execute("SELECT id FROM `%s` WHERE originatingIp LIKE %%s AND dibs_lock_token IS NULL LIMIT %d"
                    % (args.table, args.batch), (first + "%",))
        ids = [r[0] for r in cur.fetchall()]
        if not ids:
            # Nothing under that first character: stop only when no unclaimed row is left.
            cur.execute("SELECT COUNT(*) FROM `%s` WHERE dibs_lock_token IS NULL" % args.table)
            if cur.fetchone()[0] == 0:
                break
            continue
        id_list = ",".join(str(i) for i in ids)
        cur.execute("START TRANSACTION")
        cur.execute("SELECT id, originatingIp FROM `%s` WHERE id IN (%s) AND dibs_lock_token IS NULL FOR UPDATE SKIP LOCKED"
                    % (args.table, id_list))
        rows = cur.fetchall()
        if not rows:
            cur.execute("COMMIT")
            continue
        claimed = ",".join(str(r[0]) for r in rows)
        cur.execute("UPDATE `%s` SET dibs_lock_by = %%s, dibs_lock_token = %%s WHERE id IN (%s)" % (args.table, claimed),
                    ("py-%d" % wid, random.getrandbits(62)))
        cur.execute("COMMIT")
        if args.url:
            for _, ip in rows:
                with opener.open(args.url + ip, timeout=30) as r:
                    r.read()
        cur.execute("START TRANSACTION")
        cur.execute("DELETE FROM `%s` WHERE id IN (%s)" % (args.table, claimed))
        cur.execute("COMMIT")
        done += len(rows)
    with counter.get_lock():
        counter.value += done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", default="root")
    ap.add_argument("--password", default="")
    ap.add_argument("--db", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--processes", type=int, default=10)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--url", default="")
    args = ap.parse_args()
    counter = multiprocessing.Value("q", 0)
    seconds, cpu = timed_workers.run(
        [multiprocessing.Process(target=worker, args=(args, i, counter)) for i in range(args.processes)])
    print("rows=%d seconds=%.3f rows_per_s=%.1f cpu_s=%.3f" % (counter.value, seconds, counter.value / seconds, cpu))


if __name__ == "__main__":
    main()
