// A small JSON API on Node's own http module at its defaults (as people write one in Node):
// keep-alive connections closed after `keepAliveTimeout` idle (5 s unless --keep-alive-timeout),
// headers and body in one write. Answers ip-api's shape: {"status":"success","query":KEY}.
//
//   node node_api.js DIR [--keep-alive-timeout MS]
//
// listens on 127.0.0.1, writes its port to DIR/node_api.port once it serves. Routes: GET
// /json/KEY, GET /stats ({"requests":N,"connections":N}).
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const dir = process.argv[2];
const opt = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const stats = { requests: 0, connections: 0 };

const server = http.createServer((req, res) => {
  if (req.url === '/stats') {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(stats));
    return;
  }
  stats.requests++;
  const m = req.url.match(/^\/json\/([^/?]+)/);
  if (!m) {
    res.statusCode = 404;
    res.end('{"status":"fail","message":"no such route"}');
    return;
  }
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ status: 'success', query: decodeURIComponent(m[1]), country: 'Nodeland' }));
});
server.keepAliveTimeout = opt('--keep-alive-timeout', server.keepAliveTimeout);
server.on('connection', () => stats.connections++);
server.listen(0, '127.0.0.1', () => {
  const file = path.join(dir, 'node_api.port');
  fs.writeFileSync(file + '.tmp', String(server.address().port) + '\n');
  fs.renameSync(file + '.tmp', file);
});
process.on('SIGTERM', () => process.exit(0));
