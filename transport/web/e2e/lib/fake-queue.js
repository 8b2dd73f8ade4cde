// A stand-in for the queue's API, written from the outside contract
// (visitor endpoints, the room frames of the WebSocket, the admin calls the
// tests make), so the browser tests can exercise the front end with the
// real page, embed.js and assets served by the preview program in front of
// it. It keeps everything in memory and models the admission line as
// serving(t) = base + rate × (t − t0) / 60 s, re-based so capacity is not
// banked while nobody waits.
//
//   node fake-queue.js --addr 127.0.0.1:9000 --admin-token T

import crypto from 'node:crypto';
import http from 'node:http';

const BURST = 1;
const POW_TTL_S = 300;
const FRAME_EVERY_MS = 1000;
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

const b64url = (buf) => Buffer.from(buf).toString('base64url');
const hmac = (key, s) => crypto.createHmac('sha256', key).update(s).digest();

export function createFakeQueue({ adminToken }) {
  const master = crypto.randomBytes(32);
  const rooms = new Map(); // id -> room
  const sockets = new Set();

  function bySlug(slug) {
    for (const r of rooms.values()) if (r.site.slug === slug) return r;
    return null;
  }

  // ---- the admission line -------------------------------------------------

  function opensAtMs(room) {
    const ms = room.site.opensAt ? Date.parse(room.site.opensAt) : NaN;
    return Number.isNaN(ms) ? 0 : ms;
  }

  function drawIfDue(room, now) {
    const at = opensAtMs(room);
    if (!at || room.drawn || now < at) return;
    room.drawn = true;
    room.prequeue = room.issued;
    const perm = Array.from({ length: room.prequeue }, (_, i) => i + 1);
    for (let i = perm.length - 1; i > 0; i--) {
      const j = crypto.randomInt(i + 1);
      [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    room.perm = perm;
    room.line = { base: 0, t0: at, rate: room.site.ratePerMinute };
  }

  function inPreQueue(room, now) {
    const at = opensAtMs(room);
    return at > 0 && !room.drawn && now < at;
  }

  function serving(room, now) {
    drawIfDue(room, now);
    if (inPreQueue(room, now)) return 0;
    const L = room.line;
    const cap = room.issued + BURST;
    if (!room.site.active) return Math.min(L.base, cap);
    let raw = L.base + (L.rate * Math.max(0, now - L.t0)) / 60000;
    if (raw > cap) {
      L.base = cap;
      L.t0 = now;
      raw = cap;
    }
    return raw;
  }

  function rebase(room, now) {
    room.line.base = serving(room, now);
    room.line.t0 = now;
  }

  function placeOf(room, n) {
    return room.drawn && n <= room.prequeue ? room.perm[n - 1] : n;
  }

  function answer(room, n, now) {
    const s = serving(room, now);
    const pre = inPreQueue(room, now);
    const pos = placeOf(room, n);
    const admitted = !pre && pos <= Math.floor(s);
    const ahead = pre ? 0 : Math.max(0, pos - Math.floor(s) - 1);
    const rate = room.line.rate;
    const body = {
      queue: room.site.slug,
      name: room.site.name,
      number: n,
      serving: Math.floor(s),
      ahead,
      admitted,
      estimatedWaitSeconds: admitted ? 0 : Math.ceil((ahead / rate) * 60),
      retryAfterSeconds: 3,
    };
    if (opensAtMs(room)) {
      body.opensAt = room.site.opensAt;
      if (room.drawn && n <= room.prequeue) body.position = pos;
    }
    return body;
  }

  function frame(room, now) {
    const s = serving(room, now);
    return {
      type: 'room',
      queue: room.site.slug,
      serving: s,
      cap: room.issued + BURST,
      rate: room.line.rate,
      paused: !room.site.active,
      active: room.site.active,
      waiting: Math.max(0, room.issued - Math.floor(s)),
      issued: room.issued,
      opensAt: room.site.opensAt || null,
      drawn: room.drawn,
      serverTime: now,
    };
  }

  // ---- tickets, tokens, challenges ------------------------------------------

  function ticketFor(room, n) {
    return `${n}.${b64url(hmac(room.secret, `${room.site.slug}:${n}`)).slice(0, 22)}`;
  }

  function readTicket(room, ticket) {
    const [n] = String(ticket || '').split('.');
    const num = Number(n);
    if (!Number.isInteger(num) || num < 1 || ticketFor(room, num) !== ticket) return { error: 401 };
    if (num > room.issued) return { error: 404 };
    return { number: num };
  }

  function jwt(room, n, now) {
    const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const iat = Math.floor(now / 1000);
    const claims = { iss: 'aditus-queue', aud: room.site.slug, qnr: n, iat, exp: iat + room.site.tokenTtlSeconds };
    const payload = b64url(JSON.stringify(claims));
    return `${header}.${payload}.${b64url(hmac(room.secret, `${header}.${payload}`))}`;
  }

  function verifyJWT(room, token, now) {
    const parts = String(token || '').split('.');
    if (parts.length !== 3) return null;
    const want = b64url(hmac(room.secret, `${parts[0]}.${parts[1]}`));
    if (want !== parts[2]) return null;
    let claims;
    try {
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString());
    } catch {
      return null;
    }
    if (claims.iss !== 'aditus-queue' || claims.aud !== room.site.slug || claims.exp * 1000 <= now) return null;
    return claims;
  }

  function challenge(room, now) {
    const payload = b64url(JSON.stringify({ q: room.site.slug, e: now + POW_TTL_S * 1000, r: b64url(crypto.randomBytes(9)) }));
    return `${payload}.${b64url(hmac(master, payload)).slice(0, 22)}`;
  }

  function powOK(room, pow, now) {
    if (!pow || typeof pow.challenge !== 'string' || typeof pow.nonce !== 'string') return false;
    const [payload, sig] = pow.challenge.split('.');
    if (!payload || sig !== b64url(hmac(master, payload)).slice(0, 22)) return false;
    let c;
    try {
      c = JSON.parse(Buffer.from(payload, 'base64url').toString());
    } catch {
      return false;
    }
    if (c.q !== room.site.slug || c.e < now || room.spent.has(pow.challenge)) return false;
    const d = crypto.createHash('sha256').update(`${pow.challenge}.${pow.nonce}`).digest();
    const bits = room.site.pow.bits;
    for (let i = 0; i < bits; i++) if ((d[i >> 3] >> (7 - (i & 7))) & 1) return false;
    room.spent.add(pow.challenge);
    return true;
  }

  function powBody(room, now) {
    return { queue: room.site.slug, enabled: true, challenge: challenge(room, now), bits: room.site.pow.bits, expiresInSeconds: POW_TTL_S, algorithm: 'sha256' };
  }

  // ---- HTTP -------------------------------------------------------------------

  function send(res, status, body, headers = {}) {
    const data = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, { ...(data ? { 'Content-Type': 'application/json' } : {}), 'Cache-Control': 'no-store', ...headers });
    res.end(data);
  }

  const fail = (res, status, error, message, extra = {}) => send(res, status, { error, message, ...extra });

  function readBody(req) {
    return new Promise((resolve) => {
      const chunks = [];
      let size = 0;
      req.on('data', (c) => {
        size += c.length;
        if (size <= 65536) chunks.push(c);
      });
      req.on('end', () => {
        if (size > 65536) return resolve({ tooLarge: true });
        const text = Buffer.concat(chunks).toString();
        if (!text) return resolve({ value: {} });
        try {
          resolve({ value: JSON.parse(text) });
        } catch {
          resolve({ malformed: true });
        }
      });
    });
  }

  function cors(req, res, room) {
    const origin = req.headers.origin;
    if (!origin || !room) return;
    let host;
    try {
      host = new URL(origin).hostname;
    } catch {
      return;
    }
    if (!room.site.domains.includes(host)) return;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
  }

  async function handle(req, res) {
    const url = new URL(req.url, 'http://fake');
    const path = url.pathname;
    const now = Date.now();
    if (path === '/queue/healthz') return send(res, 200, { status: 'ok' });
    if (path.startsWith('/api/admin/queue/')) return admin(req, res, path.slice('/api/admin/queue/'.length));

    const m = path.match(/^\/queue\/([^/]+)\/([a-z]+)$/);
    if (!m) return fail(res, 404, 'not_found', 'Not found.');
    const room = bySlug(decodeURIComponent(m[1]));
    cors(req, res, room);
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type');
      res.setHeader('Access-Control-Max-Age', '600');
      return send(res, 204);
    }
    if (!room) return fail(res, 404, 'not_found', 'There is no waiting room with this name.');
    let body = {};
    if (req.method === 'POST') {
      const b = await readBody(req);
      if (b.tooLarge) return fail(res, 413, 'too_large', 'The request body is too large.');
      if (b.malformed) return fail(res, 400, 'bad_json', 'The request body is not valid JSON.');
      body = b.value || {};
    }
    const route = `${req.method} ${m[2]}`;
    switch (route) {
      case 'POST join': {
        if (!room.site.active) return fail(res, 423, 'paused', room.site.pausedMessage || 'The waiting room is paused.');
        if (room.site.pow.enabled && !powOK(room, body.pow, now)) {
          return fail(res, 428, 'pow_required', 'Proof of work required.', { pow: powBody(room, now) });
        }
        const s = serving(room, now);
        const n = ++room.issued;
        room.joinedAt.set(n, now);
        const a = answer(room, n, now);
        if (!inPreQueue(room, now)) a.admitted = n <= Math.floor(s) || a.admitted;
        broadcast(room);
        return send(res, 200, { ...a, ticket: ticketFor(room, n) });
      }
      case 'GET status': {
        const t = readTicket(room, url.searchParams.get('ticket'));
        if (t.error) return fail(res, t.error, t.error === 401 ? 'bad_ticket' : 'not_found', 'Unknown ticket.');
        return send(res, 200, { ...answer(room, t.number, now), active: room.site.active }, { 'Retry-After': '3' });
      }
      case 'POST token': {
        const t = readTicket(room, body.ticket);
        if (t.error) return fail(res, t.error, t.error === 401 ? 'bad_ticket' : 'not_found', 'Unknown ticket.');
        if (!room.site.active) return fail(res, 423, 'paused', room.site.pausedMessage || 'The waiting room is paused.');
        if (!answer(room, t.number, now).admitted) return fail(res, 425, 'not_admitted', 'Not yet admitted.');
        return send(res, 200, {
          queue: room.site.slug,
          number: t.number,
          token: jwt(room, t.number, now),
          tokenType: 'JWT',
          expiresInSeconds: room.site.tokenTtlSeconds,
          targetUrl: room.site.targetUrl,
        });
      }
      case 'GET verify': {
        const claims = verifyJWT(room, url.searchParams.get('token'), now);
        if (!claims) return send(res, 401, { valid: false, error: 'invalid_token', message: 'The admission token is not valid.' });
        return send(res, 200, { valid: true, queue: room.site.slug, number: claims.qnr, expiresAt: new Date(claims.exp * 1000).toISOString() });
      }
      case 'POST heartbeat':
        room.heartbeats++;
        return send(res, 204);
      case 'GET info': {
        const f = frame(room, now);
        return send(res, 200, { queue: room.site.slug, name: room.site.name, active: room.site.active, serving: Math.floor(f.serving), waiting: f.waiting });
      }
      case 'GET pow':
        return send(res, 200, room.site.pow.enabled ? powBody(room, now) : { queue: room.site.slug, enabled: false });
      default:
        return fail(res, 404, 'not_found', 'Not found.');
    }
  }

  // ---- admin ---------------------------------------------------------------------

  function publicSite(room) {
    return { ...room.site };
  }

  function applySite(room, input, now) {
    const s = room.site;
    const wasActive = s.active;
    for (const k of ['name', 'targetUrl', 'domains', 'message', 'headerImageUrl', 'accentColor', 'tokenTtlSeconds', 'opensAt', 'pow', 'abandon', 'active', 'ratePerMinute']) {
      if (input[k] !== undefined) s[k] = input[k];
    }
    s.pow = { enabled: false, bits: 15, ...(s.pow || {}) };
    s.updatedAt = new Date(now).toISOString();
    if (s.active && !wasActive) room.line.t0 = now;
    if (!s.active && wasActive) rebase(room, now);
    if (s.ratePerMinute !== room.line.rate) {
      rebase(room, now);
      room.line.rate = s.ratePerMinute;
    }
    if (opensAtMs(room) > now) room.drawn = false;
  }

  async function admin(req, res, rest) {
    if (req.headers.authorization !== `Bearer ${adminToken}`) return fail(res, 401, 'unauthorized', 'Missing or wrong credentials.');
    const now = Date.now();
    const b = req.method === 'POST' || req.method === 'PATCH' ? await readBody(req) : { value: {} };
    if (b.malformed) return fail(res, 400, 'bad_json', 'The request body is not valid JSON.');
    const body = b.value || {};
    const parts = rest.split('/');
    if (parts[0] !== 'sites') return fail(res, 404, 'not_found', 'Not found.');
    if (parts.length === 1) {
      if (req.method === 'GET') return send(res, 200, { sites: [...rooms.values()].map(publicSite) });
      if (req.method !== 'POST') return fail(res, 405, 'method', 'Method not allowed.');
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(body.slug || '') || body.slug === 'assets') return fail(res, 422, 'invalid', 'slug is invalid.');
      if (bySlug(body.slug)) return fail(res, 409, 'conflict', 'The slug is taken.');
      if (!(body.ratePerMinute >= 1)) return fail(res, 422, 'invalid', 'ratePerMinute must be at least 1.');
      const id = `site_${crypto.randomBytes(6).toString('hex')}`;
      const room = {
        site: {
          id,
          slug: body.slug,
          name: body.name || body.slug,
          targetUrl: body.targetUrl || '',
          domains: body.domains || [],
          ratePerMinute: body.ratePerMinute,
          active: true,
          message: '',
          headerImageUrl: '',
          accentColor: '',
          tokenTtlSeconds: 600,
          pow: { enabled: false, bits: 15 },
          opensAt: null,
          abandon: { enabled: false, graceSeconds: 180 },
          createdAt: new Date(now).toISOString(),
          updatedAt: new Date(now).toISOString(),
        },
        secret: crypto.randomBytes(32).toString('base64url'),
        line: { base: BURST, t0: now, rate: body.ratePerMinute }, // an idle room admits at once
        issued: 0,
        drawn: false,
        prequeue: 0,
        perm: [],
        spent: new Set(),
        joinedAt: new Map(),
        heartbeats: 0,
      };
      rooms.set(id, room);
      applySite(room, body, now);
      return send(res, 201, { site: publicSite(room), secret: room.secret });
    }
    const room = rooms.get(parts[1]);
    if (!room || parts.length > 2) return fail(res, 404, 'not_found', 'There is no such site.');
    if (req.method === 'GET') return send(res, 200, publicSite(room));
    if (req.method === 'PATCH') {
      applySite(room, body, now);
      broadcast(room);
      return send(res, 200, publicSite(room));
    }
    if (req.method === 'DELETE') {
      rooms.delete(room.site.id);
      return send(res, 204);
    }
    return fail(res, 405, 'method', 'Method not allowed.');
  }

  // ---- WebSocket (RFC 6455, text frames out, close and ping in) -------------------

  function wsFrame(opcode, payload) {
    const data = Buffer.from(payload);
    let head;
    if (data.length < 126) head = Buffer.from([0x80 | opcode, data.length]);
    else if (data.length < 65536) {
      head = Buffer.alloc(4);
      head[0] = 0x80 | opcode;
      head[1] = 126;
      head.writeUInt16BE(data.length, 2);
    } else {
      head = Buffer.alloc(10);
      head[0] = 0x80 | opcode;
      head[1] = 127;
      head.writeBigUInt64BE(BigInt(data.length), 2);
    }
    return Buffer.concat([head, data]);
  }

  function sendFrame(conn) {
    if (conn.socket.writable) conn.socket.write(wsFrame(1, JSON.stringify(frame(conn.room, Date.now()))));
  }

  function broadcast(room) {
    for (const c of sockets) if (c.room === room) sendFrame(c);
  }

  function upgrade(req, socket) {
    const url = new URL(req.url, 'http://fake');
    const m = url.pathname.match(/^\/queue\/([^/]+)\/ws$/);
    const room = m && bySlug(decodeURIComponent(m[1]));
    const t = room ? readTicket(room, url.searchParams.get('ticket')) : { error: 404 };
    const key = req.headers['sec-websocket-key'];
    if (t.error || !key) {
      socket.end(`HTTP/1.1 ${t.error === 401 ? '401 Unauthorized' : '404 Not Found'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const accept = crypto.createHash('sha1').update(key + WS_GUID).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    const conn = { socket, room, buf: Buffer.alloc(0) };
    sockets.add(conn);
    socket.on('data', (chunk) => {
      conn.buf = Buffer.concat([conn.buf, chunk]);
      while (conn.buf.length >= 2) {
        const opcode = conn.buf[0] & 0x0f;
        let len = conn.buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (conn.buf.length < 4) return;
          len = conn.buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (conn.buf.length < 10) return;
          len = Number(conn.buf.readBigUInt64BE(2));
          off = 10;
        }
        const masked = conn.buf[1] & 0x80;
        const total = off + (masked ? 4 : 0) + len;
        if (conn.buf.length < total) return;
        const mask = masked ? conn.buf.subarray(off, off + 4) : null;
        const payload = Buffer.from(conn.buf.subarray(total - len, total));
        if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
        conn.buf = conn.buf.subarray(total);
        if (opcode === 8) {
          socket.end(wsFrame(8, payload.subarray(0, 2)));
          sockets.delete(conn);
          return;
        }
        if (opcode === 9) socket.write(wsFrame(10, payload));
      }
    });
    const drop = () => sockets.delete(conn);
    socket.on('close', drop);
    socket.on('error', drop);
    sendFrame(conn);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      console.error(err);
      if (!res.headersSent) fail(res, 500, 'internal', 'Internal error.');
    });
  });
  server.on('upgrade', upgrade);
  const ticker = setInterval(() => {
    for (const c of sockets) sendFrame(c);
  }, FRAME_EVERY_MS);
  server.on('close', () => clearInterval(ticker));
  return server;
}

// Run as a program: node fake-queue.js --addr HOST:PORT --admin-token T
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const [host, port] = (arg('--addr') || '127.0.0.1:9000').split(':');
  const server = createFakeQueue({ adminToken: arg('--admin-token') || 'test' });
  server.listen(Number(port), host, () => console.log(`fake queue on http://${host}:${port}`));
  process.on('SIGTERM', () => process.exit(0));
}
