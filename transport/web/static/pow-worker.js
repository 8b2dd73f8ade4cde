/* Proof of work for the waiting room, off the page's main thread.
   Receives {challenge, bits}; finds the smallest decimal nonce such that
   SHA-256(challenge + "." + nonce) starts with `bits` zero bits; answers
   {nonce, hashes, ms} or {error}. WebCrypto digests are asynchronous, so
   they are issued in batches and awaited together: one await per batch
   instead of one per hash keeps the worker busy hashing. */
'use strict';

var BATCH = 512;
var LIMIT = 1 << 30;

self.onmessage = function (e) {
  var challenge = String((e.data && e.data.challenge) || '');
  var bits = Number(e.data && e.data.bits) | 0;
  solve(challenge, bits).then(
    function (result) {
      self.postMessage(result);
    },
    function (err) {
      self.postMessage({ error: String((err && err.message) || err) });
    }
  );
};

async function solve(challenge, bits) {
  if (!challenge) throw new Error('no challenge');
  if (bits < 0 || bits > 32) throw new Error('difficulty out of range');
  var subtle = self.crypto.subtle;
  var prefix = new TextEncoder().encode(challenge + '.');
  var started = performance.now();
  var jobs = new Array(BATCH);
  for (var n = 0; n < LIMIT; n += BATCH) {
    for (var i = 0; i < BATCH; i++) {
      jobs[i] = subtle.digest('SHA-256', message(prefix, n + i));
    }
    var digests = await Promise.all(jobs);
    for (var j = 0; j < BATCH; j++) {
      if (leadingZeroBits(new Uint8Array(digests[j]), bits)) {
        return { nonce: String(n + j), hashes: n + j + 1, ms: performance.now() - started };
      }
    }
  }
  throw new Error('no solution found');
}

// message is prefix followed by the ASCII digits of n.
function message(prefix, n) {
  var digits = String(n);
  var buf = new Uint8Array(prefix.length + digits.length);
  buf.set(prefix);
  for (var i = 0; i < digits.length; i++) buf[prefix.length + i] = digits.charCodeAt(i);
  return buf;
}

function leadingZeroBits(d, bits) {
  var whole = bits >> 3;
  var rest = bits & 7;
  for (var i = 0; i < whole; i++) if (d[i] !== 0) return false;
  return rest === 0 || d[whole] >> (8 - rest) === 0;
}
