"""What both Python references (mongo_reference.py: threads, mysql_reference.py: processes) do
around their loops: start every worker, wait for all, and say how long it took and how much CPU
the loop used, its own and its child processes' (one of the two is all of it: a thread counts in
the process, a process in its children)."""
import resource
import time


def _cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(workers):
    """Starts each of `workers` (threading.Thread or multiprocessing.Process), joins them all;
    returns (wall seconds, CPU seconds)."""
    cpu0 = _cpu_seconds()
    start = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.monotonic() - start, _cpu_seconds() - cpu0
