// A test OTLP/HTTP receiver: decodes every ExportTraceServiceRequest (OTLP/JSON) with the
// official protobuf definitions that npm's @opentelemetry/otlp-transformer ships (its generated
// protobufjs root: ExportTraceServiceRequest.fromObject and verify), checks the JSON spells only
// fields the definitions know, and writes each span decoded, one JSON line per span, to OUT. A
// request that fails a check is answered 400 and written as {"error": ...}.
//
//   node otlp_receiver.js MODULES_DIR OUT PORT_FILE [ok|hang|503]
//
// MODULES_DIR: the node_modules the test setup installed the package into. PORT_FILE: where the
// port it listens on (127.0.0.1, a free one) is written. hang: never answers; 503: refuses all.
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const [modulesDir, outFile, portFile, mode = 'ok'] = process.argv.slice(2);
const root = require(path.join(modulesDir, '@opentelemetry/otlp-transformer/build/src/generated/root'));
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const idFields = { traceId: 32, spanId: 16, parentSpanId: 16 };

// OTLP/JSON spells trace and span ids as hex (not protobuf JSON's base64): check them and make
// them the bytes the protobuf definitions hold.
function idsToBytes(value, where) {
  if (Array.isArray(value)) return value.map((v, i) => idsToBytes(v, `${where}[${i}]`));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k in idFields && typeof v === 'string') {
      if (v === '' && k === 'parentSpanId') continue;
      if (!new RegExp(`^[0-9a-f]{${idFields[k]}}$`).test(v)) throw new Error(`${where}.${k} is no ${idFields[k]}-digit hex id: ${v}`);
      if (/^0+$/.test(v)) throw new Error(`${where}.${k} is all zero`);
      out[k] = Buffer.from(v, 'hex');
    } else {
      out[k] = idsToBytes(v, `${where}.${k}`);
    }
  }
  return out;
}

function isDefault(v) {
  return v === 0 || v === '' || v === false || v === '0' || (Array.isArray(v) && v.length === 0) ||
         (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
}

// Every member the JSON gives with a value must survive the definitions: a misspelled field
// ("spanID") or one in the wrong place would be dropped by fromObject without a word.
function checkKnown(input, decoded, where) {
  if (input === null || typeof input !== 'object') return;
  if (Array.isArray(input)) {
    input.forEach((v, i) => checkKnown(v, (decoded || [])[i], `${where}[${i}]`));
    return;
  }
  for (const [k, v] of Object.entries(input)) {
    if (isDefault(v)) continue;
    if (decoded === undefined || decoded === null || !(k in decoded)) throw new Error(`${where}.${k} is not in the OTLP definitions`);
    checkKnown(v, decoded[k], `${where}.${k}`);
  }
}

function attributeValue(v) {
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('boolValue' in v) return v.boolValue;
  if ('doubleValue' in v) return v.doubleValue;
  return null;
}

function decode(body, headers) {
  if (!String(headers['content-type'] || '').startsWith('application/json')) throw new Error(`content-type ${headers['content-type']}`);
  const json = JSON.parse(body);
  const message = Request.fromObject(idsToBytes(json, 'request'));
  const problem = Request.verify(message);
  if (problem) throw new Error(`verify: ${problem}`);
  // Through the wire format and back: what a collector would hold.
  const back = Request.toObject(Request.decode(Request.encode(message).finish()),
                                { longs: String, enums: Number, bytes: String, defaults: false });
  checkKnown(json, Request.toObject(message, { longs: String, enums: Number, bytes: String, defaults: false }), 'request');
  const lines = [];
  for (const rs of back.resourceSpans || []) {
    const resource = {};
    for (const a of (rs.resource || {}).attributes || []) resource[a.key] = attributeValue(a.value);
    for (const ss of rs.scopeSpans || []) {
      for (const s of ss.spans || []) {
        const attributes = {};
        for (const a of s.attributes || []) attributes[a.key] = attributeValue(a.value);
        const hex = (b64) => (b64 ? Buffer.from(b64, 'base64').toString('hex') : '');
        lines.push({
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), name: s.name,
          kind: s.kind || 0, start: s.startTimeUnixNano, end: s.endTimeUnixNano, attributes,
          status: s.status || {}, resource, scope: (ss.scope || {}).name, header: headers['x-test-header'] || null,
        });
      }
    }
  }
  return lines;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (mode === 'hang') return;  // never answers
    if (mode === '503') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('unavailable');
      return;
    }
    let out;
    try {
      if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`${req.method} ${req.url}`);
      out = decode(Buffer.concat(chunks).toString('utf8'), req.headers).map((l) => JSON.stringify(l)).join('\n');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    } catch (e) {
      out = JSON.stringify({ error: String(e && e.message || e) });
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: out }));
    }
    if (out) fs.appendFileSync(outFile, out + '\n');
  });
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
process.on('SIGTERM', () => process.exit(0));
