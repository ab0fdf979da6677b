#!/usr/bin/python3
"""An API of the shapes paid APIs have, for dibs's tests of headers, bodies, mapped answers, quota
headers and budgets: Python's standard http.server at its defaults (ThreadingHTTPServer,
HTTP/1.0: a connection per request). Every request is recorded as it came, byte for byte.

  shaped_api.py DIR [options]

listens on 127.0.0.1, its port written to DIR/api.port once it serves; every request is appended
to DIR/requests.jsonl as {"method","path","headers":[[name,value],...],"body_b64"}.
Options:
  --key NAME:VALUE      every request must carry this header (else HTTP 401)
  --quota N --window S  N requests per fixed window of S seconds (default 2), HTTP 429 past them
  --spent-after N       past N requests, every answer is OpenAI's 429 insufficient_quota (the
                        account's credit gone: no wait cures it)
  --quota-style STYLE   the headers that say so on every answer: github (X-RateLimit-Limit,
                        -Remaining, -Used, -Reset as epoch seconds), ietf (RateLimit-Limit,
                        -Remaining, -Reset as seconds), structured (RateLimit: "default";r=R;t=T
                        and RateLimit-Policy: "default";q=N;w=S, the httpapi draft's later form)
Routes:
  GET|POST|PUT|PATCH /geo/KEY  {"query":KEY,"status":"success","country":"Freedonia","city":"Fr\u00e9do",
                        "loc":{"lat":48.5,"lon":-2.25},"tags":["a","b"],"asn":64500,"method":M,
                        "received": the request body parsed as JSON (or its text)}; KEY starting
                        with "none" is answered 404 {"error":"not found"}, with "fail"
                        {"status":"fail","message":"reserved range"}
  POST /v1/chat/completions  OpenAI's chat completion: choices[0].message.content is "positive"
                        when the last message holds "good" or "great", else "negative"; usage counts words
  GET /stats            {"requests":N,"refused":N,"unauthorized":N}
"""
import base64
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

lock = threading.Lock()
stats = {"requests": 0, "refused": 0, "unauthorized": 0}
window = {"start": 0.0, "used": 0}
options = {"key": None, "quota": 0, "window": 2.0, "style": "github", "log": None, "spent_after": -1}


def take_quota():
    """(allowed, remaining, seconds to the window's end, the window's end as epoch seconds)."""
    with lock:
        now = time.time()
        w = options["window"]
        start = now - (now % w)
        if start != window["start"]:
            window["start"], window["used"] = start, 0
        allowed = window["used"] < options["quota"]
        if allowed:
            window["used"] += 1
        else:
            stats["refused"] += 1
        end = start + w
        return allowed, options["quota"] - window["used"], max(0.0, end - now), end


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, obj, extra=()):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def quota_headers(self, remaining, reset_in, reset_at):
        n, style = options["quota"], options["style"]
        secs = int(reset_in + 0.999)
        if style == "github":
            return [("X-RateLimit-Limit", str(n)), ("X-RateLimit-Remaining", str(remaining)),
                    ("X-RateLimit-Used", str(n - remaining)), ("X-RateLimit-Reset", str(int(reset_at + 0.999)))]
        if style == "ietf":
            return [("RateLimit-Limit", str(n)), ("RateLimit-Remaining", str(remaining)), ("RateLimit-Reset", str(secs))]
        return [("RateLimit", '"default";r=%d;t=%d' % (remaining, secs)),
                ("RateLimit-Policy", '"default";q=%d;w=%d' % (n, int(options["window"])))]

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        record = {"method": self.command, "path": self.path, "headers": [[k, v] for k, v in self.headers.items()],
                  "body_b64": base64.b64encode(body).decode()}
        with lock:
            stats["requests"] += 1
            with open(options["log"], "a") as f:
                f.write(json.dumps(record) + "\n")
        if self.path == "/stats":
            with lock:
                return self.answer(200, dict(stats))
        if options["key"]:
            name, value = options["key"]
            if self.headers.get(name) != value:
                with lock:
                    stats["unauthorized"] += 1
                return self.answer(401, {"error": "a key is needed"})
        extra = []
        if options["spent_after"] >= 0 and stats["requests"] > options["spent_after"]:
            # OpenAI's answer once the account's credit is gone: a 429 no wait cures.
            return self.answer(429, {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                                               "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}})
        if options["quota"]:
            allowed, remaining, reset_in, reset_at = take_quota()
            extra = self.quota_headers(max(remaining, 0), reset_in, reset_at)
            if not allowed:
                return self.answer(429, {"error": "quota spent"}, extra + [("Retry-After", str(int(reset_in + 0.999)))])
        path = urllib.parse.urlsplit(self.path).path
        if path == "/v1/chat/completions" and self.command == "POST":
            return self.chat(body, extra)
        if not path.startswith("/geo/"):
            return self.answer(404, {"error": "no such route"})
        key = urllib.parse.unquote(path[len("/geo/"):])
        if key.startswith("none"):
            return self.answer(404, {"error": "not found"}, extra)
        if key.startswith("fail"):
            return self.answer(200, {"status": "fail", "message": "reserved range", "query": key}, extra)
        try:
            received = json.loads(body) if body else None
        except ValueError:
            received = body.decode("utf-8", "replace")
        self.answer(200, {"query": key, "status": "success", "country": "Freedonia", "city": "Fr\u00e9do",
                          "loc": {"lat": 48.5, "lon": -2.25}, "tags": ["a", "b"], "asn": 64500,
                          "method": self.command, "received": received}, extra)

    def chat(self, body, extra):
        # OpenAI's chat completion, its label read off the last message: "positive" when it holds
        # "good" or "great" (any case), else "negative".
        try:
            messages = json.loads(body)["messages"]
            prompt = messages[-1]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return self.answer(400, {"error": {"message": "expected {\"messages\": [...]}", "type": "invalid_request_error"}})
        label = "positive" if ("good" in prompt.lower() or "great" in prompt.lower()) else "negative"
        self.answer(200, {"id": "chatcmpl-1", "object": "chat.completion", "model": "shaped",
                          "choices": [{"index": 0, "message": {"role": "assistant", "content": label},
                                       "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 1,
                                    "total_tokens": len(prompt.split()) + 1}}, extra)

    do_GET = do_POST = do_PUT = do_PATCH = handle_any


def main():
    directory = sys.argv[1]
    args = sys.argv[2:]
    i = 0
    while i < len(args):
        flag, value = args[i], args[i + 1]
        if flag == "--key":
            options["key"] = tuple(value.split(":", 1))
        elif flag == "--quota":
            options["quota"] = int(value)
        elif flag == "--window":
            options["window"] = float(value)
        elif flag == "--quota-style":
            options["style"] = value
        elif flag == "--spent-after":
            options["spent_after"] = int(value)
        else:
            raise SystemExit("unknown option " + flag)
        i += 2
    options["log"] = os.path.join(directory, "requests.jsonl")
    open(options["log"], "w").close()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = os.path.join(directory, "api.port.tmp")
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, os.path.join(directory, "api.port"))
    server.serve_forever()


if __name__ == "__main__":
    main()
