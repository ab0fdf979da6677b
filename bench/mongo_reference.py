#!/usr/bin/python3
"""The one-at-a-time loop that dibs replaces, as it is usually written with pymongo and an HTTP
library: N threads, each looping

  update_one({location: null, lock absent or expired}, {$set: {lock: {by, until, token}}})
  find_one({lock.token: token})
  GET the API for the document's originatingIp
  update_one({_id, lock.token: token}, {$set: {location: answer}, $unset: {lock: ""}})

until nothing is claimable. Prints: docs=N seconds=S docs_per_s=R cpu_s=C.
(Debian's python3-pymongo and python3-requests, one requests.Session per thread.)

  mongo_reference.py --uri mongodb://127.0.0.1:PORT/ --db D --collection C --url http://127.0.0.1:P/json/
                     [--threads 10] [--lease 60]
"""
import argparse
import datetime
import random
import threading

import requests

import pymongo

import timed_workers


def worker(args, coll, wid, totals, lock):
    session = requests.Session()  # keep-alive, as a careful loop would
    done = 0
    while True:
        now = datetime.datetime.utcnow()
        token = random.getrandbits(62)
        r = coll.update_one(
            {"location": None, "$or": [{"lock": {"$exists": False}}, {"lock.until": {"$lt": now}}]},
            {"$set": {"lock": {"by": "py-%d" % wid, "until": now + datetime.timedelta(seconds=args.lease),
                               "token": token}}})
        if r.matched_count == 0:
            break
        doc = coll.find_one({"lock.token": token})
        if doc is None:
            continue
        resp = session.get(args.url + doc["originatingIp"], timeout=30)
        resp.raise_for_status()
        answer = resp.json()
        w = coll.update_one({"_id": doc["_id"], "lock.token": token},
                            {"$set": {"location": answer}, "$unset": {"lock": ""}})
        done += w.modified_count
    with lock:
        totals[0] += done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--collection", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--threads", type=int, default=10)
    ap.add_argument("--lease", type=int, default=60)
    args = ap.parse_args()
    coll = pymongo.MongoClient(args.uri, maxPoolSize=args.threads + 2)[args.db][args.collection]
    totals, lock = [0], threading.Lock()
    seconds, cpu = timed_workers.run(
        [threading.Thread(target=worker, args=(args, coll, i, totals, lock)) for i in range(args.threads)])
    print("docs=%d seconds=%.3f docs_per_s=%.1f cpu_s=%.3f" % (totals[0], seconds, totals[0] / seconds, cpu))


if __name__ == "__main__":
    main()
