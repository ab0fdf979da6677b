"""What the docs' walkthrough runners share: a test server of tests/servers/ started on a free port
of loopback, and psql run on the test database; each fails the walkthrough with its reason."""
import os
import subprocess
import sys
import time


def start_server(script, workdir, args, fail):
    """Starts tests/servers/`script` in `workdir` (its port file `api.port`): (the process, its base URL)."""
    proc = subprocess.Popen([sys.executable, script, workdir, "api"] + args)
    port_file = os.path.join(workdir, "api.port")
    for _ in range(600):
        if os.path.exists(port_file):
            return proc, "http://127.0.0.1:" + open(port_file).read().strip()
        time.sleep(0.05)
    proc.kill()
    fail(os.path.basename(script) + " did not start")


def psql(uri, sql, fail):
    out = subprocess.run(["psql", uri, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"psql {uri}: {out.stderr.strip()[:500]} (running: {sql[:120]}...)")
    return out.stdout
