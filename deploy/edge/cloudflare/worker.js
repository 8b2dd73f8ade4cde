// worker.js — the waiting room's gate as a Cloudflare Worker in front of
// the shop. Only visitors holding a valid admission token reach the shop:
//
//  1. ?aditus_queue_token=<valid token> (back from the waiting room): the
//     token goes into the cookie (Secure; HttpOnly; SameSite=Lax; Max-Age the
//     token's remaining lifetime) and a 302 to the same URL without it.
//  2. A valid token in the cookie: on to the shop (fetch(request), or to
//     ORIGIN when the Worker runs on a host of its own).
//  3. Anything else: 302 to the room's gateway link,
//     <room>/enter?return=<the page asked for>.
//
// Valid means an HS256 JWT (the algorithm is pinned) whose signature
// crypto.subtle.verify accepts (constant time) under the room's secret,
// with iss "aditus-queue", aud the room's slug and exp in the future.
//
// Bindings (wrangler.toml [vars] and `wrangler secret put`):
//   ADITUS_QUEUE_SLUG    the room's slug
//   ADITUS_QUEUE_ROOM    https://queue.example.com/queue/<slug>
//   ADITUS_QUEUE_SECRET  the room's secret (a Worker secret)
//   ADITUS_QUEUE_COOKIE  optional cookie name (default aditus_queue)
//   ORIGIN               optional origin of the shop, https://origin.example.com
const TOKEN_PARAM = 'aditus_queue_token';
const enc = new TextEncoder();

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const cookie = env.ADITUS_QUEUE_COOKIE || 'aditus_queue';
    const now = Date.now() / 1000;

    const fromUrl = url.searchParams.get(TOKEN_PARAM);
    const c = fromUrl && (await claims(fromUrl, env, now));
    if (c) {
      return redirect(withoutToken(url, false), {
        'Set-Cookie': `${cookie}=${fromUrl}; Path=/; Max-Age=${Math.max(1, Math.floor(c.exp - now))}; Secure; HttpOnly; SameSite=Lax`,
      });
    }
    const fromCookie = cookieValue(request.headers.get('Cookie'), cookie);
    if (fromCookie && (await claims(fromCookie, env, now))) {
      if (!env.ORIGIN) return fetch(request);
      const to = new URL(url.pathname + url.search, env.ORIGIN);
      return fetch(new Request(to, request));
    }
    const room = env.ADITUS_QUEUE_ROOM.replace(/\/$/, '');
    return redirect(`${room}/enter?return=${encodeURIComponent(withoutToken(url, true))}`);
  },
};

function redirect(location, headers) {
  return new Response(null, { status: 302, headers: { Location: location, 'Cache-Control': 'no-store', ...headers } });
}

// withoutToken answers the URL without any token parameter, the others
// kept as written: the path and query (relative) or the whole URL.
function withoutToken(url, absolute) {
  const kept = url.search
    .slice(1)
    .split('&')
    .filter((part) => part !== '' && safeDecode(part.split('=')[0]) !== TOKEN_PARAM);
  const rel = url.pathname + (kept.length ? '?' + kept.join('&') : '');
  return absolute ? url.origin + rel : rel;
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

function cookieValue(header, name) {
  for (const part of (header || '').split(';')) {
    const kv = part.trim();
    const eq = kv.indexOf('=');
    if (eq > 0 && kv.slice(0, eq) === name) return kv.slice(eq + 1);
  }
  return '';
}

// claims answers the token's claims when it is valid for the room, or null.
async function claims(token, env, now) {
  const p = token.split('.');
  if (p.length !== 3 || !p.every((s) => /^[A-Za-z0-9_-]*$/.test(s))) return null;
  const h = json(p[0]);
  if (!h || h.alg !== 'HS256') return null;
  const key = await crypto.subtle.importKey('raw', enc.encode(env.ADITUS_QUEUE_SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const sig = b64url(p[2]);
  if (!sig || !(await crypto.subtle.verify('HMAC', key, sig, enc.encode(p[0] + '.' + p[1])))) return null;
  const c = json(p[1]);
  if (!c || c.iss !== 'aditus-queue' || c.aud !== env.ADITUS_QUEUE_SLUG) return null;
  if (typeof c.exp !== 'number' || !(c.exp > now)) return null;
  return c;
}

function json(part) {
  const b = b64url(part);
  if (!b) return null;
  try {
    return JSON.parse(new TextDecoder().decode(b));
  } catch {
    return null;
  }
}

function b64url(s) {
  try {
    return Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}
