#!/usr/bin/python3
"""An OpenAI-compatible embeddings API (POST /v1/embeddings) for dibs's tests and bench of batch
requests: Python's standard http.server (ThreadingHTTPServer, a thread per connection, HTTP/1.1
keep-alive, the listen backlog at its default of 5). Each input's vector is derived from a hash of
its text (vector_of), so a vector written on the wrong row is detectable by anyone who has the text.

  embeddings_api.py DIR NAME [options]
  embeddings_api.py --check FILE TEXT_PATH VECTOR_PATH [DIMS]   reads rows (JSON Lines) and says, on
                     one line, how many hold the vector their own text gets ("right=N wrong=N
                     missing=N"): the paths are dotted (emb.embedding); exit 0 when none is wrong

listens on 127.0.0.1, a free port written to DIR/NAME.port once it serves.
Request: {"model": M, "input": "text" | ["text", ...]} (OpenAI's; also Ollama's /api/embed shape).
Answer:  {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": [...]}, ...],
          "model": M, "usage": {"prompt_tokens": N, "total_tokens": N}}  (N: UTF-8 bytes / 4, rounded up)
Options:
  --dims D           floats a vector (default 8)
  --max-inputs N     more inputs in one request: refused (default 2048, OpenAI's) ...
  --max-inputs-status S  ... with this status (default 400; 413 as text-embeddings-inference,
                     whose words name the batch's size: "batch size 40 > maximum allowed batch size 32")
  --max-inputs-words W  ... in these words instead, the same for every size (a proxy's "Request
                     Entity Too Large")
  --require-member M a body without the member M: 400 in the same words every time (the
                     request's fault, no input's)
  --latency-ms A     each request takes A ms (default 20) ...
  --latency-per-input-ms B  ... plus B ms an input (default 0.05)
  --reject TEXT      a request with an input containing TEXT: 400 invalid_request_error naming the
                     input's index, as OpenAI refuses an input it can't embed; nothing else embedded
  --drop-vectors N   the first N requests of more than one input each answer one vector short (the
                     middle input's left out, the others' indexes kept): a client must not shift
  --shuffle          the data array in an order of its own (each element's "index" still right)
  --no-index         the elements carry no "index" (their order is the inputs')
  --key K            every request must carry "Authorization: Bearer K", else 401
GET /stats: {"requests", "inputs", "refused", "largest", "shortened"} since the start or /reset-stats.
"""

import argparse
import hashlib
import http.server
import json
import os
import random
import sys
import threading
import time

from port_file import serve_announced

args = None
lock = threading.Lock()
stats = {"requests": 0, "inputs": 0, "refused": 0, "largest": 0, "shortened": 0}
dropped = [0]


def vector_of(text, dims):
    """The vector every run gives `text`: dims floats in [-1, 1) from SHA-256 of its UTF-8 bytes."""
    out = []
    block = b""
    counter = 0
    while len(out) < dims:
        if len(block) < 4:
            block += hashlib.sha256(text.encode("utf-8") + counter.to_bytes(4, "big")).digest()
            counter += 1
        n = int.from_bytes(block[:4], "big")
        block = block[4:]
        out.append(round(n / 2147483648.0 - 1.0, 6))
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                self.send_json(200, dict(stats))
        elif self.path == "/reset-stats":
            with lock:
                for k in stats:
                    stats[k] = 0
            self.send_json(200, {"ok": True})
        else:
            self.send_json(404, {"error": {"message": "no route " + self.path, "type": "invalid_request_error"}})

    def refuse(self, status, message, kind="invalid_request_error"):
        with lock:
            stats["refused"] += 1
        self.send_json(status, {"error": {"message": message, "type": kind, "param": "input", "code": None}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path not in ("/v1/embeddings", "/api/embed"):
            return self.send_json(404, {"error": {"message": "no route " + self.path}})
        if args.key and self.headers.get("Authorization") != "Bearer " + args.key:
            return self.refuse(401, "Incorrect API key provided", "invalid_api_key")
        try:
            body = json.loads(raw)
        except ValueError:
            return self.refuse(400, "We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return self.refuse(400, "Invalid type for body: expected an object, but got " + type(body).__name__)
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
            return self.refuse(400, "'input' must be a string or an array of strings")
        if args.require_member and args.require_member not in body:
            return self.refuse(400, "missing required member '%s'" % args.require_member)
        if len(inputs) > args.max_inputs:
            return self.refuse(args.max_inputs_status, args.max_inputs_words or
                               "batch size %d > maximum allowed batch size %d" % (len(inputs), args.max_inputs))
        if args.reject:
            for i, t in enumerate(inputs):
                if args.reject in t:
                    return self.refuse(400, "'$.input[%d]' is invalid: the input cannot be embedded" % i)
        time.sleep((args.latency_ms + args.latency_per_input_ms * len(inputs)) / 1000.0)
        data = [{"object": "embedding", "index": i, "embedding": vector_of(t, args.dims)} for i, t in enumerate(inputs)]
        with lock:
            stats["requests"] += 1
            stats["inputs"] += len(inputs)
            stats["largest"] = max(stats["largest"], len(inputs))
            short = len(inputs) > 1 and dropped[0] < args.drop_vectors
            if short:
                dropped[0] += 1
                stats["shortened"] += 1
        if short:
            del data[len(data) // 2]
        if args.shuffle:
            random.shuffle(data)
        if args.no_index:
            for d in data:
                del d["index"]
        tokens = sum((len(t.encode("utf-8")) + 3) // 4 for t in inputs)
        self.send_json(200, {"object": "list", "data": data, "model": body.get("model", ""),
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def at_path(obj, path):
    for step in path.split("."):
        if isinstance(obj, str):
            try:
                obj = json.loads(obj)  # a SQL export may hold the JSON as text
            except ValueError:
                return None
        if not isinstance(obj, dict) or step not in obj:
            return None
        obj = obj[step]
    return obj


def check(path, text_path, vector_path, dims=8):
    right = wrong = missing = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            text, vector = at_path(row, text_path), at_path(row, vector_path)
            if isinstance(vector, str):
                vector = json.loads(vector)
            if not isinstance(text, str) or not isinstance(vector, list):
                missing += 1
            elif len(vector) == dims and all(abs(a - b) < 1e-9 for a, b in zip(vector, vector_of(text, dims))):
                right += 1
            else:
                wrong += 1
    print("right=%d wrong=%d missing=%d" % (right, wrong, missing))
    return 1 if wrong else 0


def main():
    global args
    if sys.argv[1:2] == ["--check"]:
        a = sys.argv[2:]
        return check(a[0], a[1], a[2], int(a[3]) if len(a) > 3 else 8)
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("name")
    p.add_argument("--dims", type=int, default=8)
    p.add_argument("--max-inputs", type=int, default=2048)
    p.add_argument("--latency-ms", type=float, default=20)
    p.add_argument("--latency-per-input-ms", type=float, default=0.05)
    p.add_argument("--max-inputs-status", type=int, default=400)
    p.add_argument("--max-inputs-words")
    p.add_argument("--require-member")
    p.add_argument("--reject")
    p.add_argument("--drop-vectors", type=int, default=0)
    p.add_argument("--shuffle", action="store_true")
    p.add_argument("--no-index", action="store_true")
    p.add_argument("--key")
    args = p.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    serve_announced(server, args.dir, args.name)


if __name__ == "__main__":
    sys.exit(main())
