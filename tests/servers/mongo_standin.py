#!/usr/bin/python3
"""A MongoDB-wire stand-in for tests: Debian's python3-mockupdb speaks the wire protocol,
python3-mongomock gives MongoDB's query and update semantics. Every command is handled under one
lock (mockupdb serializes its handlers), and counted by name so benchmarks can report round trips.

It is test infrastructure, never the product's default. It can't show change streams, TTL expiry,
real concurrency inside the server, or transactions; against a real mongod (MONGODB_URI) the same
tests run unchanged.

Extra commands: {dibsCounts: 1} answers {counts: {name: n}}; {dibsResetCounts: 1} zeroes them.
The write log, for the chaos driver: {dibsWatch: <collection>, field: F, lock: L} records, for
each document of that collection an update touches: every update after which F is set ("done")
or L.failed exists ("fail"), whatever the values (a second write with the same answer included),
and every new lease token ("claim"); and every delete. Each entry holds the lease the document
had just before (held_by, held_token, held_until), the lease the update's filter named
(filter_by, filter_token: the writer's own lease, as the fenced writes carry it; whether the
filter checked the lease's time, filter_checks_until; whether it asked for the lease's attempts
to be at least some count, filter_exhausted: a claim failing a document at --max-attempts), the lock
document of <collection>.lock at that moment (lock_by, lock_token, lock_until: the
lock-collection strategy's lease), whether each lease had run out (held_expired, lock_expired)
and the server's time. {dibsWrites: <collection>} answers {writes: [...]}; {dibsForget:
<collection>, id: X} drops the entries of one document (the checker's self-test rewrites
history with it).
--clock-skew-s N makes the server's clock (hello's localTime) run N seconds ahead of this machine's,
so tests can show that leases follow the server's clock, not the client's.

Indexes: createIndexes keeps each spec as sent (mongomock drops partial filters and TTLs), so
listIndexes answers with it, and an index of an existing name with other options is refused with
code 85 (IndexOptionsConflict), as MongoDB does; dropIndexes removes one by name.

Test-only stand-ins for what mongomock lacks (it has no collection validators):
{dibsRefuse: <collection>, when: <query>, code: C, errmsg: M} makes every update statement whose
result would match <query> fail with the write error {code: C (default 121,
DocumentValidationFailure), errmsg: M}, writing nothing, as a $jsonSchema validator would;
{dibsRefuse: <collection>} with no `when` lifts it. Only the update command checks it (not
findAndModify or insert), and the query is checked on the updated document, not a real schema.
Every command's name, $readPreference and writeConcern are recorded: {dibsCommandLog: 1} answers
{commands: [{name, readPreference, writeConcern}]} (the last 20,000), {dibsResetCommandLog: 1}
empties it. --replica-set NAME answers hello as the primary of a one-member replica set NAME, so a
URI with replicaSet=NAME sees a replica set (and its read preference is sent to the server).
{dibsHangUp: APP, commands: [NAME, ...], n: N} closes the connection of the next N requests of
each named command sent on a connection whose handshake named the application APP (appname in the
URI), handshakes aside, as a reset link would; it answers {pending: {NAME: left}} as it was
before, and n: 0 lifts it. With after: true the command is carried out first and only its answer is
lost, as when a link breaks while the reply is on its way (the write landed; the client can't know). {dibsDelay: NAME, ms: N} answers every NAME command N ms late (0 lifts
it), as a busy server would.
{dibsStepDown: MS, as: "command" | "writeError"} plays a primary stepping down for the next MS
milliseconds (0 lifts it): every write (insert, update, delete, findAndModify) is answered
NotWritablePrimary (10107) without being carried out -- as a command error, or with as:
"writeError" as one write error per statement (as a bulk write interrupted by a stepdown reports
it) -- and every read (find, aggregate, count) NotPrimaryNoSecondaryOk (13435); it answers
{stepDowns: n}, the writes and reads so answered since the start. hello still names this server
the primary (no election here): the driver's own retry meets the same answer within the window.

  mongo_standin.py --port 0 --port-file PATH [--clock-skew-s N] [--replica-set NAME]
"""
import argparse
import collections
import datetime
import os
import signal
import sys
import threading
import time

from mockupdb import MockupDB
import mongomock
from pymongo import ReturnDocument

from mongomock.filtering import filter_applies
import mongomock_id_index
from standin_filters import expired, filter_value, get_path, requires_at_least

mongomock_id_index.install()

client = mongomock.MongoClient()
counts = collections.Counter()
connection_ids = [0]
clock_skew = [datetime.timedelta(0)]


def now():
    return datetime.datetime.utcnow() + clock_skew[0]


def error(code, msg):
    return {"ok": 0, "code": code, "errmsg": msg}


replica_set = {}  # with --replica-set: {"setName": NAME, "hosts": ["127.0.0.1:PORT"], ...}


def hello(cmd, db):
    connection_ids[0] += 1
    reply = {"ok": 1, "ismaster": True, "isWritablePrimary": True, "helloOk": True,
             "maxWireVersion": 13, "minWireVersion": 0, "maxBsonObjectSize": 16 * 1024 * 1024,
             "maxMessageSizeBytes": 48000000, "maxWriteBatchSize": 100000, "localTime": now(),
             "connectionId": connection_ids[0]}
    reply.update(replica_set)
    return reply


def sort_spec(sort):
    return list(sort.items()) if sort else None


def find(cmd, db):
    coll = client[db][cmd["find"]]
    limit = abs(int(cmd.get("limit", 0) or 0))
    cursor = coll.find(cmd.get("filter") or {}, cmd.get("projection") or None)
    if cmd.get("sort"):
        cursor = cursor.sort(sort_spec(cmd["sort"]))
    if cmd.get("skip"):
        cursor = cursor.skip(int(cmd["skip"]))
    if limit:
        cursor = cursor.limit(limit)
    docs = list(cursor)
    return {"ok": 1, "cursor": {"id": 0, "ns": db + "." + cmd["find"], "firstBatch": docs}}


def insert(cmd, db):
    coll = client[db][cmd["insert"]]
    ordered = cmd.get("ordered", True)
    n, write_errors = 0, []
    for i, doc in enumerate(cmd.get("documents", [])):
        try:
            coll.insert_one(doc)
            n += 1
        except mongomock.DuplicateKeyError as e:
            write_errors.append({"index": i, "code": 11000, "errmsg": "E11000 duplicate key: %s" % e})
            if ordered:
                break
    reply = {"ok": 1, "n": n}
    if write_errors:
        reply["writeErrors"] = write_errors
    return reply


watched = {}  # (db, collection) -> (field, lock field)
write_log = collections.defaultdict(list)  # (db, collection) -> entries (see the module's doc)


def _entry(kind, coll, q, before, after, lock):
    at = now()
    held = get_path(before, lock) or {}
    if not isinstance(held, dict):
        held = {}
    locks = client[coll.database.name][coll.name + ".lock"]
    lk = locks.find_one({"_id": before["_id"]}) or {}
    return {"_id": before["_id"], "kind": kind, "held_by": held.get("by"), "held_token": held.get("token"),
            "held_until": held.get("until"), "held_expired": expired(held.get("until"), at),
            "filter_by": filter_value(q, lock + ".by"), "filter_token": filter_value(q, lock + ".token"),
            "filter_checks_until": isinstance(q, dict) and isinstance(q.get(lock + ".until"), dict),
            "filter_exhausted": requires_at_least(q, lock + ".attempts"),
            "lock_by": lk.get("by"), "lock_token": lk.get("token"), "lock_until": lk.get("until"),
            "lock_expired": expired(lk.get("until"), at), "at": at}


def _log_writes(db, name, before_docs, coll, q):
    """After an update: an entry for each document left done or failed, or given a new lease."""
    key = (db, name)
    if key not in watched or not before_docs:
        return
    field, lock = watched[key]
    for before in before_docs:
        after = coll.find_one({"_id": before["_id"]})
        if after is None:
            continue
        if get_path(after, field) is not None:
            kind = "done"
        elif get_path(after, lock + ".failed") is not None:
            kind = "fail"
        elif get_path(after, lock + ".token") is not None and get_path(after, lock + ".token") != get_path(before, lock + ".token"):
            kind = "claim"
        else:
            continue
        write_log[key].append(_entry(kind, coll, q, before, after, lock))


def _log_deletes(db, name, docs, coll, q):
    key = (db, name)
    if key not in watched:
        return
    for before in docs:
        write_log[key].append(_entry("delete", coll, q, before, None, watched[key][1]))


def _matches(coll, q, multi):
    if (coll.database.name, coll.name) not in watched:
        return []
    docs = list(coll.find(q))
    return docs if multi else docs[:1]


def dibs_watch(cmd, db):
    watched[(db, cmd["dibsWatch"])] = (cmd["field"], cmd["lock"])
    write_log[(db, cmd["dibsWatch"])] = []
    return {"ok": 1}


def dibs_writes(cmd, db):
    return {"ok": 1, "writes": write_log[(db, cmd["dibsWrites"])]}


refusals = {}  # (db, collection) -> {"when": query, "code": C, "errmsg": M}  (dibsRefuse)


def dibs_refuse(cmd, db):
    key = (db, cmd["dibsRefuse"])
    if cmd.get("when") is None:
        refusals.pop(key, None)
    else:
        refusals[key] = {"when": cmd["when"], "code": int(cmd.get("code", 121)),
                         "errmsg": cmd.get("errmsg", "Document failed validation")}
    return {"ok": 1}


def _refused_update(db, name, coll, q, u, multi):
    """With a dibsRefuse rule: applies the update to copies and answers the write error when a
    result would match the rule's query (nothing is written then), else None."""
    rule = refusals.get((db, name))
    if rule is None:
        return None
    docs = list(coll.find(q))
    if not multi:
        docs = docs[:1]
    for doc in docs:
        scratch = mongomock.MongoClient()["scratch"]["c"]
        scratch.insert_one(doc)
        scratch.update_one({"_id": doc["_id"]}, u)
        if filter_applies(rule["when"], scratch.find_one({"_id": doc["_id"]})):
            return {"code": rule["code"], "codeName": "DocumentValidationFailure" if rule["code"] == 121 else "",
                    "errmsg": rule["errmsg"], "errInfo": {"failingDocumentId": doc["_id"]}}
    return None


delays = {}  # command name -> seconds each of its answers waits (dibsDelay)


def dibs_delay(cmd, db):
    delays[cmd["dibsDelay"]] = int(cmd.get("ms", 0)) / 1000.0
    return {"ok": 1}


step_down = {"until": 0.0, "as": "command", "answered": 0}  # dibsStepDown
STEP_DOWN_WRITES = ("insert", "update", "delete", "findAndModify", "findandmodify")
STEP_DOWN_READS = ("find", "aggregate", "count")


def dibs_step_down(cmd, db):
    step_down["until"] = time.monotonic() + int(cmd["dibsStepDown"]) / 1000.0
    step_down["as"] = cmd.get("as", "command")
    return {"ok": 1, "stepDowns": step_down["answered"]}


def _stepping_down(name, doc):
    """The answer of a stepping-down primary to this command, or None (dibsStepDown)."""
    if time.monotonic() >= step_down["until"] or name not in STEP_DOWN_WRITES + STEP_DOWN_READS:
        return None
    step_down["answered"] += 1
    if name in STEP_DOWN_READS:
        return {"ok": 0, "code": 13435, "codeName": "NotPrimaryNoSecondaryOk", "errmsg": "not primary and secondaryOk=false"}
    statements = doc.get({"insert": "documents", "update": "updates", "delete": "deletes"}.get(name, ""), None)
    if step_down["as"] == "writeError" and statements is not None:
        return {"ok": 1, "n": 0, "nModified": 0,
                "writeErrors": [{"index": i, "code": 10107, "codeName": "NotWritablePrimary", "errmsg": "not primary"}
                                for i in range(len(statements))]}
    return {"ok": 0, "code": 10107, "codeName": "NotWritablePrimary", "errmsg": "not primary"}


hang_ups = {}  # (application, command name) -> how many of its next requests lose their connection
hang_up_after = {}  # (application, command name) -> True: carried out first, then the connection closed
app_of_port = {}  # client port -> the application its connection's handshake named


def dibs_hang_up(cmd, db):
    app = cmd["dibsHangUp"]
    pending = {name: n for (a, name), n in hang_ups.items() if a == app}
    for name in cmd.get("commands", []):
        hang_ups[(app, name)] = int(cmd.get("n", 1))
        hang_up_after[(app, name)] = bool(cmd.get("after", False))
    return {"ok": 1, "pending": pending}


def _hangs_up(request, name, doc):
    """None when this request is answered; "before" when its connection is to be closed instead of
    carrying it out, "after" when it is carried out and then closed unanswered (dibsHangUp)."""
    client = doc.get("client")
    if isinstance(client, dict):  # a handshake: it names the application, and is answered
        app_of_port[request.client_port] = (client.get("application") or {}).get("name")
        return None
    key = (app_of_port.get(request.client_port), name)
    if hang_ups.get(key, 0) <= 0:
        return None
    hang_ups[key] -= 1
    return "after" if hang_up_after.get(key) else "before"


def dibs_forget(cmd, db):
    key = (db, cmd["dibsForget"])
    write_log[key] = [w for w in write_log[key] if w["_id"] != cmd["id"]]
    return {"ok": 1}


def update(cmd, db):
    coll = client[db][cmd["update"]]
    ordered = cmd.get("ordered", True)
    n = modified = 0
    upserted, write_errors = [], []
    for i, u in enumerate(cmd.get("updates", [])):
        try:
            fn = coll.update_many if u.get("multi") else coll.update_one
            refused = _refused_update(db, cmd["update"], coll, u["q"], u["u"], u.get("multi"))
            if refused is not None:
                write_errors.append(dict(index=i, **refused))
                if ordered:
                    break
                continue
            before = _matches(coll, u["q"], u.get("multi"))
            r = fn(u["q"], u["u"], upsert=bool(u.get("upsert")))
            _log_writes(db, cmd["update"], before, coll, u["q"])
            n += r.matched_count
            modified += r.modified_count
            if r.upserted_id is not None:
                n += 1
                upserted.append({"index": i, "_id": r.upserted_id})
        except Exception as e:  # a bad update is a write error, as the server reports it
            write_errors.append({"index": i, "code": 2, "errmsg": str(e)})
            if ordered:
                break
    reply = {"ok": 1, "n": n, "nModified": modified}
    if upserted:
        reply["upserted"] = upserted
    if write_errors:
        reply["writeErrors"] = write_errors
    return reply


def delete(cmd, db):
    coll = client[db][cmd["delete"]]
    n = 0
    for d in cmd.get("deletes", []):
        fn = coll.delete_one if d.get("limit") == 1 else coll.delete_many
        before = _matches(coll, d["q"], d.get("limit") != 1)
        n += fn(d["q"]).deleted_count
        _log_deletes(db, cmd["delete"], before, coll, d["q"])
    return {"ok": 1, "n": n}


def find_and_modify(cmd, db):
    coll = client[db][cmd["findAndModify"]]
    query = cmd.get("query") or {}
    if cmd.get("remove"):
        before = _matches(coll, query, False)
        doc = coll.find_one_and_delete(query, projection=cmd.get("fields"), sort=sort_spec(cmd.get("sort")))
        _log_deletes(db, cmd["findAndModify"], before if doc is not None else [], coll, query)
    else:
        before = _matches(coll, query, False)  # (sorted claims never write the watched field)
        doc = coll.find_one_and_update(
            query, cmd["update"], projection=cmd.get("fields"), sort=sort_spec(cmd.get("sort")),
            upsert=bool(cmd.get("upsert")),
            return_document=ReturnDocument.AFTER if cmd.get("new") else ReturnDocument.BEFORE)
        _log_writes(db, cmd["findAndModify"], before, coll, query)
    return {"ok": 1, "value": doc, "lastErrorObject": {"n": 0 if doc is None else 1,
                                                        "updatedExisting": doc is not None}}


def aggregate(cmd, db):
    coll = client[db][cmd["aggregate"]]
    docs = list(coll.aggregate(cmd.get("pipeline", [])))
    return {"ok": 1, "cursor": {"id": 0, "ns": db + "." + cmd["aggregate"], "firstBatch": docs}}


def count(cmd, db):
    return {"ok": 1, "n": client[db][cmd["count"]].count_documents(cmd.get("query") or {})}


index_specs = {}  # (db, collection, name) -> the spec as createIndexes sent it (partial filters kept)


def create_indexes(cmd, db):
    coll = client[db][cmd["createIndexes"]]
    for spec in cmd.get("indexes", []):
        key = (db, cmd["createIndexes"], spec.get("name"))
        # As MongoDB does: an index of that name with other options is a conflict (85), not replaced.
        if key in index_specs and {k: v for k, v in index_specs[key].items() if k != "v"} != {k: v for k, v in spec.items() if k != "v"}:
            return error(85, "An existing index has the same name as the requested index. When index names are not "
                             "specified, they are auto generated and can cause conflicts. Please refer to our "
                             "documentation. Requested index: %s, existing index: %s" % (spec, index_specs[key]))
        opts = {k: v for k, v in spec.items() if k not in ("key", "v")}
        try:
            coll.create_index(list(spec["key"].items()), **opts)
        except Exception:
            # mongomock lacks some index options (partial filters); the index still exists for
            # the semantics that matter here (uniqueness). listIndexes shows the spec as sent.
            opts.pop("partialFilterExpression", None)
            opts.pop("expireAfterSeconds", None)
            coll.create_index(list(spec["key"].items()), **opts)
        index_specs[key] = dict(spec)
    return {"ok": 1, "numIndexesAfter": len(coll.index_information())}


def list_indexes(cmd, db):
    name = cmd["listIndexes"]
    if name not in client[db].list_collection_names():
        return error(26, "ns does not exist: %s.%s" % (db, name))
    batch = [{"v": 2, "key": {"_id": 1}, "name": "_id_"}]
    batch += [dict(spec, v=2) for (d, c, n), spec in sorted(index_specs.items(), key=lambda kv: str(kv[0])) if d == db and c == name]
    return {"ok": 1, "cursor": {"id": 0, "ns": db + "." + name, "firstBatch": batch}}


def drop_indexes(cmd, db):
    name, which = cmd["dropIndexes"], cmd.get("index")
    key = (db, name, which)
    if key not in index_specs:
        return error(27, "index not found with name [%s]" % which)
    try:
        client[db][name].drop_index(which)
    except Exception:
        pass
    del index_specs[key]
    return {"ok": 1}


def list_collections(cmd, db):
    # What mongoc's get_collection_names asks: one batch, no cursor left open.
    names = client[db].list_collection_names()
    batch = [{"name": n, "type": "collection", "options": {}, "info": {"readOnly": False}} for n in sorted(names)]
    return {"ok": 1, "cursor": {"id": 0, "ns": db + ".$cmd.listCollections", "firstBatch": batch}}


def create(cmd, db):
    if cmd["create"] in client[db].list_collection_names():
        return error(48, "Collection %s.%s already exists." % (db, cmd["create"]))
    client[db].create_collection(cmd["create"])
    return {"ok": 1}


def drop(cmd, db):
    client[db].drop_collection(cmd["drop"])
    for key in [k for k in index_specs if k[0] == db and k[1] == cmd["drop"]]:
        del index_specs[key]
    return {"ok": 1}


def drop_database(cmd, db):
    client.drop_database(db)
    for key in [k for k in index_specs if k[0] == db]:
        del index_specs[key]
    return {"ok": 1}


def dibs_counts(cmd, db):
    return {"ok": 1, "counts": dict(counts)}


def dibs_reset_counts(cmd, db):
    counts.clear()
    return {"ok": 1}


def plain_ok(cmd, db):
    return {"ok": 1}


command_log = collections.deque(maxlen=20000)  # {name, readPreference, writeConcern} per command


def dibs_command_log(cmd, db):
    return {"ok": 1, "commands": list(command_log)}


def dibs_reset_command_log(cmd, db):
    command_log.clear()
    return {"ok": 1}


HANDLERS = {
    "hello": hello, "ismaster": hello, "isMaster": hello,
    "find": find, "insert": insert, "update": update, "delete": delete,
    "findAndModify": find_and_modify, "findandmodify": find_and_modify,
    "aggregate": aggregate, "count": count, "createIndexes": create_indexes,
    "listIndexes": list_indexes, "dropIndexes": drop_indexes,
    "drop": drop, "dropDatabase": drop_database, "listCollections": list_collections, "create": create,
    "dibsCounts": dibs_counts, "dibsResetCounts": dibs_reset_counts,
    "dibsWatch": dibs_watch, "dibsWrites": dibs_writes, "dibsForget": dibs_forget,
    "dibsRefuse": dibs_refuse, "dibsCommandLog": dibs_command_log, "dibsResetCommandLog": dibs_reset_command_log,
    "dibsHangUp": dibs_hang_up, "dibsDelay": dibs_delay, "dibsStepDown": dibs_step_down,
    "ping": plain_ok, "endSessions": plain_ok, "killCursors": plain_ok, "buildInfo": plain_ok,
    "buildinfo": plain_ok, "getLastError": plain_ok, "saslStart": plain_ok,
}


def handle(request):
    doc = request.doc
    if not doc:
        return request.replies(error(59, "empty command"))
    name = next(iter(doc))
    db = getattr(request, "namespace", None) or doc.get("$db") or "admin"
    if "." in db:
        db = db.split(".")[0]
    counts[name] += 1
    hang_up = _hangs_up(request, name, doc)
    if hang_up == "before":
        return request.hangup()
    if delays.get(name):
        time.sleep(delays[name])
    if not name.startswith("dibs"):
        command_log.append({"name": name, "readPreference": doc.get("$readPreference"),
                            "writeConcern": doc.get("writeConcern")})
    stepping_down = _stepping_down(name, doc)
    if stepping_down is not None:
        return request.replies(stepping_down)
    fn = HANDLERS.get(name)
    if fn is None:
        return request.replies(error(59, "no such command: '%s'" % name))
    try:
        reply = fn(doc, db)
    except Exception as e:
        reply = error(8000, "%s: %s" % (type(e).__name__, e))
    if hang_up == "after":
        return request.hangup()
    return request.replies(reply)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--clock-skew-s", type=int, default=0)
    ap.add_argument("--replica-set", default="")
    args = ap.parse_args()
    clock_skew[0] = datetime.timedelta(seconds=args.clock_skew_s)

    server = MockupDB(port=args.port or None, request_timeout=int(1e6))
    server.autoresponds(handle)
    port = server.run()
    if args.replica_set:
        host = "127.0.0.1:%d" % port
        replica_set.update({"setName": args.replica_set, "hosts": [host], "primary": host, "me": host,
                            "setVersion": 1, "secondary": False})
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print("mongo stand-in listening on 127.0.0.1:%d (clock skew %d s)" % (port, args.clock_skew_s), flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    while not stop.is_set():
        stop.wait(1)
    server.stop()


if __name__ == "__main__":
    main()
