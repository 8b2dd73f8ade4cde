// room.js: the hosted waiting room's flow. It draws a waiting number once,
// keeps it across reloads, follows the room live (connection.js) and
// forwards the visitor with an admission token when it is their turn. The
// state lives in state.js, the drawing in render.js, the words in i18n.js,
// the proof of work in pow.js.

import { call, withoutParam } from './http.js';
import { words } from './i18n.js';
import { solve } from './pow.js';
import { connection } from './connection.js';
import { drawPanel } from './draw.js';
import { view } from './render.js';
import { turnNotice } from './turn.js';
import { admitted, applyAnswer, applyFrame, applyMode, closed, newState, storage } from './state.js';

const REQUEST_TIMEOUT_MS = 10000;
const PAUSED_RETRY_MS = 10000;
const HEARTBEAT_MS = 60000;
const TOKEN_RETRY_MS = 3000;
const TICK_MS = 250;

// The page's parts, set once by begin(); S is the whole state.
const S = newState();
let cfg;
let room;
let store;
let page;
let conn;
let turn;
let card;

const render = () => page.render(S);
const ask = (method, path, body) => call(room + path, method, body, REQUEST_TIMEOUT_MS);

let failures = 0;
function backoff() {
  failures = Math.min(failures + 1, 6);
  return Math.min(30000, 1000 * Math.pow(2, failures - 1)) * (0.8 + Math.random() * 0.4);
}

function later(fn, ms) {
  render();
  setTimeout(fn, ms);
}

function forget() {
  store.clear();
  S.ticket = null;
  S.start = null;
  S.position = 0;
  S.positionAsked = false;
}

function takeAnswer(b) {
  const fresh = S.start === null;
  applyAnswer(S, b, conn.isOpen());
  if (fresh) store.saveStart(S.start);
}

function onFrame(f) {
  if (!applyFrame(S, f)) return;
  if (S.drawn && !S.position && !S.positionAsked && S.ticket) {
    S.positionAsked = true;
    refresh();
  }
  tick();
}

// closedAnswer reports whether r is the answer of a sold-out (410) or
// maintenance (503 maintenance) room, and shows it.
function closedAnswer(r) {
  if (r.status !== 410 && !(r.status === 503 && r.body && r.body.error === 'maintenance')) return false;
  applyMode(S, r.body || {});
  render();
  return true;
}

function showPaused(message) {
  S.paused = true;
  S.pausedMessage = typeof message === 'string' ? message : '';
  render();
}

// ---- joining --------------------------------------------------------------

// adoptTicketFromURL takes a ticket handed over in the address (by the
// shop's embed.js or the gateway link) and removes it from the address bar.
function adoptTicketFromURL() {
  let ticket;
  try {
    ticket = new URL(location.href).searchParams.get('ticket');
  } catch (e) {
    return;
  }
  if (!ticket) return;
  if (ticket !== store.ticket()) {
    forget();
    store.saveTicket(ticket);
  }
  history.replaceState(history.state, '', withoutParam(location.href, 'ticket'));
}

let powFailures = 0;

async function join(pow) {
  S.phase = pow || cfg.pow.enabled ? 'verifying' : 'joining';
  render();
  let r;
  try {
    r = await ask('POST', '/join', pow ? { pow: pow } : {});
  } catch (e) {
    S.trouble = true;
    later(join, backoff());
    return;
  }
  S.trouble = false;
  if ((r.status === 200 || r.status === 201) && r.body.ticket) joined(r.body);
  else if (r.status === 428 && r.body.pow && r.body.pow.challenge) prove(r.body.pow, !!pow);
  else if (closedAnswer(r)) later(join, PAUSED_RETRY_MS);
  else if (r.status === 423) {
    showPaused(r.body.message);
    later(join, PAUSED_RETRY_MS);
  } else if (r.status === 404) {
    S.phase = 'gone';
    render();
  } else {
    S.trouble = true;
    later(join, Math.max(backoff(), r.retryAfter * 1000));
  }
}

function joined(b) {
  failures = 0;
  powFailures = 0;
  forget();
  S.paused = false;
  S.ticket = b.ticket;
  store.saveTicket(S.ticket);
  takeAnswer(b);
  S.phase = 'waiting';
  conn.connect();
  tick();
}

// prove solves the room's challenge and joins with the proof; after three
// proofs refused in a row it waits before it starts over.
async function prove(ch, again) {
  if (again && ++powFailures > 3) {
    powFailures = 0;
    S.trouble = true;
    later(join, PAUSED_RETRY_MS);
    return;
  }
  S.phase = 'verifying';
  render();
  let solved;
  try {
    solved = await solve(cfg.workerUrl, ch.challenge, ch.bits);
  } catch (e) {
    S.trouble = true;
    later(join, PAUSED_RETRY_MS);
    return;
  }
  page.powTime(solved.ms);
  join({ challenge: ch.challenge, nonce: solved.nonce });
}

// ---- status ---------------------------------------------------------------

let refreshing = null;

// refresh asks for the ticket's status once; a ticket the server does not
// know (401, 404) is forgotten and a new number drawn. It answers 'ok',
// 'invalid' or 'error'.
function refresh() {
  if (!refreshing) {
    refreshing = refreshOnce().finally(() => {
      refreshing = null;
    });
  }
  return refreshing;
}

async function refreshOnce() {
  if (!S.ticket) return 'invalid';
  let r;
  try {
    r = await ask('GET', '/status?ticket=' + encodeURIComponent(S.ticket));
  } catch (e) {
    S.trouble = true;
    render();
    return 'error';
  }
  if (r.status === 200) {
    S.trouble = false;
    failures = 0;
    if (r.retryAfter > 0) S.retryAfter = Math.min(60, Math.max(2, r.retryAfter));
    takeAnswer(r.body);
    tick();
    return 'ok';
  }
  if (r.status === 401 || r.status === 404) {
    rejoin();
    return 'invalid';
  }
  if (closedAnswer(r)) return 'ok';
  if (r.status === 423) {
    showPaused(r.body.message);
    return 'ok';
  }
  S.trouble = true;
  render();
  return 'error';
}

function rejoin() {
  conn.stop();
  forget();
  S.answer = null;
  S.line = null;
  S.number = 0;
  S.shown = 0;
  join();
}

// The socket counts as presence; without it the page says it is still
// here once a minute, for the room's abandon detection.
function heartbeat() {
  if (conn.isOpen() || !S.ticket || S.phase !== 'waiting') return;
  ask('POST', '/heartbeat', { ticket: S.ticket }).catch(() => {
    /* presence is best effort */
  });
}

// ---- admission ------------------------------------------------------------

let claiming = false;

async function claim() {
  if (claiming) return;
  claiming = true;
  S.phase = 'admitted';
  render();
  let r;
  try {
    r = await ask('POST', '/token', { ticket: S.ticket });
  } catch (e) {
    claiming = false;
    S.trouble = true;
    S.phase = 'waiting';
    S.tokenNotBefore = Date.now() + TOKEN_RETRY_MS;
    render();
    return;
  }
  claiming = false;
  if (r.status === 200 && r.body.token) {
    forward(r.body);
    return;
  }
  S.phase = 'waiting';
  if (r.status === 401 || r.status === 404) {
    rejoin();
    return;
  }
  if (r.status === 423 || closedAnswer(r)) {
    if (r.status === 423) showPaused(r.body.message);
    S.tokenNotBefore = Date.now() + PAUSED_RETRY_MS;
    return;
  }
  // 425: not yet; the page ran slightly ahead of the room.
  if (S.answer) S.answer.admitted = false;
  S.tokenNotBefore = Date.now() + TOKEN_RETRY_MS;
  render();
}

function forward(grant) {
  const target = httpURL(cfg.returnUrl) || httpURL(grant.targetUrl);
  if (!target) {
    S.phase = 'admitted';
    render();
    return;
  }
  const param = new URLSearchParams({ aditus_queue_token: grant.token }).toString();
  target.search = target.search.length > 1 ? target.search + '&' + param : '?' + param;
  S.phase = 'forwarding';
  conn.stop();
  forget();
  render();
  location.replace(target.toString());
}

// tick redraws the page and claims the token once the line reaches the
// visitor. A visitor looking elsewhere is told first and forwarded when
// they come back, so they do not miss the turn (and the token's lifetime
// starts when they are there to use it).
function tick() {
  render();
  if (S.phase !== 'waiting' || S.paused || closed(S) || claiming || Date.now() < S.tokenNotBefore) return;
  if (!admitted(S)) return;
  if (turn.background()) {
    S.turn = true;
    turn.tell(card);
    render();
    return;
  }
  S.turn = false;
  turn.reset();
  claim();
}

// offerNotice shows the offer to notify while the visitor waits, until
// they have answered it once.
function offerNotice() {
  const button = document.getElementById('aq-notify');
  if (!button) return;
  const show = () => {
    if (S.phase !== 'waiting') {
      button.hidden = true;
      return;
    }
    const offer = turn.offerable();
    button.hidden = !offer;
    card.setAttribute('data-notify', offer ? 'offered' : 'answered');
  };
  button.addEventListener('click', () => {
    button.hidden = true;
    turn.ask(show);
  });
  setInterval(show, 1000);
  show();
}

// ---- start ----------------------------------------------------------------

async function resume() {
  const r = await refresh();
  if (r === 'invalid') return; // refresh has drawn a new number
  if (r === 'error') {
    later(resume, backoff());
    return;
  }
  conn.connect();
}

// begin reads the page data and follows the room with the number kept
// from before, or draws one.
function begin(dataEl, cardEl) {
  card = cardEl;
  cfg = JSON.parse(dataEl.textContent);
  room = (cfg.base || location.origin) + '/queue/' + encodeURIComponent(cfg.slug);
  store = storage(cfg.slug);
  // The room's mode as the page was served; the first answer says more.
  applyMode(S, cfg);
  page = view(card, words(cfg.lang, cfg.i18n));
  turn = turnNotice(cfg.i18n, cfg.name);
  conn = connection({
    wanted: () => !!S.ticket && S.phase !== 'forwarding' && S.phase !== 'gone',
    url: () => room.replace(/^http/, 'ws') + '/ws?ticket=' + encodeURIComponent(S.ticket),
    onOpen: () => {
      S.trouble = false;
    },
    onFrame,
    poll: refresh,
    pollSeconds: () => S.retryAfter,
  });
  card.setAttribute('data-script', 'started');
  drawPanel(cfg, room);
  adoptTicketFromURL();
  S.ticket = store.ticket();
  // The number of a ticket handed over in the address is in the page
  // already; it stays shown until the first answer.
  if (cfg.number > 0) S.number = cfg.number;
  S.start = store.start();
  setInterval(tick, TICK_MS);
  setInterval(heartbeat, HEARTBEAT_MS);
  offerNotice();
  window.addEventListener('focus', tick);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState !== 'visible') return;
    tick();
    if (S.ticket && !conn.hasSocket() && S.phase === 'waiting') conn.connect();
  });
  if (!S.ticket) {
    join();
    return;
  }
  S.phase = 'waiting';
  render();
  resume();
}

function httpURL(s) {
  if (!s) return null;
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u : null;
  } catch (e) {
    return null;
  }
}

const pageData = document.getElementById('aq-room');
const pageCard = document.getElementById('aq-card');
if (pageData && pageCard) begin(pageData, pageCard);
