#!/usr/bin/env python3
"""Prints a loopback TCP port that a test server can bind a moment later.

The servers the test fixtures start (MariaDB, the Galera nodes, PostgreSQL, nginx) are told their
port on the command line, so the port is picked before it is bound. Two things could take it in
between, and each is kept out here:
- an outgoing connection: the kernel hands those ports from ip_local_port_range (32768-60999 on
  Debian), so ports are picked below that range, where no connect() lands;
- another fixture starting at the same moment (ctest -j, the concurrent-start check): every pick
  is written, under an exclusive lock, to a small registry, and a port picked in the last
  RESERVE_S seconds is never picked again.
A port is also checked free by binding it. Usage: free_port.py [COUNT] prints COUNT ports, one a line.
"""
import fcntl
import os
import random
import socket
import sys
import time

RESERVE_S = 600
LOW = 20000


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def bindable(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    high = max(LOW + 1000, ephemeral_low())
    registry = os.path.join(os.environ.get("XDG_RUNTIME_DIR") or "/tmp", "dibs-test-ports-%d" % os.getuid())
    with open(registry, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        now = time.time()
        taken = {}
        for line in f.read().split("\n"):
            parts = line.split()
            if len(parts) == 2 and now - float(parts[1]) < RESERVE_S:
                taken[int(parts[0])] = float(parts[1])
        picked = []
        for _ in range(100 * count):
            if len(picked) == count:
                break
            port = random.randrange(LOW, high)
            if port in taken or port in picked or not bindable(port):
                continue
            picked.append(port)
        if len(picked) < count:
            sys.exit("free_port.py: no free port found between %d and %d" % (LOW, high))
        for port in picked:
            taken[port] = now
        f.seek(0)
        f.truncate()
        f.write("".join("%d %.3f\n" % kv for kv in taken.items()))
    print("\n".join(str(p) for p in picked))


if __name__ == "__main__":
    main()
