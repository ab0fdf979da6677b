// An OpenAI-compatible embeddings API (POST /v1/embeddings) in two more shapes modelled on embedding
// servers as people run them at their defaults, for dibs's bench. Node's own modules only.
//
//   node unseen_embeddings_more.js DIR NAME --shape llamacpp|vllm [options] [--max-seconds S]
//
// Listens on 127.0.0.1, a free port written to DIR/NAME.port (via NAME.port.tmp and a rename)
// once it serves; exits by itself after --max-seconds (default 600), or on SIGTERM/SIGINT.
// Request/answer as tests/servers/unseen_embeddings.js: {"model": M, "input": "text" | [...]} ->
// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]}],"model":M,
//  "usage":{"prompt_tokens":N,"total_tokens":N}} (N: sum of ceil(UTF-8 bytes/4), ~4 chars a token);
// each vector is embeddings_api.py's vector_of (same floats, as json.dumps writes them).
//
// --shape llamacpp  llama.cpp's `llama-server --embedding --parallel 4` (tools/server/README.md:
//   -np slots, -ub 512; PR ggml-org/llama.cpp#7389 "return error on too large embedding input"):
//   --slots (4) slots; a request waits in one FIFO for a free slot, then its inputs run on that
//   slot one after another: --base-ms (5) + --per-input-ms (0.5) + --per-token-us (10) a token,
//   i.e. ~0.6 ms a short (10-token) input. An input over --ubatch (512) tokens fails the request
//   when it reaches its slot (as the server checks at slot launch): HTTP 500 {"error":{"code":500,
//   "message":"input (N tokens) is too large to process. increase the physical batch size
//   (current batch size: 512)","type":"server_error"}}. No cap on inputs a request. Malformed
//   JSON: 500 too (its exception handler's server_error). httplib: keep-alive 5 s, 100 requests.
//   (Simplified: the real server makes one task per input, which may spread over free slots.)
// --shape vllm  vLLM's OpenAI server (`vllm serve MODEL --task embed`; EngineArgs/SchedulerConfig
//   max_num_seqs 256, max_num_batched_tokens 8192; pooling models do no chunked prefill):
//   continuous batching, one engine: each step takes the FIFO of waiting inputs (across requests)
//   up to --max-num-seqs (256) inputs and --max-num-batched-tokens (8192) tokens and lasts
//   --base-ms (3) + --per-token-us (50) a token; a request is answered once all its inputs are done.
//   An input over --max-model-len (8192) tokens: 400 {"error":{"message":"This model's maximum
//   context length is 8192 tokens. However, you requested N tokens in the input for embedding
//   generation. Please reduce the length of the input.","type":"BadRequestError","param":null,
//   "code":400}}. No cap on inputs a request; a body over 32 MiB: 413 (the Rust frontend's fixed
//   body limit, vllm-project/vllm#46582/#47840). uvicorn keep-alive 5 s.
// Both: --dims D (default 8). GET /stats: {"requests","inputs","refused","largest",
// "max_in_flight"}; GET /reset-stats zeroes them and answers {}. Empty input list: 400.
'use strict';
const vectors = require('./embedding_vectors');
const http = require('http'), crypto = require('crypto'), fs = require('fs'), path = require('path');

const argv = process.argv.slice(2);
const positional = [], opts = {};
for (let i = 0; i < argv.length; i++) {
  const a = argv[i], eq = a.indexOf('=');
  if (!a.startsWith('--')) positional.push(a);
  else if (eq > 0) opts[a.slice(2, eq)] = a.slice(eq + 1);
  else opts[a.slice(2)] = argv[++i];
}
function usage(msg) {
  process.stderr.write((msg ? msg + '\n' : '') +
    'usage: node unseen_embeddings_more.js DIR NAME --shape llamacpp|vllm [--dims D] [--max-seconds S]\n' +
    '  llamacpp: [--slots N] [--ubatch T] [--base-ms MS] [--per-input-ms MS] [--per-token-us US]\n' +
    '  vllm:     [--max-num-seqs N] [--max-num-batched-tokens T] [--max-model-len T] [--base-ms MS] [--per-token-us US]\n');
  process.exit(2);
}
if (positional.length !== 2) usage('DIR and NAME are required');
const [dir, name] = positional;
const shape = opts.shape;
if (shape !== 'llamacpp' && shape !== 'vllm') usage('--shape must be llamacpp or vllm');
const known = new Set(['shape', 'dims', 'max-seconds', 'base-ms', 'per-token-us',
  ...(shape === 'llamacpp' ? ['slots', 'ubatch', 'per-input-ms']
    : ['max-num-seqs', 'max-num-batched-tokens', 'max-model-len'])]);
for (const k of Object.keys(opts)) if (!known.has(k)) usage('unknown option --' + k + ' for --shape ' + shape);
function num(key, dflt) {
  if (opts[key] === undefined) return dflt;
  const v = Number(opts[key]);
  if (!Number.isFinite(v) || v < 0) usage('--' + key + ' needs a number >= 0');
  return v;
}
const dims = Math.floor(num('dims', 8));
const maxSeconds = num('max-seconds', 600);
const cfg = shape === 'llamacpp' ? {
  slots: Math.max(1, Math.floor(num('slots', 4))), ubatch: Math.floor(num('ubatch', 512)),
  baseMs: num('base-ms', 5), perInputMs: num('per-input-ms', 0.5), perTokenUs: num('per-token-us', 10),
} : {
  maxNumSeqs: Math.max(1, Math.floor(num('max-num-seqs', 256))),
  maxBatchedTokens: Math.max(1, Math.floor(num('max-num-batched-tokens', 8192))),
  maxModelLen: Math.floor(num('max-model-len', 8192)),
  baseMs: num('base-ms', 3), perTokenUs: num('per-token-us', 50), payloadLimit: 32 * 1024 * 1024,
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

function send(res, status, body) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  if (status >= 400) stats.refused++;
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
// Each server's error body
function fail(res, status, message) {
  return send(res, status, shape === 'llamacpp'
    ? { error: { code: status, message, type: status >= 500 ? 'server_error' : 'invalid_request_error' } }
    : { error: { message, type: 'BadRequestError', param: null, code: status } });
}

function answer(res, job) {
  const { inputs, model } = job;
  stats.requests++;
  stats.inputs += inputs.length;
  if (inputs.length > stats.largest) stats.largest = inputs.length;
  const tokens = inputs.reduce((n, t) => n + tokensOf(t), 0);
  const head = shape === 'vllm'
    ? '{"id":"embd-' + crypto.randomBytes(16).toString('hex') + '","object":"list","created":' +
      Math.floor(Date.now() / 1000) + ',"model":' + JSON.stringify(model) + ',"data":['
    : '{"object":"list","data":[';
  const body = head +
    inputs.map((t, i) => '{"object":"embedding","index":' + i + ',"embedding":' + vectorJson(t) + '}').join(',') +
    (shape === 'vllm' ? ']' : '],"model":' + JSON.stringify(model)) +
    ',"usage":{"prompt_tokens":' + tokens + ',"total_tokens":' + tokens + '}}';
  send(res, 200, body);
}

// ---- llamacpp: a fixed number of slots; a request holds one slot and runs its inputs in turn
const llamaWaiting = []; // FIFO of requests
let freeSlots = 0;
function llamaNext() {
  while (freeSlots > 0 && llamaWaiting.length > 0) {
    const job = llamaWaiting.shift();
    const big = job.inputs.map(tokensOf).find((n) => n > cfg.ubatch);
    if (big !== undefined) { // checked when the slot launches, as llama-server does
      inFlight--;
      fail(job.res, 500, `input (${big} tokens) is too large to process. increase the physical batch size ` +
        `(current batch size: ${cfg.ubatch})`);
      continue;
    }
    freeSlots--;
    let ms = cfg.baseMs;
    for (const t of job.inputs) ms += cfg.perInputMs + (cfg.perTokenUs * tokensOf(t)) / 1000;
    setTimeout(() => { freeSlots++; inFlight--; answer(job.res, job); llamaNext(); }, ms);
  }
}

// ---- vllm: continuous batching of inputs across requests, one engine step at a time
const vllmWaiting = []; // FIFO of {job, tokens}
let stepping = false;
function vllmStep() {
  if (stepping || vllmWaiting.length === 0) return;
  stepping = true;
  const batch = [];
  let tokens = 0;
  while (vllmWaiting.length > 0 && batch.length < cfg.maxNumSeqs &&
    (batch.length === 0 || tokens + vllmWaiting[0].tokens <= cfg.maxBatchedTokens)) {
    const e = vllmWaiting.shift();
    batch.push(e);
    tokens += e.tokens;
  }
  setTimeout(() => {
    for (const e of batch) {
      if (--e.job.pending === 0) {
        inFlight--;
        answer(e.job.res, e.job);
      }
    }
    stepping = false;
    vllmStep();
  }, cfg.baseMs + (cfg.perTokenUs * tokens) / 1000);
}

// ---- http
function handlePost(req, res, raw, tooLarge) {
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
    return fail(res, shape === 'llamacpp' ? 500 : 400, shape === 'llamacpp'
      ? '[json.exception.parse_error.101] parse error: ' + e.message
      : 'JSON decode error: ' + e.message);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return fail(res, 400, shape === 'llamacpp' ? '"input" or "content" must be provided' : 'Input should be a valid dictionary');
  }
  let inputs = body.input;
  if (typeof inputs === 'string') inputs = [inputs];
  if (inputs === undefined && shape === 'llamacpp') return fail(res, 400, '"input" or "content" must be provided');
  if (!Array.isArray(inputs) || !inputs.every((t) => typeof t === 'string')) {
    return fail(res, 400, shape === 'llamacpp' ? '"prompt" must be a string, a list of tokens, or a list of prompts'
      : 'input: Input should be a valid string or list of strings');
  }
  if (inputs.length === 0) return fail(res, 400, shape === 'llamacpp' ? 'Input content cannot be empty' : 'input: list should not be empty');
  const job = { res, inputs, model: body.model === undefined ? '' : body.model };
  if (shape === 'llamacpp') {
    admitted();
    llamaWaiting.push(job);
    return llamaNext();
  }
  const toks = inputs.map((t) => Math.max(1, tokensOf(t)));
  const big = toks.find((n) => n > cfg.maxModelLen);
  if (big !== undefined) {
    return fail(res, 400, `This model's maximum context length is ${cfg.maxModelLen} tokens. However, you ` +
      `requested ${big} tokens in the input for embedding generation. Please reduce the length of the input.`);
  }
  admitted();
  job.pending = inputs.length;
  toks.forEach((n) => vllmWaiting.push({ job, tokens: n }));
  vllmStep();
}

const server = http.createServer((req, res) => {
  const url = req.url.split('?')[0];
  if (req.method === 'GET' && (url === '/stats' || url === '/reset-stats')) {
    req.resume();
    if (url === '/reset-stats') for (const k of Object.keys(stats)) stats[k] = 0;
    return send(res, 200, url === '/stats' ? stats : {});
  }
  const routes = shape === 'llamacpp' ? ['/v1/embeddings', '/embeddings'] : ['/v1/embeddings'];
  if (!routes.includes(url) || req.method !== 'POST') {
    req.resume();
    return send(res, routes.includes(url) ? 405 : 404, { detail: routes.includes(url) ? 'Method Not Allowed' : 'Not Found' });
  }
  const chunks = [];
  let size = 0, tooLarge = false;
  req.on('data', (c) => {
    size += c.length;
    if (shape === 'vllm' && size > cfg.payloadLimit) tooLarge = true;
    if (!tooLarge) chunks.push(c);
  });
  req.on('end', () => handlePost(req, res, Buffer.concat(chunks), tooLarge));
  req.on('error', () => {});
});
server.keepAliveTimeout = 5000; // httplib's CPPHTTPLIB_KEEPALIVE_TIMEOUT_SECOND; uvicorn's timeout_keep_alive
if (shape === 'llamacpp') {
  freeSlots = cfg.slots;
  server.maxRequestsPerSocket = 100; // httplib's CPPHTTPLIB_KEEPALIVE_MAX_COUNT
}
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
