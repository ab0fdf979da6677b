// The embeddings test servers' vectors: tests/servers/embeddings_api.py's vector_of, bit for bit,
// written as its json.dumps writes them, so `embeddings_api.py --check` reads every Node server's
// answers (unseen_embeddings.js, unseen_embeddings_more.js) as its own.
'use strict';
const crypto = require('crypto');

// Python: x = n / 2147483648.0 - 1.0 (exact: k / 2^31 with k = n - 2^31), then round(x, 6): the
// decimal nearest the exact binary value, ties to even, read back as the nearest double.
const TWO31 = 2147483648;
function round6(k) {
  const a = Math.abs(k); // <= 2^31
  const scaled = a * 1000000; // < 2^53: exact
  const fl = Math.floor(scaled / TWO31); // division by a power of two: exact
  const rem = scaled - fl * TWO31; // exact
  let q = fl;
  if (rem > TWO31 / 2 || (rem === TWO31 / 2 && fl % 2 === 1)) q = fl + 1;
  const v = q / 1000000; // correctly rounded, as Python's strtod of the rounded decimal
  return k < 0 ? -v : v; // Python's round keeps the sign: -0.0 for a tiny negative
}
function vectorOf(text, d) {
  const bytes = Buffer.from(text, 'utf8');
  const out = [];
  let block = Buffer.alloc(0);
  let counter = 0;
  while (out.length < d) {
    if (block.length < 4) {
      const c = Buffer.alloc(4);
      c.writeUInt32BE(counter >>> 0);
      block = Buffer.concat([block, crypto.createHash('sha256').update(bytes).update(c).digest()]);
      counter++;
    }
    const n = block.readUInt32BE(0);
    block = block.subarray(4);
    out.push(round6(n - TWO31));
  }
  return out;
}
// A float as Python's repr (hence json.dumps) writes it: the shortest digits that read back
// (JavaScript's choice too), fixed notation for decimal exponents -4 <= e < 16, else 'e-05' style.
function pyFloat(x) {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : (x > 0 ? 'Infinity' : '-Infinity');
  const sign = x < 0 ? '-' : '';
  const m = Math.abs(x).toExponential().match(/^(\d)(?:\.(\d+))?e([+-]\d+)$/);
  const digits = m[1] + (m[2] || '');
  const exp = Number(m[3]);
  const decpt = exp + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return sign + '0.' + '0'.repeat(-decpt) + digits;
    if (decpt >= digits.length) return sign + digits + '0'.repeat(decpt - digits.length) + '.0';
    return sign + digits.slice(0, decpt) + '.' + digits.slice(decpt);
  }
  const e = Math.abs(exp);
  return sign + digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') +
    'e' + (exp < 0 ? '-' : '+') + (e < 10 ? '0' + e : String(e));
}
// A text's vector of `dims` floats as JSON text.
function vectorJson(text, dims) {
  return '[' + vectorOf(text, dims).map(pyFloat).join(', ') + ']';
}

module.exports = { vectorOf, pyFloat, vectorJson };
