#!/usr/bin/env python3
"""A run's traces as a collector receives them: `dibs enrich` on a JSON Lines file against an
http.server API, with --otlp-endpoint at the test receiver (otlp_receiver.js: every request decoded
with the official OTLP protobuf definitions). Checks:

- one trace per item, a span per claim of it (dibs.item), a child span per API call (one per
  request the API saw for that item) and one for each store write; ids well formed, every child's
  parent the item span of its own trace;
- the API saw, in each request's traceparent, the trace of its item and the span id of that call;
- no secret (the API key in the URL, OTEL_EXPORTER_OTLP_HEADERS' value) and no query value in any
  attribute; the headers and the service name as the environment set them;
- OTEL_TRACES_SAMPLER_ARG=0: only the failed items' traces are exported (failed items always are),
  and the calls' traceparent says "not sampled";
- --no-traceparent: no header, the traces all the same;
- docs/operations.md's walkthrough (the ```sh block marked `<!-- otlp: walkthrough -->`), run as
  written with the stub in place of ip-api.com and the receiver in place of the collector.

  test_otlp_traces.py --bin BUILD/bin --build BUILD --doc docs/operations.md
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

from otlp_rig import api_server, receiver, receiver_modules, write_items

SECRET = "S3CRETKEY"
QUERY_VALUE = "xx-lang-value"
HEADER_SECRET = "hdr-s3cret"
GOOD = [f"8.8.{i}.{i + 1}" for i in range(10)]
FAIL = ["9.9.9.1", "9.9.9.2"]
FLAKY = ["1.1.1.1", "1.0.0.1"]

problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


def run_enrich(bin_dir, work, name, ips, api, rx, env_extra, flags=()):
    src = os.path.join(work, f"{name}.jsonl")
    out = os.path.join(work, f"{name}.out.jsonl")
    write_items(src, ips)
    env = dict(os.environ, OTEL_EXPORTER_OTLP_HEADERS=f"x-test-header={HEADER_SECRET}", OTEL_SERVICE_NAME="geo-test")
    env.update(env_extra)
    cmd = [os.path.join(bin_dir, "dibs"), "enrich", "--store", f"jsonl:{src}", "--out", out, "--target", "geo",
           "--url", f"{api.url}/json/{{ip}}?key={SECRET}&lang={QUERY_VALUE}", "--otlp-endpoint", rx.url,
           "--no-preflight", "--no-progress", "--backoff-base", "10ms", "--backoff-max", "20ms", *flags]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if r.returncode not in (0, 1):  # 1: some items failed, as they should
        sys.exit(f"dibs enrich ({name}) exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r


def ip_of(call):
    m = re.search(r"/json/([0-9.]+)", call["attributes"].get("url.full", ""))
    return m.group(1) if m else None


def check_spans_well_formed(spans):
    for s in spans:
        check(re.fullmatch(r"[0-9a-f]{32}", s["traceId"]) and s["traceId"] != "0" * 32, f"bad trace id {s['traceId']}")
        check(re.fullmatch(r"[0-9a-f]{16}", s["spanId"]) and s["spanId"] != "0" * 16, f"bad span id {s['spanId']}")
        check(s["parentSpanId"] == "" or re.fullmatch(r"[0-9a-f]{16}", s["parentSpanId"]), "bad parent id")
        check(int(s["end"]) >= int(s["start"]) > 0, f"span {s['name']} ends before it starts")
        for key, value in list(s["attributes"].items()) + list(s["resource"].items()):
            text = str(value)
            for secret in (SECRET, QUERY_VALUE, HEADER_SECRET):
                check(secret not in text, f"attribute {key} shows a secret or query value: {text}")
        check(s["header"] == HEADER_SECRET, "the receiver did not get OTEL_EXPORTER_OTLP_HEADERS' header")
        check(s["resource"].get("service.name") == "geo-test", "service.name is not OTEL_SERVICE_NAME's")


def by_trace(spans):
    traces = {}
    for s in spans:
        traces.setdefault(s["traceId"], []).append(s)
    return traces


def check_full_run(spans, api):
    errors = [s for s in spans if "error" in s]
    check(not errors, f"the receiver refused requests: {errors[:3]}")
    spans = [s for s in spans if "error" not in s]
    check_spans_well_formed(spans)
    traces = by_trace(spans)
    ids = {s["spanId"] for s in spans}
    check(len(ids) == len(spans), "a span id repeats")
    key_trace = {}
    for trace_id, group in traces.items():
        items = {s["spanId"]: s for s in group if s["name"] == "dibs.item"}
        check(items, f"trace {trace_id} has no item span")
        keys = {s["attributes"]["dibs.item.key"] for s in items.values()}
        check(len(keys) == 1, f"trace {trace_id} holds items {keys}")
        for k in keys:
            check(k not in key_trace, f"item {k} has two traces")
            key_trace[k] = trace_id
        for s in group:
            if s["name"] == "dibs.item":
                check(s["parentSpanId"] == "", "an item span has a parent")
                continue
            parent = items.get(s["parentSpanId"])
            check(parent is not None, f"span {s['name']} of trace {trace_id} has no item span of its trace as parent")
            if parent and s["name"] == "GET":
                check(s["attributes"].get("dibs.attempt") == parent["attributes"]["dibs.item.attempt"],
                      "a call's attempt is not its item span's")
        calls = [s for s in group if s["name"] == "GET"]
        writes = [s for s in group if s["name"].startswith("dibs.store.")]
        check(len(calls) == len(items), f"trace {trace_id}: {len(calls)} call span(s) for {len(items)} claim(s)")
        check(len(writes) == len(items), f"trace {trace_id}: {len(writes)} write span(s) for {len(items)} claim(s)")
        ip = ip_of(calls[0]) if calls else None
        check(ip is not None, f"trace {trace_id}: no call with an address")
        if ip is None:
            continue
        seen = api.seen.get(ip, [])
        check(len(calls) == len(seen), f"{ip}: {len(calls)} call span(s), the API saw {len(seen)} request(s)")
        call_ids = {c["spanId"] for c in calls}
        for header in seen:
            m = re.fullmatch(r"00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])", header or "")
            check(m is not None, f"{ip}: traceparent {header!r}")
            if m:
                check(m.group(1) == trace_id, f"{ip}: the API saw trace {m.group(1)}, the item's is {trace_id}")
                check(m.group(2) in call_ids, f"{ip}: the API saw span {m.group(2)}, no call span of the trace")
                check(m.group(3) == "1", f"{ip}: a sampled trace sent as not sampled")
        outcomes = sorted(s["attributes"]["dibs.outcome"] for s in items.values())
        if ip in FAIL:
            check(outcomes == ["failed"], f"{ip}: outcomes {outcomes}")
            failed = next(iter(items.values()))
            check(failed["status"].get("code") == 2 and "404" in failed["status"].get("message", ""),
                  f"{ip}: the failed item's span has status {failed['status']}")
        elif ip in FLAKY:
            check(outcomes == ["done", "retried"], f"{ip}: outcomes {outcomes} (a 503, then an answer)")
            check(len(calls) == 2, f"{ip}: {len(calls)} calls")
        else:
            check(outcomes == ["done"], f"{ip}: outcomes {outcomes}")
    check(len(key_trace) == len(GOOD + FAIL + FLAKY), f"{len(key_trace)} item traces for {len(GOOD + FAIL + FLAKY)} items")


def run_walkthrough(bin_dir, doc, work, rx):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"))
    from marked_block import marked_block
    block = marked_block(doc, "otlp", "walkthrough")
    stub = subprocess.Popen([os.path.join(bin_dir, "dibs"), "stub", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        m = re.search(r"listening on (http://[0-9.]+:\d+)", stub.stdout.readline())
        check(m is not None, "dibs stub did not say where it listens")
        if not m:
            return
        script = block.replace("http://ip-api.com", m.group(1)).replace("http://127.0.0.1:4318", rx.url)
        check(script != block, "the walkthrough names neither ip-api.com nor the collector at 127.0.0.1:4318")
        before = len(rx.spans())
        place = os.path.join(work, "walkthrough")
        os.makedirs(place)
        env = dict(os.environ, PATH=os.path.abspath(bin_dir) + os.pathsep + os.environ["PATH"])
        r = subprocess.run(["bash", "-e", "-c", script], cwd=place, env=env, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"the walkthrough failed ({r.returncode}): {r.stdout}{r.stderr}")
        check(f"span(s) exported to {rx.url}/v1/traces" in r.stderr + r.stdout, "the run did not say where its traces went")
        items = [s for s in rx.spans()[before:] if s.get("name") == "dibs.item"]
        check(len(items) == 50, f"the walkthrough's run sent {len(items)} item span(s), not 50")
        check(all(s["resource"].get("service.name") == "geo-enrich" and s["attributes"]["dibs.outcome"] == "done"
                  for s in items), "the walkthrough's spans are not geo-enrich's, or not done")
    finally:
        stub.terminate()
        stub.wait(10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--doc", required=True)
    a = ap.parse_args()
    modules = receiver_modules(a.build)
    with tempfile.TemporaryDirectory(prefix="dibs-otlp-") as work:
        rx = receiver(modules, work)
        try:
            api = api_server(fail=FAIL, flaky=FLAKY)
            run_enrich(a.bin, work, "all", GOOD + FAIL + FLAKY, api, rx, {})
            api.stop()
            check_full_run(rx.spans(), api)
            full = len(rx.spans())

            # Sampling none: the failed items' traces all the same, the others not at all.
            api = api_server(fail=FAIL)
            run_enrich(a.bin, work, "none", GOOD + FAIL, api, rx, {"OTEL_TRACES_SAMPLER_ARG": "0"})
            api.stop()
            sampled = [s for s in rx.spans()[full:] if "error" not in s]
            keys = {s["attributes"]["dibs.item.key"] for s in sampled if s["name"] == "dibs.item"}
            outcomes = {s["attributes"]["dibs.outcome"] for s in sampled if s["name"] == "dibs.item"}
            check(len(keys) == len(FAIL) and outcomes == {"failed"},
                  f"sampler 0: item traces exported for {len(keys)} item(s) with outcomes {outcomes}")
            for ip, headers in api.seen.items():
                check(all(h and h.endswith("-00") for h in headers), f"sampler 0: {ip} saw traceparent {headers}")
            full = len(rx.spans())

            # --no-traceparent: the API hears nothing of the trace; the collector all the same.
            api = api_server()
            run_enrich(a.bin, work, "quiet", GOOD[:3], api, rx, {}, ["--no-traceparent"])
            api.stop()
            check(all(h is None for hs in api.seen.values() for h in hs), "--no-traceparent: a header was sent")
            check(len([s for s in rx.spans()[full:] if s.get("name") == "dibs.item"]) == 3,
                  "--no-traceparent: the items' traces are missing")

            run_walkthrough(a.bin, a.doc, work, rx)
        finally:
            rx.stop()
    if problems:
        print("\n".join(problems[:40]))
        print(f"{len(problems)} problem(s)")
        return 1
    print("otlp traces: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
