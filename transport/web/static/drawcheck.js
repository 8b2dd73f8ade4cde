/* The draw's verifier in plain JavaScript with Web Crypto, written from
   docs/draw.md alone: the commitment's bytes, the key's hash, the drand
   chain hash and round, the seed, the AES-256 Feistel permutation with
   cycle walking. An ES module of the waiting page (draw.js imports it),
   it runs under Node too (whose globalThis.crypto is the same Web
   Crypto). Numbers are BigInts: a pre-queue may exceed 2^53. The BLS signature of the beacon
   round needs pairings, which Web Crypto lacks: the page checks that the
   randomness is SHA-256 of the signature and leaves the signature to
   `aditus-queue draw verify` and to drand's relays. */

var subtle = globalThis.crypto && globalThis.crypto.subtle;
var ALGORITHM = 'feistel-aes256';
var VERSION = 2;
var ROUNDS = 10;
var MAX_SIZE = 1n << 62n;

function hex(bytes) {
  var s = '';
  for (var i = 0; i < bytes.length; i++) s += (bytes[i] < 16 ? '0' : '') + bytes[i].toString(16);
  return s;
}

function unhex(s, n) {
  if (typeof s !== 'string' || s.length % 2 || !/^[0-9a-f]*$/.test(s)) throw new Error('not lower-case hex');
  var b = new Uint8Array(s.length / 2);
  for (var i = 0; i < b.length; i++) b[i] = parseInt(s.substr(2 * i, 2), 16);
  if (n !== undefined && b.length !== n) throw new Error(b.length + ' bytes, want ' + n);
  return b;
}

function concat(parts) {
  var n = 0;
  parts.forEach(function (p) {
    n += p.length;
  });
  var out = new Uint8Array(n);
  var o = 0;
  parts.forEach(function (p) {
    out.set(p, o);
    o += p.length;
  });
  return out;
}

function uint(v, bytes) {
  var x = BigInt.asUintN(bytes * 8, BigInt(v));
  var out = new Uint8Array(bytes);
  for (var i = bytes - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

function str(s) {
  var b = new TextEncoder().encode(s);
  if (b.length > 255) throw new Error('string longer than 255 bytes');
  return concat([uint(b.length, 1), b]);
}

function equal(a, b) {
  if (a.length !== b.length) return false;
  var d = 0;
  for (var i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

async function sha256(bytes) {
  return new Uint8Array(await subtle.digest('SHA-256', bytes));
}

async function hmac(key, msg) {
  var k = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await subtle.sign('HMAC', k, msg));
}

// commitmentBytes is C of docs/draw.md section 2, from the published
// commitment object.
function commitmentBytes(c) {
  var parts = [
    str('aditus-queue/draw-commitment'),
    str(c.algorithm),
    uint(c.version, 1),
    str(c.queue),
    uint(c.closesAtMs, 8),
    unhex(c.keyHash, 32),
  ];
  if (c.beacon) parts.push(uint(1, 1), unhex(c.beacon.chainHash, 32), uint(c.beacon.round, 8));
  else parts.push(uint(0, 1));
  return concat(parts);
}

async function commitmentHash(c) {
  return hex(await sha256(commitmentBytes(c)));
}

// chainHash is drand's: period, genesis time, public key, genesis seed
// and the beacon id unless it is "default".
async function chainHash(b) {
  var parts = [uint(b.period, 4), uint(b.genesisTime, 8), unhex(b.publicKey), unhex(b.genesisSeed)];
  if (b.beaconId && b.beaconId !== 'default') parts.push(new TextEncoder().encode(b.beaconId));
  return hex(await sha256(concat(parts)));
}

// roundAfter is the first round published strictly after closesAtMs.
function roundAfter(closesAtMs, genesisTime, period) {
  var ms = BigInt(closesAtMs) - BigInt(genesisTime) * 1000n;
  if (ms < 0n) return 1n;
  return ms / (BigInt(period) * 1000n) + 2n;
}

function seedOf(key, randomness) {
  return randomness ? hmac(key, randomness) : Promise.resolve(key);
}

function halfBits(size) {
  var n = 2;
  if (size > 1n) {
    var b = (size - 1n).toString(2).length;
    if (b > n) n = b;
  }
  return (n + 1) >> 1;
}

// Permutation is π of docs/draw.md section 5 under one seed and size.
async function permutation(seed, size) {
  size = BigInt(size);
  if (seed.length !== 32) throw new Error('the seed must be 32 bytes');
  if (size > MAX_SIZE) throw new Error('the pre-queue exceeds 2^62 numbers');
  var key = await subtle.importKey('raw', seed, { name: 'AES-CBC' }, false, ['encrypt']);
  var h = halfBits(size);
  var hb = BigInt(h);
  var mask = (1n << hb) - 1n;
  var iv = new Uint8Array(16);
  var sizeBytes = uint(size, 8);

  // block is B: version, round, h, 0, size, r.
  function block(i, r) {
    return concat([uint(VERSION, 1), uint(i, 1), uint(h, 1), uint(0, 1), sizeBytes, uint(r, 4)]);
  }
  // round is F(i, r): AES-256 of B (the first block of AES-CBC with a
  // zero IV), its first 8 bytes big-endian, masked to h bits.
  async function round(i, r) {
    var out = new Uint8Array(await subtle.encrypt({ name: 'AES-CBC', iv: iv }, key, block(i, r)));
    var v = 0n;
    for (var j = 0; j < 8; j++) v = (v << 8n) | BigInt(out[j]);
    return v & mask;
  }
  async function encrypt(x) {
    var l = x >> hb;
    var r = x & mask;
    for (var i = 0; i < ROUNDS; i++) {
      var f = await round(i, r);
      var nl = r;
      r = l ^ f;
      l = nl;
    }
    return (l << hb) | r;
  }
  async function permute(x) {
    x = BigInt(x);
    if (x < 0n || x >= size) throw new Error('the value lies outside [0, size)');
    if (size <= 1n) return x;
    var y = await encrypt(x);
    while (y >= size) y = await encrypt(y);
    return y;
  }
  return { h: h, block: block, round: round, permute: permute };
}

async function permute(seed, size, x) {
  return (await permutation(seed, size)).permute(x);
}

// check verifies a reveal (the answer of /draw). noted is the commitment
// hash seen while the draw was sealed (or null); number and told are the
// visitor's number and the position /status gave (or null). It returns
// {ok, steps, position}; each step is {name, ok, note, detail}.
async function check(rev, noted, number, told) {
  var steps = [];
  var out = { ok: false, steps: steps, position: null };
  function step(name, ok, detail, note) {
    steps.push({ name: name, ok: ok, note: !!note, detail: detail });
    return ok;
  }
  try {
    var c = rev.commitment;
    if (!step('algorithm', rev.algorithm === ALGORITHM && rev.version === VERSION && c.algorithm === ALGORITHM && c.version === VERSION, rev.algorithm + ' version ' + rev.version)) return out;
    var got = await commitmentHash(c);
    if (!step('commitment', got === c.commitment, 'SHA-256 of the committed bytes is ' + got + '; published ' + c.commitment)) return out;
    if (noted) {
      var known = noted === c.commitment || (c.previous || []).indexOf(noted) >= 0;
      if (!step('published', known, 'the commitment seen before the draw, ' + noted + ', is this one or one it replaced')) return out;
    }
    var key = unhex(rev.key, 32);
    var kh = hex(await sha256(key));
    if (!step('key', kh === c.keyHash, 'SHA-256(key) = ' + kh + '; committed ' + c.keyHash)) return out;
    var randomness = null;
    if (c.beacon) {
      var b = c.beacon;
      var ch = await chainHash(b);
      if (!step('chain', ch === b.chainHash, 'drand chain ' + b.chainHash + ' (' + b.scheme + ')')) return out;
      var due = roundAfter(c.closesAtMs, b.genesisTime, b.period);
      if (!step('round', BigInt(b.round) === due, 'round ' + b.round + ' is the first published after the pre-queue closes (' + due + ')')) return out;
      if (rev.beacon) {
        var published = (BigInt(b.genesisTime) + (BigInt(b.round) - 1n) * BigInt(b.period)) * 1000n;
        if (!step('timing', BigInt(rev.closedAtMs) < published, 'the pre-queue closed at ' + new Date(Number(rev.closedAtMs)).toISOString() + ', before round ' + b.round + ' was published (' + new Date(Number(published)).toISOString() + ')')) return out;
        if (!step('beacon', rev.beacon.round === b.round, 'round ' + rev.beacon.round + ', committed ' + b.round)) return out;
        var sig = unhex(rev.beacon.signature);
        var rnd = unhex(rev.beacon.randomness, 32);
        if (!step('randomness', equal(await sha256(sig), rnd), 'randomness ' + rev.beacon.randomness + ' is SHA-256 of the round’s signature')) return out;
        step('signature', true, 'the BLS signature is checked by aditus-queue draw verify, or compare the round at any drand relay: /' + b.chainHash + '/public/' + b.round, true);
        randomness = rnd;
      } else if (rev.beaconMissing) {
        step('beacon', true, 'the draw was made with the key alone: ' + rev.beaconMissing, true);
      } else {
        step('beacon', false, 'the committed round ' + b.round + ' is missing without a reason');
        return out;
      }
    } else if (rev.beacon) {
      step('beacon', false, 'the reveal carries a round the commitment did not name');
      return out;
    } else {
      step('beacon', true, 'the commitment names no beacon: the order rests on the key alone', true);
    }
    var seed = await seedOf(key, randomness);
    if (!step('seed', hex(seed) === rev.seed, 'seed ' + hex(seed) + (randomness ? ' = HMAC-SHA256(key, randomness)' : ' = the key'))) return out;
    var from = BigInt(rev.from);
    var to = BigInt(rev.to);
    if (!step('range', to >= from && BigInt(rev.size) === to - from && to - from <= MAX_SIZE, 'numbers ' + (from + 1n) + ' … ' + to + ', ' + rev.size + ' of them')) return out;
    if (number !== null && number !== undefined) {
      var n = BigInt(number);
      if (!step('number', n > from && n <= to, 'your number ' + n + ' is in the draw')) return out;
      var x = await permute(seed, to - from, n - from - 1n);
      var p = from + 1n + x;
      out.position = p;
      if (told !== null && told !== undefined) {
        if (!step('position', BigInt(told) === p, 'recomputed position ' + p + '; the room told you ' + told)) return out;
      } else step('position', true, 'recomputed position ' + p, true);
    }
    out.ok = steps.every(function (s) {
      return s.ok;
    });
  } catch (e) {
    step('reveal', false, 'malformed: ' + (e && e.message ? e.message : String(e)));
  }
  return out;
}

export { check, commitmentBytes, commitmentHash, chainHash, roundAfter, permutation, permute, seedOf, halfBits, hex, unhex };
