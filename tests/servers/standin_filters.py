"""What the MongoDB stand-in's write log reads in documents and update filters (mongo_standin.py):
a dotted path's value, the value a filter requires there, whether it asks for at least some value,
whether a lease's time has passed. Pure: no server state.
"""
import datetime


def get_path(doc, dotted):
    for part in dotted.split("."):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)
    return doc


def filter_value(q, dotted):
    """The value an update's filter requires at `dotted` (None when it names none, or an operator)."""
    if not isinstance(q, dict):
        return None
    v = q.get(dotted, get_path(q, dotted))
    return None if isinstance(v, dict) else v


def expired(until, at):
    return until is not None and isinstance(until, datetime.datetime) and until.replace(tzinfo=None) < at


def requires_at_least(q, dotted):
    """Whether the filter `q` requires `dotted` >= some value, at its top or inside $and/$or."""
    if isinstance(q, list):
        return any(requires_at_least(x, dotted) for x in q)
    if not isinstance(q, dict):
        return False
    cond = q.get(dotted)
    if isinstance(cond, dict) and "$gte" in cond:
        return True
    return any(requires_at_least(q[k], dotted) for k in ("$and", "$or") if k in q)
