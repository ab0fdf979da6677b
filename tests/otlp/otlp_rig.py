"""What the OTLP tests share: the test receiver (otlp_receiver.js under node, the package the test
setup installed), and a small ip-api-like API on Python's http.server that records the traceparent
header of every request it answers.

The API answers /json/<ip> as ip-api does ({"status":"success","query":ip,...}), except for the
addresses in `fail` (404, with a message) and `flaky` (503 the first time, then an answer).
"""
import http.server
import json
import os
import subprocess
import sys
import threading
import time

SKIP = 77


def receiver_modules(build_dir):
    modules = os.path.join(os.path.abspath(build_dir), "otlp-receiver", "node_modules")
    root = os.path.join(modules, "@opentelemetry", "otlp-transformer", "build", "src", "generated", "root.js")
    if not os.path.exists(root):
        print(f"the test receiver's package is not installed ({root}): tests/otlp/install_receiver.sh did not run "
              "or could not reach npm's registry")
        sys.exit(SKIP)
    return modules


class receiver:
    """node otlp_receiver.js on a free loopback port; spans() reads what it decoded."""

    def __init__(self, modules, work, mode="ok"):
        self.out = os.path.join(work, f"spans-{mode}.jsonl")
        port_file = os.path.join(work, f"receiver-{mode}.port")
        for p in (self.out, port_file):
            if os.path.exists(p):
                os.remove(p)
        here = os.path.dirname(os.path.abspath(__file__))
        self.proc = subprocess.Popen(["node", os.path.join(here, "otlp_receiver.js"), modules, self.out, port_file, mode])
        deadline = time.monotonic() + 20
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("the OTLP test receiver did not start")
            time.sleep(0.05)
        self.url = "http://127.0.0.1:" + open(port_file).read().strip()

    def spans(self):
        if not os.path.exists(self.out):
            return []
        return [json.loads(line) for line in open(self.out, encoding="utf-8") if line.strip()]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


class _api_handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        api = self.server.api
        ip = self.path.split("?")[0].rsplit("/", 1)[-1]
        with api.lock:
            api.seen.setdefault(ip, []).append(self.headers.get("traceparent"))
            calls = len(api.seen[ip])
        if ip in api.fail:
            self.answer(404, {"status": "fail", "message": "no such address here"})
        elif ip in api.flaky and calls == 1:
            self.answer(503, {"message": "try again"})
        else:
            self.answer(200, {"status": "success", "country": "Testland", "query": ip})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class api_server:
    def __init__(self, fail=(), flaky=()):
        self.fail, self.flaky = set(fail), set(flaky)
        self.seen = {}  # ip -> the traceparent of each request (None: none sent)
        self.lock = threading.Lock()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _api_handler)
        self.httpd.api = self
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def write_items(path, ips):
    with open(path, "w", encoding="utf-8") as f:
        for i, ip in enumerate(ips):
            f.write(json.dumps({"n": i, "ip": ip, "geo": None}) + "\n")
