// An OpenAI-compatible embeddings API (POST /v1/embeddings) in one of two shapes modelled on
// embedding servers as people run them, for dibs's bench. Node's own modules only.
//
//   node unseen_embeddings.js DIR NAME --shape tei|ollama [options] [--max-seconds S]
//
// Listens on 127.0.0.1, a free port written to DIR/NAME.port (via NAME.port.tmp and a rename)
// once it serves; exits by itself after --max-seconds (default 600), or on SIGTERM/SIGINT.
//
// Request: {"model": M, "input": "text" | ["text", ...]}
// Answer:  {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]},...],
//           "model":M,"usage":{"prompt_tokens":N,"total_tokens":N}}  (N: sum of ceil(UTF-8 bytes/4))
// Each input's vector is the one tests/servers/embeddings_api.py's vector_of gives it (the same
// floats, written as Python's json.dumps writes them), so its --check accepts them.
//
// --shape tei     text-embeddings-inference at its defaults: at most --max-client-batch (32)
//                 inputs a request, else 413 {"error":"batch size 40 > maximum allowed batch size
//                 32","error_type":"Validation"}; at most --max-concurrent (512) requests admitted
//                 at once, else 429 {"error":"Model is overloaded","error_type":"Overloaded"} (no
//                 Retry-After); one worker running dynamic batches of queued inputs (FIFO, across
//                 requests) of at most --max-batch-tokens (16384) tokens, each batch taking
//                 --base-ms (8) + --per-token-us (20) a token; a request is answered once all its
//                 inputs are done. Bodies over 2 MB: 413. Keep-alive connections never timed out.
// --shape ollama  Ollama serving embeddings (also at /api/embed in Ollama's own shape): one request
//                 at a time, FIFO; at most --max-queue (512) waiting, else 503 {"error":"server
//                 busy, please try again. maximum pending requests exceeded"}; a request takes
//                 --base-ms (15) + --per-input-ms (0.4) an input; no limit on inputs a request.
//                 Node's default keep-alive timeout (5 s).
// Both: --dims D (default 8). GET /stats: {"requests","inputs","refused","largest",
// "max_in_flight"}; GET /reset-stats zeroes them and answers {}. Malformed JSON: 400.
'use strict';
const vectors = require('./embedding_vectors');
const http = require('http');
const fs = require('fs');
const path = require('path');

// ---- arguments
const argv = process.argv.slice(2);
const positional = [];
const opts = {};
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a.startsWith('--')) {
    const eq = a.indexOf('=');
    if (eq > 0) opts[a.slice(2, eq)] = a.slice(eq + 1);
    else opts[a.slice(2)] = argv[++i];
  } else {
    positional.push(a);
  }
}
function usage(msg) {
  process.stderr.write((msg ? msg + '\n' : '') +
    'usage: node unseen_embeddings.js DIR NAME --shape tei|ollama [--dims D] [--max-seconds S]\n' +
    '  tei:    [--max-concurrent N] [--max-batch-tokens T] [--max-client-batch N] [--base-ms MS] [--per-token-us US]\n' +
    '  ollama: [--max-queue N] [--base-ms MS] [--per-input-ms MS]\n');
  process.exit(2);
}
if (positional.length !== 2) usage('DIR and NAME are required');
const [dir, name] = positional;
const shape = opts.shape;
if (shape !== 'tei' && shape !== 'ollama') usage('--shape must be tei or ollama');
const known = new Set(['shape', 'dims', 'max-seconds', 'base-ms',
  ...(shape === 'tei' ? ['max-concurrent', 'max-batch-tokens', 'max-client-batch', 'per-token-us']
    : ['max-queue', 'per-input-ms'])]);
for (const k of Object.keys(opts)) if (!known.has(k)) usage('unknown option --' + k + ' for --shape ' + shape);
function num(key, dflt) {
  if (opts[key] === undefined) return dflt;
  const v = Number(opts[key]);
  if (!Number.isFinite(v) || v < 0) usage('--' + key + ' needs a number >= 0');
  return v;
}
const dims = Math.floor(num('dims', 8));
const maxSeconds = num('max-seconds', 600);
const cfg = shape === 'tei' ? {
  maxConcurrent: Math.floor(num('max-concurrent', 512)),
  maxBatchTokens: Math.max(1, Math.floor(num('max-batch-tokens', 16384))),
  maxClientBatch: Math.floor(num('max-client-batch', 32)),
  baseMs: num('base-ms', 8),
  perTokenUs: num('per-token-us', 20),
  payloadLimit: 2000000,
} : {
  maxQueue: Math.floor(num('max-queue', 512)),
  baseMs: num('base-ms', 15),
  perInputMs: num('per-input-ms', 0.4),
};

// ---- vectors: tests/servers/embeddings_api.py's vector_of, bit for bit (embedding_vectors.js)
const vectorJson = (text) => vectors.vectorJson(text, dims);
const tokensOf = (t) => Math.ceil(Buffer.byteLength(t, 'utf8') / 4);

// ---- stats
const stats = { requests: 0, inputs: 0, refused: 0, largest: 0, max_in_flight: 0 };
let inFlight = 0;
function admitted() {
  inFlight++;
  if (inFlight > stats.max_in_flight) stats.max_in_flight = inFlight;
}

function send(res, status, body, extraHeaders) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
  if (extraHeaders) Object.assign(headers, extraHeaders);
  if (status >= 400) stats.refused++;
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, headers);
  res.end(text);
}

function answer(res, job) {
  const { inputs, model, ollamaShape } = job;
  stats.requests++;
  stats.inputs += inputs.length;
  if (inputs.length > stats.largest) stats.largest = inputs.length;
  let tokens = 0;
  for (const t of inputs) tokens += tokensOf(t);
  let body;
  if (ollamaShape) {
    const ns = Math.round((Date.now() - job.started) * 1e6);
    body = '{"model":' + JSON.stringify(model) + ',"embeddings":[' + inputs.map(vectorJson).join(',') +
      '],"total_duration":' + ns + ',"load_duration":0,"prompt_eval_count":' + tokens + '}';
  } else {
    body = '{"object":"list","data":[' +
      inputs.map((t, i) => '{"object":"embedding","index":' + i + ',"embedding":' + vectorJson(t) + '}').join(',') +
      '],"model":' + JSON.stringify(model) + ',"usage":{"prompt_tokens":' + tokens + ',"total_tokens":' + tokens + '}}';
  }
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

// ---- tei: one worker, dynamic batches of inputs across requests
const teiQueue = []; // entries {job, tokens}, FIFO
let teiBusy = false;
function teiSchedule() {
  if (teiBusy || teiQueue.length === 0) return;
  teiBusy = true;
  const batch = [];
  let tokens = 0;
  while (teiQueue.length > 0) {
    const e = teiQueue[0];
    if (batch.length > 0 && tokens + e.tokens > cfg.maxBatchTokens) break;
    batch.push(teiQueue.shift());
    tokens += e.tokens;
  }
  setTimeout(() => {
    for (const e of batch) {
      const job = e.job;
      if (--job.pending === 0) {
        inFlight--;
        answer(job.res, job);
      }
    }
    teiBusy = false;
    teiSchedule();
  }, cfg.baseMs + (cfg.perTokenUs * tokens) / 1000);
}
function teiEmbed(res, job) {
  const n = job.inputs.length;
  if (n > cfg.maxClientBatch) {
    return send(res, 413, { error: `batch size ${n} > maximum allowed batch size ${cfg.maxClientBatch}`,
      error_type: 'Validation' });
  }
  if (inFlight >= cfg.maxConcurrent) {
    return send(res, 429, { error: 'Model is overloaded', error_type: 'Overloaded' });
  }
  admitted();
  job.pending = n;
  for (const t of job.inputs) teiQueue.push({ job, tokens: Math.max(1, tokensOf(t)) });
  teiSchedule();
}

// ---- ollama: one request at a time, a bounded FIFO of waiting ones
const ollamaQueue = [];
let ollamaBusy = false;
function ollamaNext() {
  if (ollamaBusy || ollamaQueue.length === 0) return;
  ollamaBusy = true;
  const job = ollamaQueue.shift();
  setTimeout(() => {
    inFlight--;
    answer(job.res, job);
    ollamaBusy = false;
    ollamaNext();
  }, cfg.baseMs + cfg.perInputMs * job.inputs.length);
}
function ollamaEmbed(res, job) {
  if (ollamaQueue.length >= cfg.maxQueue) {
    return send(res, 503, { error: 'server busy, please try again. maximum pending requests exceeded' });
  }
  admitted();
  ollamaQueue.push(job);
  ollamaNext();
}

// ---- http
function handlePost(req, res, raw, tooLarge) {
  const ollamaShape = shape === 'ollama' && req.url.split('?')[0] === '/api/embed';
  if (tooLarge) {
    stats.refused++;
    const text = 'Failed to buffer the request body: length limit exceeded';
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(413, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
    return res.end(text);
  }
  let body;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    return send(res, 400, shape === 'tei'
      ? { error: 'Failed to parse the request body as JSON: ' + e.message, error_type: 'Validation' }
      : { error: e.message });
  }
  const bad = (msg) => send(res, shape === 'tei' ? 422 : 400,
    shape === 'tei' ? { error: msg, error_type: 'Validation' } : { error: msg });
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return bad('Failed to deserialize the JSON body into the target type: invalid type: expected struct');
  }
  let inputs = body.input;
  if (typeof inputs === 'string') inputs = [inputs];
  if (!Array.isArray(inputs) || !inputs.every((t) => typeof t === 'string')) {
    return bad(shape === 'tei'
      ? 'Failed to deserialize the JSON body into the target type: input: data did not match any variant'
      : 'invalid input type');
  }
  if (inputs.length === 0) {
    if (shape === 'tei') return send(res, 422, { error: '`inputs` cannot be empty', error_type: 'Validation' });
  }
  const job = { res, inputs, model: body.model === undefined ? '' : body.model, ollamaShape, started: Date.now() };
  if (shape === 'tei') teiEmbed(res, job);
  else ollamaEmbed(res, job);
}

const server = http.createServer((req, res) => {
  const url = req.url.split('?')[0];
  if (req.method === 'GET' && url === '/stats') {
    req.resume();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify(stats));
  }
  if (req.method === 'GET' && url === '/reset-stats') {
    req.resume();
    for (const k of Object.keys(stats)) stats[k] = 0;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end('{}');
  }
  const routes = shape === 'tei' ? ['/v1/embeddings'] : ['/v1/embeddings', '/api/embed'];
  if (!routes.includes(url)) {
    req.resume();
    return send(res, 404, { error: 'no route ' + url });
  }
  if (req.method !== 'POST') {
    req.resume();
    return send(res, 405, { error: 'method not allowed' });
  }
  const chunks = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (c) => {
    size += c.length;
    if (shape === 'tei' && size > cfg.payloadLimit) tooLarge = true;
    if (!tooLarge) chunks.push(c);
  });
  req.on('end', () => handlePost(req, res, Buffer.concat(chunks), tooLarge));
  req.on('error', () => {});
});
if (shape === 'tei') {
  server.keepAliveTimeout = 0; // hyper: an idle keep-alive connection stays open
  server.requestTimeout = 0;
}
// ollama: Node's defaults (keepAliveTimeout 5000 ms)
server.on('clientError', (err, socket) => {
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  else socket.destroy();
});
server.listen(0, '127.0.0.1', () => {
  const file = path.join(dir, name + '.port');
  fs.writeFileSync(file + '.tmp', String(server.address().port));
  fs.renameSync(file + '.tmp', file);
});
setTimeout(() => process.exit(0), maxSeconds * 1000).unref();
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
