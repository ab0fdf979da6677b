#!/usr/bin/python3
"""An LLM provider's API that meters TOKENS per minute as OpenAI and Anthropic do, for dibs's tests
of token budgets: Python's standard http.server (ThreadingHTTPServer, a thread per connection,
HTTP/1.1 keep-alive, the listen backlog at its default of 5). Everything it answers is decided by the request
(hashes of its text), so the same rows get the same answers in every run.

  llm_api.py DIR NAME [options]
  llm_api.py --self-check   checks go_duration and rfc3339 and exits (0 when they hold)

listens on 127.0.0.1, a free port written to DIR/NAME.port once it serves.
Options:
  --style openai|anthropic  the provider imitated (default openai): its route, bodies and headers
  --tpm N            tokens per minute (default 30000; 0: no token limit, no token headers): a
                     bucket of capacity N refilled continuously at N/60 a second
  --itpm N --otpm M  (anthropic) input and output tokens per minute, held apart as Anthropic holds
                     them (instead of --tpm): the input bucket charged the prompt's tokens at arrival,
                     the output bucket max_tokens at arrival and settled to the completion's tokens;
                     -input-tokens-* and -output-tokens-* state each, -tokens-* the tighter of the two
  --rpm N            requests per minute (default 0: no request limit, no request headers): a
                     bucket of capacity N refilled continuously at N/60 a second
  --latency-ms A     every completion takes A ms (default 300) ...
  --latency-per-token-ms B  ... plus B ms (default 2) per completion token; slept without the lock
  --no-headers       none of the provider's rate-limit headers, nor retry-after / retry-after-ms
                     (a self-hosted server that only refuses); the bodies are unchanged
  --spent-after N    from the (N+1)-th request on (counted from the start, /reset-stats does not
                     reset it): openai 429 {"error":{"type":"insufficient_quota",...}}, anthropic
                     400 "Your credit balance is too low ..." (the account's credit gone: no wait
                     cures it)
  --overloaded-share F  (anthropic) this share of requests answer 529 overloaded_error, without
                     retry-after or rate-limit headers, not charged: chosen by a hash of the last
                     message's content and how many times that content was asked, so a retry of
                     the same row may succeed
  --key K            every request must carry "Authorization: Bearer K" (openai) or "x-api-key: K"
                     (anthropic), else 401 in the provider's error shape
Admission (both styles, as OpenAI does): a request is charged at arrival
  estimate = max_tokens (openai: max_completion_tokens, else max_tokens, else 256) + prompt_tokens
  prompt_tokens = ceil(UTF-8 bytes of every message's content (and anthropic's "system") / 4)
                  + 4 per message
If the request bucket holds less than 1 or the token bucket less than the estimate: 429 at once, not
charged, with retry-after (whole seconds, rounded up; openai also retry-after-ms) = the time until
the bucket holds enough. An estimate over --tpm (it never fits): 429 "Request too large ..." without
retry-after. Once admitted, the answer takes its latency, then the charge is settled: the real usage
is prompt_tokens + completion_tokens and (estimate - real) goes back into the bucket.
completion_tokens = 5 .. min(max_tokens, 60) by a hash of the whole prompt (max_tokens when < 5).
Headers on every answer of the provider's route but 401 and 529 (state at answer time):
  openai     x-ratelimit-limit-requests, -limit-tokens, -remaining-requests, -remaining-tokens,
             -reset-requests, -reset-tokens: resets as Go durations until the bucket is full
             again ("1s", "6m0s", "12ms", "2m59.56s")
  anthropic  anthropic-ratelimit-requests-limit/-remaining/-reset, -tokens-*, -input-tokens-*,
             -output-tokens-* (the last two the same as tokens); token remainders rounded down to
             the thousand; resets as RFC 3339 UTC times of a full bucket ("2026-11-29T12:00:03.250Z")
Answers, by what the last message's content CONTAINS:
  TOO-LONG   400 context_length_exceeded (openai) / "prompt is too long: ..." (anthropic), not charged
  TRUNCATE   200, finish_reason "length" / stop_reason "max_tokens", the content cut in the middle
             (invalid JSON), completion_tokens = max_tokens
  REFUSE     200, openai message {"role":"assistant","content":null,"refusal":"I can't help with
             that."}, anthropic stop_reason "refusal" and content []
  else       200, the content a JSON text: {"label": "positive"|"negative"|"neutral", "n": C}, the
             label by a hash of the last message's content, C its completion tokens
A body that is not a JSON object, or lacks a model or messages (anthropic: or max_tokens): 400.
Routes:
  POST /v1/chat/completions  (openai) {"model","messages":[{"role","content"}],"max_tokens"?} ->
             {"id":"chatcmpl-...","object":"chat.completion","model","choices":[{"index":0,
             "message":{"role":"assistant","content":...},"finish_reason":"stop"}],
             "usage":{"prompt_tokens","completion_tokens","total_tokens"}}
  POST /v1/messages  (anthropic) {"model","max_tokens","messages":[...]} -> {"id":"msg_...",
             "type":"message","role":"assistant","model","content":[{"type":"text","text":...}],
             "stop_reason":"end_turn","usage":{"input_tokens","output_tokens"}}
  GET /stats {"requests","ok","refused_429" (every 429: rate limits, too large, openai's spent),
             "refused_other" (400, 401, 404),"overloaded" (529),"too_large","spent",
             "tokens_settled" (real usage of the 200 answers; "input_settled", "output_settled" its parts),"tokens_charged_peak_per_minute"
             (the most real usage of 200 answers that arrived within any 60 s),"first_request_at",
             "last_answer_at" (time.monotonic() seconds, null before any),"in_flight","peak_in_flight"}
  POST /reset-stats  zeroes /stats (the buckets, --spent-after's count and the attempt counts stay)
"""
import argparse
import hashlib
import http.server
import json
import math
import os
import sys
import threading
import time

from port_file import serve_announced

lock = threading.Lock()
args = None


def fresh_stats():
    return {"requests": 0, "ok": 0, "refused_429": 0, "refused_other": 0, "overloaded": 0,
            "too_large": 0, "spent": 0, "tokens_settled": 0, "input_settled": 0, "output_settled": 0, "first_request_at": None,
            "last_answer_at": None, "in_flight": 0, "peak_in_flight": 0, "refused_at": []}


stats = fresh_stats()
usage_log = []  # (arrival monotonic, real tokens) of every 200 answer, for the peak per minute
seen = {"requests": 0}  # every request to the provider's route since the start (--spent-after)
attempts = {}  # last message's content -> times asked (--overloaded-share)


def go_duration(seconds):
    """Go's time.Duration.String() at millisecond precision, as OpenAI's x-ratelimit-reset-*:
    1 -> "1s", 360 -> "6m0s", 0.012 -> "12ms", 179.56 -> "2m59.56s"."""
    ms = int(round(max(0.0, seconds) * 1000))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return "%dms" % ms
    h, m, s_ms = ms // 3600000, (ms // 60000) % 60, ms % 60000
    sec = str(s_ms // 1000)
    if s_ms % 1000:
        sec += "." + ("%03d" % (s_ms % 1000)).rstrip("0")
    if h:
        return "%dh%dm%ss" % (h, m, sec)
    if m:
        return "%dm%ss" % (m, sec)
    return sec + "s"


def rfc3339(epoch):
    """UTC with milliseconds: "2026-11-29T12:00:03.250Z"."""
    ms = int(round(epoch * 1000))
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def hash_of(text):
    return int(hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:8], 16)


def share_of(text):
    """A stable number in [0, 1)."""
    return hash_of(text) / 2**32


class Bucket:
    """Capacity N, refilled continuously at N/60 a second; full at the start. Used under `lock`."""

    def __init__(self, per_minute):
        self.cap = float(per_minute)
        self.level = float(per_minute)
        self.last = time.monotonic()

    def refill(self, now):
        self.level = min(self.cap, self.level + (now - self.last) * self.cap / 60.0)
        self.last = now

    def wait_for(self, amount):
        """Seconds until the bucket holds `amount`."""
        return max(0.0, (amount - self.level) * 60.0 / self.cap)

    def until_full(self):
        return max(0.0, (self.cap - self.level) * 60.0 / self.cap)


buckets = {"tokens": None, "requests": None, "input": None, "output": None}


def message_text(content):
    """A message's content as text: a string, or a list of blocks with "text"."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, obj, extra=()):
        data = json.dumps(obj).encode()
        self.send_response(status, "Overloaded" if status == 529 else None)  # http.server knows no 529
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    # -- the provider's shapes --------------------------------------------------------------

    def error_body(self, etype, message, code=None):
        if args.style == "openai":
            return {"error": {"message": message, "type": etype, "param": None, "code": code}}
        return {"type": "error", "error": {"type": etype, "message": message}}

    def limit_headers(self):
        """The provider's rate-limit headers for the buckets' state now (called under `lock`)."""
        if args.no_headers:
            return []
        now = time.monotonic()
        h = []
        req, tok = buckets["requests"], buckets["tokens"]
        if args.style == "openai":
            if req:
                req.refill(now)
                h += [("x-ratelimit-limit-requests", str(int(req.cap))),
                      ("x-ratelimit-remaining-requests", str(max(0, int(req.level)))),
                      ("x-ratelimit-reset-requests", go_duration(req.until_full()))]
            if tok:
                tok.refill(now)
                h += [("x-ratelimit-limit-tokens", str(int(tok.cap))),
                      ("x-ratelimit-remaining-tokens", str(max(0, int(tok.level)))),
                      ("x-ratelimit-reset-tokens", go_duration(tok.until_full()))]
            return h
        wall = time.time()
        if req:
            req.refill(now)
            h += [("anthropic-ratelimit-requests-limit", str(int(req.cap))),
                  ("anthropic-ratelimit-requests-remaining", str(max(0, int(req.level)))),
                  ("anthropic-ratelimit-requests-reset", rfc3339(wall + req.until_full()))]
        apart = {"input-tokens": buckets["input"], "output-tokens": buckets["output"]}
        if tok:
            apart = {"input-tokens": tok, "output-tokens": tok}
        if apart["input-tokens"]:
            for b in apart.values():
                b.refill(now)
            # -tokens-*: the tighter of the two (the least share left).
            apart["tokens"] = tok or min(apart.values(), key=lambda b: b.level / b.cap)
            for kind in ("tokens", "input-tokens", "output-tokens"):
                b = apart[kind]
                h += [("anthropic-ratelimit-%s-limit" % kind, str(int(b.cap))),
                      ("anthropic-ratelimit-%s-remaining" % kind, str(max(0, int(b.level)) // 1000 * 1000)),
                      ("anthropic-ratelimit-%s-reset" % kind, rfc3339(wall + b.until_full()))]
        return h

    def finish_answer(self, status, obj, headers=True, extra=()):
        """Answers on the provider's route, counted in /stats."""
        with lock:
            h = self.limit_headers() if headers else []
            if status == 429:
                stats["refused_429"] += 1
                if stats["first_request_at"] is not None and len(stats["refused_at"]) < 1000:
                    err = obj.get("error", {}) if isinstance(obj, dict) else {}
                    said = err.get("message", "") if isinstance(err, dict) else ""
                    stats["refused_at"].append([round(time.monotonic() - stats["first_request_at"], 3), said[:160]])
            elif status == 529:
                stats["overloaded"] += 1
            elif status != 200:
                stats["refused_other"] += 1
        self.answer(status, obj, h + list(extra))
        with lock:
            stats["last_answer_at"] = time.monotonic()

    # -- routes -------------------------------------------------------------------------------

    def do_GET(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0] == "/stats":
            with lock:
                out = dict(stats)
                out["tokens_charged_peak_per_minute"] = peak_per_minute()
            return self.answer(200, out)
        self.answer(404, self.error_body("not_found_error", "no such route: GET " + self.path))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?")[0]
        if path == "/reset-stats":
            with lock:
                stats.clear()
                stats.update(fresh_stats())
                del usage_log[:]
            return self.answer(200, {"reset": True})
        route = "/v1/chat/completions" if args.style == "openai" else "/v1/messages"
        if path != route:
            return self.answer(404, self.error_body("not_found_error", "no such route: POST " + self.path))
        arrival = time.monotonic()
        with lock:
            seen["requests"] += 1
            number = seen["requests"]
            stats["requests"] += 1
            if stats["first_request_at"] is None:
                stats["first_request_at"] = arrival
            stats["in_flight"] += 1
            stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            self.completion(raw, number, arrival)
        finally:
            with lock:
                stats["in_flight"] -= 1

    def completion(self, raw, number, arrival):
        openai = args.style == "openai"
        if args.key is not None:
            if openai:
                ok = self.headers.get("Authorization") == "Bearer " + args.key
                err = self.error_body("invalid_request_error", "Incorrect API key provided. You can find your "
                                      "API key at https://platform.openai.com/account/api-keys.", "invalid_api_key")
            else:
                ok = self.headers.get("x-api-key") == args.key
                err = self.error_body("authentication_error", "invalid x-api-key")
            if not ok:
                return self.finish_answer(401, err, headers=False)
        # The body: {"model", "messages": [{"role", "content"}, ...], "max_tokens"?}.
        try:
            body = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            body = None
        bad = None
        if not isinstance(body, dict):
            bad = "We could not parse the JSON body of your request." if openai else "There was an error parsing the body: expected a JSON object"
        elif not isinstance(body.get("model"), str) or not body["model"]:
            bad = "you must provide a model parameter" if openai else "model: Field required"
        elif (not isinstance(body.get("messages"), list) or not body["messages"]
              or not all(isinstance(m, dict) and "role" in m and "content" in m for m in body["messages"])):
            bad = "'messages' must be a non-empty array of {role, content}" if openai else "messages: Field required"
        if bad is None:
            mt = body.get("max_completion_tokens", body.get("max_tokens")) if openai else body.get("max_tokens")
            if mt is None and openai:
                mt = 256
            if isinstance(mt, bool) or not isinstance(mt, int) or mt < 1:
                bad = "max_tokens: expected a positive integer" if mt is not None else "max_tokens: Field required"
        if bad is not None:
            return self.finish_answer(400, self.error_body("invalid_request_error", bad))
        model = body["model"]
        messages = body["messages"]
        texts = [message_text(m["content"]) for m in messages]
        if not openai and isinstance(body.get("system"), (str, list)):
            texts.append(message_text(body["system"]))
        last = message_text(messages[-1]["content"])
        prompt_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
        prompt_tokens = int(math.ceil(prompt_bytes / 4.0)) + 4 * len(messages)
        estimate = mt + prompt_tokens

        if args.spent_after >= 0 and number > args.spent_after:
            with lock:
                stats["spent"] += 1
            if openai:
                return self.finish_answer(429, self.error_body(
                    "insufficient_quota", "You exceeded your current quota, please check your plan and billing "
                    "details. For more information on this error, read the docs: "
                    "https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota"))
            return self.finish_answer(400, self.error_body(
                "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to "
                "Plans & Billing to upgrade or purchase credits."))
        if "TOO-LONG" in last:
            if openai:
                return self.finish_answer(400, self.error_body(
                    "invalid_request_error", "This model's maximum context length is 8192 tokens. However, your "
                    "messages resulted in %d tokens. Please reduce the length of the messages." % (8192 + prompt_tokens),
                    "context_length_exceeded"))
            return self.finish_answer(400, self.error_body(
                "invalid_request_error", "prompt is too long: 200000 tokens > 199999 maximum"))
        if not openai and args.overloaded_share > 0:
            with lock:
                attempts[last] = attempts.get(last, 0) + 1
                attempt = attempts[last]
            if share_of("overloaded:%d:%s" % (attempt, last)) < args.overloaded_share:
                return self.finish_answer(529, self.error_body("overloaded_error", "Overloaded"), headers=False)

        # Admission: charge the estimate, or refuse at once.
        refusal = None
        with lock:
            now = time.monotonic()
            tok, req = buckets["tokens"], buckets["requests"]
            itok, otok = buckets["input"], buckets["output"]
            for b in (tok, req, itok, otok):
                if b:
                    b.refill(now)
            if (tok and estimate > tok.cap) or (itok and prompt_tokens > itok.cap) or (otok and mt > otok.cap):
                stats["too_large"] += 1
                refusal = ("too_large", 0.0)
            elif req and req.level < 1:
                refusal = ("requests", req.wait_for(1))
            elif tok and tok.level < estimate:
                refusal = ("tokens", tok.wait_for(estimate))
            elif itok and itok.level < prompt_tokens:
                refusal = ("input tokens", itok.wait_for(prompt_tokens))
            elif otok and otok.level < mt:
                refusal = ("output tokens", otok.wait_for(mt))
            else:
                if req:
                    req.level -= 1
                if tok:
                    tok.level -= estimate
                if itok:
                    itok.level -= prompt_tokens
                if otok:
                    otok.level -= mt
            used_tokens = int(round(tok.cap - tok.level)) if tok else 0
            used_requests = int(round(req.cap - req.level)) if req else 0
        if refusal is not None:
            return self.refuse(refusal, model, estimate, used_tokens, used_requests)

        # Admitted: the completion.
        hi = min(mt, 60)
        prompt_all = "\n".join(texts)
        completion_tokens = hi if hi < 5 else 5 + hash_of("n:" + prompt_all) % (hi - 5 + 1)
        truncated = "TRUNCATE" in last
        refused = "REFUSE" in last
        if truncated:
            completion_tokens = mt
        label = ("positive", "negative", "neutral")[hash_of("label:" + last) % 3]
        content = json.dumps({"label": label, "n": completion_tokens})
        if truncated:
            content = content[:len(content) // 2]
        time.sleep((args.latency_ms + args.latency_per_token_ms * completion_tokens) / 1000.0)
        real = prompt_tokens + completion_tokens
        with lock:
            tok = buckets["tokens"]
            if tok:
                tok.refill(time.monotonic())
                tok.level = min(tok.cap, tok.level + (estimate - real))
            otok = buckets["output"]
            if otok:
                otok.refill(time.monotonic())
                otok.level = min(otok.cap, otok.level + (mt - completion_tokens))
            stats["ok"] += 1
            stats["tokens_settled"] += real
            stats["input_settled"] += prompt_tokens
            stats["output_settled"] += completion_tokens
            usage_log.append((arrival, real))
        rid = "%08x%08x" % (hash_of("id:" + prompt_all), number)
        if openai:
            if refused:
                message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
            else:
                message = {"role": "assistant", "content": content}
            out = {"id": "chatcmpl-" + rid, "object": "chat.completion", "created": int(time.time()), "model": model,
                   "choices": [{"index": 0, "message": message, "logprobs": None,
                                "finish_reason": "length" if truncated else "stop"}],
                   "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": real}}
        else:
            out = {"id": "msg_" + rid, "type": "message", "role": "assistant", "model": model,
                   "content": [] if refused else [{"type": "text", "text": content}],
                   "stop_reason": "refusal" if refused else ("max_tokens" if truncated else "end_turn"),
                   "stop_sequence": None,
                   "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens}}
        self.finish_answer(200, out)

    def refuse(self, refusal, model, estimate, used_tokens, used_requests):
        kind, wait = refusal
        openai = args.style == "openai"
        tpm = int(args.tpm)
        if not tpm and args.itpm:  # buckets apart: the words name the tighter
            tpm = int(min(args.itpm, args.otpm))
        if kind == "too_large":
            if openai:
                body = self.error_body("tokens", "Request too large for %s in organization org-dibs on tokens per "
                                       "min (TPM): Limit %d, Requested %d. The input or output tokens must be "
                                       "reduced in order to run successfully." % (model, tpm, estimate),
                                       "rate_limit_exceeded")
            else:
                body = self.error_body("rate_limit_error", "This request would exceed your organization's rate "
                                       "limit of %d tokens per minute (model: %s): it asks %d tokens, more than "
                                       "the limit itself." % (tpm, model, estimate))
            return self.finish_answer(429, body)
        if openai:
            if kind == "requests":
                what = "requests per min (RPM): Limit %d, Used %d, Requested 1" % (args.rpm, used_requests)
            else:
                what = "tokens per min (TPM): Limit %d, Used %d, Requested %d" % (tpm, used_tokens, estimate)
            body = self.error_body(kind, "Rate limit reached for %s in organization org-dibs on %s. Please try "
                                   "again in %s. Visit https://platform.openai.com/account/rate-limits to learn "
                                   "more." % (model, what, go_duration(wait)), "rate_limit_exceeded")
        else:
            if kind == "requests":
                what = "%d requests per minute" % args.rpm
            elif kind in ("input tokens", "output tokens"):
                what = "%d %s per minute" % (args.itpm if kind == "input tokens" else args.otpm, kind)
            else:
                what = "%d tokens per minute" % tpm
            body = self.error_body("rate_limit_error", "This request would exceed your organization's rate limit "
                                   "of %s (model: %s). Please try again later." % (what, model))
        extra = []
        if not args.no_headers:
            extra.append(("retry-after", str(max(1, int(math.ceil(wait))))))
            if openai:
                extra.append(("retry-after-ms", str(max(1, int(math.ceil(wait * 1000))))))
        self.finish_answer(429, body, extra=extra)


def peak_per_minute():
    """The most real usage of 200 answers whose requests arrived within any 60 s (under `lock`)."""
    log = sorted(usage_log)
    best = total = 0
    j = 0
    for t, n in log:
        total += n
        while log[j][0] <= t - 60.0:
            total -= log[j][1]
            j += 1
        best = max(best, total)
    return best


def self_check():
    """go_duration and rfc3339 against the forms the providers send."""
    cases = [(1, "1s"), (360, "6m0s"), (0.012, "12ms"), (179.56, "2m59.56s"), (0, "0s"), (8.64, "8.64s"),
             (3600, "1h0m0s"), (60.5, "1m0.5s"), (0.0004, "0s"), (0.9996, "1s")]
    for seconds, want in cases:
        got = go_duration(seconds)
        assert got == want, "go_duration(%r) = %r, not %r" % (seconds, got, want)
    got = rfc3339(1795953603.25)
    assert got == "2026-11-29T12:00:03.250Z", got
    print("ok: go_duration %d cases, rfc3339" % len(cases))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True  # the listen backlog left at Python's default (5), as people run it


def main():
    global args
    if sys.argv[1:] == ["--self-check"]:
        return self_check()
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("name")
    p.add_argument("--style", choices=["openai", "anthropic"], default="openai")
    p.add_argument("--tpm", type=float, default=30000)
    p.add_argument("--rpm", type=float, default=0)
    p.add_argument("--itpm", type=float, default=0)
    p.add_argument("--otpm", type=float, default=0)
    p.add_argument("--latency-ms", type=float, default=300)
    p.add_argument("--latency-per-token-ms", type=float, default=2)
    p.add_argument("--no-headers", action="store_true")
    p.add_argument("--spent-after", type=int, default=-1)
    p.add_argument("--overloaded-share", type=float, default=0)
    p.add_argument("--key")
    p.add_argument("--backlog", type=int, default=0, help="the listen backlog (default: Python's, 5)")
    args = p.parse_args()
    if args.backlog > 0:
        Server.request_queue_size = args.backlog
    buckets["tokens"] = Bucket(args.tpm) if args.tpm > 0 else None
    buckets["requests"] = Bucket(args.rpm) if args.rpm > 0 else None
    if args.itpm > 0 or args.otpm > 0:
        if args.style != "anthropic" or not (args.itpm > 0 and args.otpm > 0):
            p.error("--itpm and --otpm go together, with --style anthropic")
        buckets["tokens"] = None
        buckets["input"], buckets["output"] = Bucket(args.itpm), Bucket(args.otpm)
    server = Server(("127.0.0.1", 0), Handler)
    serve_announced(server, args.dir, args.name)


if __name__ == "__main__":
    main()
