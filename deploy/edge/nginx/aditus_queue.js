// aditus_queue.js — the waiting room's gate for nginx with njs (0.7 or
// later). Only visitors holding a valid admission token reach the shop:
//
//  1. ?aditus_queue_token=<valid token> (back from the waiting room): the
//     token goes into the cookie (Secure; HttpOnly; SameSite=Lax; Max-Age
//     the token's remaining lifetime) and the visitor gets a 302 to the same
//     URL without the parameter.
//  2. A valid token in the cookie: on to the shop (internalRedirect to the
//     named location $aditus_queue_pass, default @shop).
//  3. Anything else: 302 to the room's gateway link,
//     <room>/enter?return=<the page asked for>, which admits at once while
//     nobody waits and otherwise lets the visitor wait.
//
// A token is valid when it is an HS256 JWT (the algorithm is pinned) signed
// with the room's secret, with iss "aditus-queue", aud the room's slug and
// exp in the future. The signature is compared in constant time. Nothing is
// asked of the queue. Configuration (see README.md):
//
//   env ADITUS_QUEUE_SECRET;                       # main context
//   js_import aditus_queue from /etc/nginx/aditus_queue.js;
//   set $aditus_queue_slug spring-sale;            # server or location
//   set $aditus_queue_room https://queue.example.com/queue/spring-sale;
//   # optional: $aditus_queue_cookie, $aditus_queue_origin, $aditus_queue_pass
//   location /      { js_content aditus_queue.gate; }
//   location @shop  { proxy_pass http://shop_backend; }
const crypto = require('crypto');

const TOKEN_PARAM = 'aditus_queue_token';

function b64json(s) {
  if (!/^[A-Za-z0-9_-]+$/.test(s)) return null;
  try {
    return JSON.parse(Buffer.from(s, 'base64url').toString());
  } catch (e) {
    return null;
  }
}

// sameString compares two strings in time that depends only on their
// lengths, never on where they differ.
function sameString(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

// claims answers the token's claims when it is valid for the room, or null.
function claims(token, slug, secret, nowSeconds) {
  const p = token.split('.');
  if (p.length !== 3) return null;
  const h = b64json(p[0]);
  if (!h || h.alg !== 'HS256') return null;
  const sig = crypto.createHmac('sha256', secret).update(p[0] + '.' + p[1]).digest('base64url');
  if (!sameString(sig, p[2])) return null;
  const c = b64json(p[1]);
  if (!c || c.iss !== 'aditus-queue' || c.aud !== slug) return null;
  if (typeof c.exp !== 'number' || !(c.exp > nowSeconds)) return null;
  return c;
}

function cookieValue(header, name) {
  const parts = (header || '').split(';');
  for (let i = 0; i < parts.length; i++) {
    const kv = parts[i].trim();
    const eq = kv.indexOf('=');
    if (eq > 0 && kv.slice(0, eq) === name) return kv.slice(eq + 1);
  }
  return '';
}

// withoutToken returns the request URI without any token parameter, the
// other parameters kept exactly as written.
function withoutToken(uri) {
  const q = uri.indexOf('?');
  if (q < 0) return uri;
  const kept = uri.slice(q + 1).split('&').filter(function (part) {
    let key = part.split('=')[0];
    try {
      key = decodeURIComponent(key.replace(/\+/g, ' '));
    } catch (e) {
      // keep the key as written
    }
    return key !== TOKEN_PARAM;
  });
  return uri.slice(0, q) + (kept.length ? '?' + kept.join('&') : '');
}

function tokenParam(uri) {
  const q = uri.indexOf('?');
  if (q < 0) return '';
  const parts = uri.slice(q + 1).split('&');
  for (let i = 0; i < parts.length; i++) {
    const eq = parts[i].indexOf('=');
    if (eq > 0 && parts[i].slice(0, eq) === TOKEN_PARAM) return parts[i].slice(eq + 1);
  }
  return '';
}

function redirect(r, to) {
  r.headersOut['Cache-Control'] = 'no-store';
  r.return(302, to);
}

function gate(r) {
  const v = r.variables;
  const slug = v.aditus_queue_slug;
  const room = v.aditus_queue_room;
  const secret = process.env.ADITUS_QUEUE_SECRET;
  if (!slug || !room || !secret) {
    r.error('aditus_queue: $aditus_queue_slug, $aditus_queue_room and env ADITUS_QUEUE_SECRET are required');
    r.return(500);
    return;
  }
  const cookie = v.aditus_queue_cookie || 'aditus_queue';
  const now = Date.now() / 1000;
  const uri = v.request_uri;

  const fromUrl = tokenParam(uri);
  const c = fromUrl && claims(fromUrl, slug, secret, now);
  if (c) {
    r.headersOut['Set-Cookie'] = cookie + '=' + fromUrl + '; Path=/; Max-Age=' +
      Math.max(1, Math.floor(c.exp - now)) + '; Secure; HttpOnly; SameSite=Lax';
    redirect(r, withoutToken(uri));
    return;
  }
  const fromCookie = cookieValue(r.headersIn.Cookie, cookie);
  if (fromCookie && claims(fromCookie, slug, secret, now)) {
    r.internalRedirect(v.aditus_queue_pass || '@shop');
    return;
  }
  const origin = v.aditus_queue_origin || v.scheme + '://' + (r.headersIn.Host || v.host);
  redirect(r, room.replace(/\/$/, '') + '/enter?return=' + encodeURIComponent(origin + withoutToken(uri)));
}

export default { gate };
