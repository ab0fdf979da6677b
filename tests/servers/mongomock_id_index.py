"""mongomock scans every document for every query; an _id lookup (the fenced writes of a batch,
one per document) would make each bulk write O(n^2). install() makes mongomock answer those by key
instead, for mongo_standin.py; the filter is still applied in full, so the semantics are
mongomock's. A lower bound on an ObjectId _id (each statement of a batch claim: the first claimable
document at or after a point) walks the ids from that point in _id order, as a server's _id index
does, and stops at the first match of an updateOne instead of testing the whole collection.
"""
import mongomock
from bson import ObjectId
from mongomock.filtering import filter_applies

_scan = mongomock.collection.Collection._iter_documents


def _iter_documents(self, filter):
    if isinstance(filter, dict) and "_id" in filter:
        cond = filter["_id"]
        keys = None
        if not isinstance(cond, dict):
            keys = [cond]
        elif list(cond.keys()) == ["$in"]:
            keys = list(cond["$in"])
        elif list(cond.keys()) == ["$gte"] and isinstance(cond["$gte"], ObjectId):
            return _from_id(self._store, filter, cond["$gte"])
        if keys is not None:
            store = self._store
            found = []
            for k in keys:
                try:
                    doc = store[k]
                except (KeyError, TypeError):
                    continue
                if filter_applies(filter, doc):
                    found.append(doc)
            return iter(found)
    return _scan(self, filter)


def _from_id(store, filter, lowest):
    """The documents matching `filter` whose ObjectId _id is >= `lowest`, lazily, in _id order."""
    docs = store._documents
    bound = lowest.binary
    keys = sorted(k for k in docs.keys() if isinstance(k, ObjectId) and k.binary >= bound)
    for k in keys:
        doc = docs.get(k)
        if doc is not None and filter_applies(filter, doc):
            yield doc


def install():
    mongomock.collection.Collection._iter_documents = _iter_documents
