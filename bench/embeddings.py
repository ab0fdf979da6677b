#!/usr/bin/env python3
"""make bench, part "embeddings": many rows in one request. ITEMS short texts (a JSON Lines file)
embedded against an OpenAI-compatible /v1/embeddings on loopback (tests/servers/embeddings_api.py,
Python's http.server: each request LATENCY ms plus a little an input, vectors a hash of each text)
(the median of 3 runs each) with dibs's default flags and the request shape of docs/embeddings.md (--batch-url --batch-body
--batch-item), beside a sweep of fixed --batch-size x --fixed-concurrency, same server, same file.
The figures: rows a second, requests a row, and the rows whose vector is not their own text's
(checked against the hash; must be 0). Goals: <= 1 request per 64 rows with default flags, and
>= 0.9 of the best fixed setting's rows a second.

  bench/embeddings.py --dibs build/bin/dibs [--items 20000] [--latency-ms 100] [--repeats 3] [--pairs 5]
                      [--server python|tei|ollama|llamacpp|vllm] [--md F] [--json F]

The sweep gives each setting the median of --repeats runs; then the default and the sweep's best
run by turns, --pairs times (the machine is noisy, and a run lasts well under a second): the
figure is the median of the pairs' ratios. --server tei|ollama: tests/servers/unseen_embeddings.js
(Node's http, shapes of text-embeddings-inference and Ollama written apart from dibs's limit: 32
inputs a request and dynamic batching on one worker; one request at a time), instead of Python's;
--server llamacpp|vllm: tests/servers/unseen_embeddings_more.js (llama.cpp's server: 4 slots, a
request's inputs in turn on one; vLLM's continuous batching), written after the batch size grew.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "tests", "servers", "embeddings_api.py")
UNSEEN = os.path.join(HERE, "..", "tests", "servers", "unseen_embeddings.js")
UNSEEN_MORE = os.path.join(HERE, "..", "tests", "servers", "unseen_embeddings_more.js")
BODY = '{"model": "text-embedding-3-small", "input": [{text}]}'


def start_api(tmp, latency_ms, server):
    if server == "python":
        argv = ["/usr/bin/python3", API, tmp, "api", "--latency-ms", str(latency_ms)]
    else:
        script = UNSEEN_MORE if server in ("llamacpp", "vllm") else UNSEEN
        argv = ["node", script, tmp, "api", "--shape", server, "--max-seconds", "3600"]
    proc = subprocess.Popen(argv)
    port_file = os.path.join(tmp, "api.port")
    deadline = time.monotonic() + 30
    while not os.path.exists(port_file):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("the embeddings server did not start")
        time.sleep(0.05)
    return proc, int(open(port_file).read())


def stats(port):
    return json.load(urllib.request.urlopen("http://127.0.0.1:%d/stats" % port))


def run(dibs, port, tmp, items, flags):
    path = os.path.join(tmp, "texts.jsonl")
    with open(path, "w") as f:
        for i in range(items):
            f.write(json.dumps({"id": i, "text": "short text %d about kettles and tea, line %d" % (i, i * 7919 % 100003)}) + "\n")
    out = os.path.join(tmp, "out.jsonl")
    if os.path.exists(out):
        os.remove(out)
    urllib.request.urlopen("http://127.0.0.1:%d/reset-stats" % port).read()
    argv = [dibs, "enrich", "--store", "jsonl:" + path, "--out", out, "--source", "text", "--target", "emb",
            "--batch-url", "http://127.0.0.1:%d/v1/embeddings" % port, "--batch-body", BODY, "--batch-item", "/data/{i}",
            "--no-progress"] + flags
    start = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    took = time.monotonic() - start
    said = p.stdout + p.stderr
    if "completed=%d failed=0" % items not in said:
        raise RuntimeError("dibs %s did not finish every row: %s" % (" ".join(flags), said[-800:]))
    s = stats(port)
    check = subprocess.run(["/usr/bin/python3", API, "--check", out, "text", "emb.embedding"], capture_output=True, text=True)
    wrong = check.stdout.strip()
    return {"flags": " ".join(flags) or "(defaults)", "seconds": round(took, 2), "rows_per_s": round(items / took, 1),
            "requests": s["requests"], "requests_per_row": round(s["requests"] / items, 4), "largest": s["largest"],
            "check": wrong}


def median_run(a, port, tmp, flags):
    """The run of `flags` with the median rows a second of a.repeats (the machine is noisy)."""
    runs = sorted((run(a.dibs, port, tmp, a.items, flags) for _ in range(a.repeats)), key=lambda r: r["rows_per_s"])
    return runs[len(runs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dibs", required=True)
    ap.add_argument("--items", type=int, default=20000)
    ap.add_argument("--latency-ms", type=float, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="32,64,100,256")
    ap.add_argument("--concurrencies", default="1024,3200,6400,12800")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--server", default="python", choices=["python", "tei", "ollama", "llamacpp", "vllm"])
    ap.add_argument("--md")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        api, port = start_api(tmp, a.latency_ms, a.server)
        try:
            default = median_run(a, port, tmp, [])
            print(default, flush=True)
            sweep = []
            for size in a.sizes.split(","):
                for conc in a.concurrencies.split(","):
                    r = median_run(a, port, tmp, ["--batch-size", size, "--concurrency", conc, "--fixed-concurrency"])
                    print(r, flush=True)
                    sweep.append(r)
            best = max(sweep, key=lambda r: r["rows_per_s"])
            best_flags = best["flags"].split(" ")
            pairs = []  # (default, best) run by turns: the machine's moods fall on both
            for _ in range(a.pairs):
                d = run(a.dibs, port, tmp, a.items, [])
                b = run(a.dibs, port, tmp, a.items, best_flags)
                pairs.append((d, b, d["rows_per_s"] / b["rows_per_s"]))
                print("pair", d["rows_per_s"], b["rows_per_s"], round(pairs[-1][2], 3), flush=True)
        finally:
            api.terminate()
            api.wait()
    sweep_ratio = default["rows_per_s"] / best["rows_per_s"]
    ratios = sorted(p[2] for p in pairs)
    ratio = ratios[len(ratios) // 2] if ratios else sweep_ratio
    server = ("tests/servers/embeddings_api.py (%g ms a request plus 0.05 ms an input, Python's http.server)" % a.latency_ms
              if a.server == "python" else
              "tests/servers/%s --shape %s at its defaults (Node's http; a shape dibs was not tuned on)" % (os.path.basename(UNSEEN_MORE if a.server in ("llamacpp", "vllm") else UNSEEN), a.server))
    lines = ["## Embeddings: many rows a request (bench/embeddings.py --server %s)" % a.server, "",
             "%d short texts, a JSON Lines file, against %s. Default flags beside every fixed --batch-size x "
             "--fixed-concurrency of the sweep (--batch-size B --concurrency C --fixed-concurrency: C rows in flight), "
             "same server, one sitting, the median of %d runs each." % (a.items, server, a.repeats), "",
             "| flags | rows/s | requests/row | largest batch | seconds | vectors checked |", "|---|---|---|---|---|---|"]
    for r in [default] + sweep:
        lines.append("| %s | %s | %s | %s | %s | %s |" % (r["flags"], r["rows_per_s"], r["requests_per_row"], r["largest"],
                                                       r["seconds"], r["check"]))
    lines += ["", "Then the default and the best fixed setting (%s) by turns, %d pairs: default/best rows a second %s; "
                  "default vectors %s." % (best["flags"], len(pairs), ", ".join("%.2f" % r for r in ratios),
                                           "; ".join(sorted(set(p[0]["check"] for p in pairs)))),
              "", "Default flags: %.3f requests a row (goal <= %.4f, 1 per 64), **%.2f** of the best fixed setting's rows/s "
                  "(the median of the pairs; the sweep's medians alone: %.2f, %s against %s rows/s; goal >= 0.9)."
              % (default["requests_per_row"], 1 / 64, ratio, sweep_ratio, default["rows_per_s"], best["rows_per_s"]), ""]
    text = "\n".join(lines)
    print(text)
    if a.md:
        open(a.md, "w").write(text + "\n")
    if a.json:
        json.dump({"default": default, "sweep": sweep, "pairs": [[p[0], p[1]] for p in pairs], "ratio": ratio,
                   "sweep_ratio": sweep_ratio}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
