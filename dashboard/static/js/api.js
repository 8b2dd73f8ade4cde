// api.js is the console's only way to the server: the admin API with the
// bearer token from sessionStorage (never in a URL), and the room's public
// info endpoint.

const KEY = 'aq.token';
export const BASE = '/api/admin/queue';

export function token() {
  return sessionStorage.getItem(KEY) || '';
}

// adminSocket opens the admin WebSocket at path (on this origin), signs it
// in with the token in its first message (never in the URL), and calls
// onFrame with each frame that is JSON. It throws what new WebSocket
// throws.
export function adminSocket(path, onFrame) {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(`${proto}//${location.host}${path}`, ['aditus-queue.v1']);
  ws.addEventListener('open', () => ws.send(JSON.stringify({ type: 'auth', token: token() })));
  ws.addEventListener('message', (ev) => {
    let f;
    try {
      f = JSON.parse(ev.data);
    } catch {
      return;
    }
    onFrame(f);
  });
  return ws;
}

export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t);
  else sessionStorage.removeItem(KEY);
}

// isKey reports whether the session signed in with a room's qak_ key
// rather than the admin token: such a session sees only its room.
export function isKey() {
  return token().startsWith('qak_');
}

// ApiError carries the server's {error, message, field} answer.
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.error) || '';
    this.field = (body && body.field) || '';
  }
}

// onUnauthorized is called when the server refuses the token (401), so the
// console can return to the sign-in form.
let unauthorized = () => {};
export function onUnauthorized(fn) {
  unauthorized = fn;
}

// call sends one admin API request, with extra headers if given, and
// answers the decoded JSON body (null for 204); any other status throws
// ApiError.
export async function call(method, path, body, extra = {}) {
  const headers = { ...extra, Authorization: `Bearer ${token()}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(BASE + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
    credentials: 'omit',
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    if (res.status === 401) unauthorized();
    throw new ApiError(res.status, json);
  }
  return json;
}

// info reads a room's public figures (no credentials).
export async function info(slug) {
  const res = await fetch(`/queue/${encodeURIComponent(slug)}/info`, { cache: 'no-store', credentials: 'omit' });
  if (!res.ok) throw new ApiError(res.status, null);
  return res.json();
}

export const site = (id) => `/sites/${encodeURIComponent(id)}`;

// editable turns a site as GET answers it into the body PATCH expects: the
// whole configuration without slug, id and timestamps. Fields the console
// does not know are kept, so a newer server loses nothing.
export function editable(s) {
  const { id, slug, createdAt, updatedAt, ...rest } = s;
  return rest;
}

// version is the If-Match header naming the version of site s as read:
// the server refuses the write with 409 when the room changed since, so a
// form opened before a mode switch cannot write the old mode back.
export function version(s) {
  return { 'If-Match': `"${s.updatedAt}"` };
}

// patchSite reads the room, applies change to its configuration and writes
// it back whole, as the API expects (read, change, write), over the
// version it read: when the room changed in between (409), it reads again
// and applies change to the newer room, a few times at most.
export async function patchSite(id, change) {
  for (let attempt = 1; ; attempt++) {
    const cur = await call('GET', site(id));
    const body = editable(cur);
    change(body);
    try {
      return await call('PATCH', site(id), body, version(cur));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409 || attempt >= 3) throw err;
    }
  }
}
