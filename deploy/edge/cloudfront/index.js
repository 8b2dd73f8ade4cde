// index.js — the waiting room's gate as an AWS Lambda@Edge viewer-request
// handler (Node.js 18 or later) on the shop's CloudFront distribution. Only
// visitors holding a valid admission token reach the origin:
//
//  1. ?aditus_queue_token=<valid token> (back from the waiting room): the
//     token goes into the cookie (Secure; HttpOnly; SameSite=Lax; Max-Age the
//     token's remaining lifetime) and a 302 to the same URL without it.
//  2. A valid token in the cookie: the request goes on to the origin.
//  3. Anything else: 302 to the room's gateway link,
//     <room>/enter?return=<the page asked for>.
//
// Valid means an HS256 JWT (the algorithm is pinned) signed with the room's
// secret (compared with crypto.timingSafeEqual), with iss "aditus-queue",
// aud the room's slug and exp in the future.
//
// Lambda@Edge has no environment variables: the configuration is
// config.json, packed into the function's zip beside this file:
//   {"slug": "...", "secret": "...", "room": "https://queue.example.com/queue/<slug>",
//    "cookie": "aditus_queue" (optional), "origin": "https://shop.example.com" (optional)}
'use strict';
const crypto = require('crypto');

const TOKEN_PARAM = 'aditus_queue_token';

// makeHandler returns a viewer-request handler for one room.
function makeHandler(conf) {
  if (!conf || !conf.slug || !conf.secret || !/^https?:\/\/[^/?#]+\/[^?#]*$/.test(conf.room || '')) {
    throw new Error('aditus-queue gate: config needs slug, secret and room (an absolute URL)');
  }
  const cookie = conf.cookie || 'aditus_queue';
  const room = conf.room.replace(/\/$/, '');
  const secret = Buffer.from(conf.secret);

  return async function handler(event) {
    const req = event.Records[0].cf.request;
    const now = Date.now() / 1000;
    const query = req.querystring || '';

    const fromUrl = param(query, TOKEN_PARAM);
    const c = fromUrl && claims(fromUrl, conf.slug, secret, now);
    if (c) {
      return redirect(req.uri + withoutToken(query), {
        'set-cookie': [{
          key: 'Set-Cookie',
          value: `${cookie}=${fromUrl}; Path=/; Max-Age=${Math.max(1, Math.floor(c.exp - now))}; Secure; HttpOnly; SameSite=Lax`,
        }],
      });
    }
    const fromCookie = cookieValue(req.headers.cookie, cookie);
    if (fromCookie && claims(fromCookie, conf.slug, secret, now)) {
      return req;
    }
    const h = req.headers;
    const scheme = (h['cloudfront-forwarded-proto'] && h['cloudfront-forwarded-proto'][0].value) || 'https';
    const origin = conf.origin ? conf.origin.replace(/\/$/, '') : `${scheme}://${h.host[0].value}`;
    return redirect(`${room}/enter?return=${encodeURIComponent(origin + req.uri + withoutToken(query))}`);
  };
}

// claims answers the token's claims when it is valid for the room, or null.
function claims(token, slug, secret, now) {
  const p = token.split('.');
  if (p.length !== 3 || !p.every((s) => /^[A-Za-z0-9_-]+$/.test(s))) return null;
  const h = json(p[0]);
  if (!h || h.alg !== 'HS256') return null;
  const want = crypto.createHmac('sha256', secret).update(p[0] + '.' + p[1]).digest();
  const got = Buffer.from(p[2], 'base64url');
  if (got.length !== want.length || !crypto.timingSafeEqual(want, got) || got.toString('base64url') !== p[2]) return null;
  const c = json(p[1]);
  if (!c || c.iss !== 'aditus-queue' || c.aud !== slug) return null;
  if (typeof c.exp !== 'number' || !(c.exp > now)) return null;
  return c;
}

function json(part) {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString());
  } catch {
    return null;
  }
}

function param(query, name) {
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq) === name) return part.slice(eq + 1);
  }
  return '';
}

// withoutToken answers "?<query without the token parameter>", the other
// parameters kept as written, or "" when none is left.
function withoutToken(query) {
  const kept = query.split('&').filter((part) => {
    if (part === '') return false;
    let key = part.split('=')[0];
    try {
      key = decodeURIComponent(key.replace(/\+/g, ' '));
    } catch {
      // keep the key as written
    }
    return key !== TOKEN_PARAM;
  });
  return kept.length ? '?' + kept.join('&') : '';
}

function cookieValue(headers, name) {
  for (const h of headers || []) {
    for (const part of h.value.split(';')) {
      const kv = part.trim();
      const eq = kv.indexOf('=');
      if (eq > 0 && kv.slice(0, eq) === name) return kv.slice(eq + 1);
    }
  }
  return '';
}

function redirect(location, extra) {
  return {
    status: '302',
    statusDescription: 'Found',
    headers: Object.assign({
      location: [{ key: 'Location', value: location }],
      'cache-control': [{ key: 'Cache-Control', value: 'no-store' }],
    }, extra || {}),
  };
}

let configured;
// handler is the function Lambda@Edge calls; it reads config.json once.
exports.handler = (event) => {
  configured = configured || makeHandler(require('./config.json'));
  return configured(event);
};
exports.makeHandler = makeHandler;
