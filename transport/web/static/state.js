// state.js: the page's whole state, what follows from it, and the part of
// it kept across reloads. The flow (room.js) changes the state, the view
// (render.js) draws it; the functions here derive the admission line and
// the visitor's place from it and the clock, and change nothing else.

const DRAW_GRACE_MS = 60000;

// newState is the state of a page that holds no number yet.
export function newState() {
  return {
    phase: 'joining', // joining | verifying | waiting | admitted | forwarding | gone
    ticket: null,
    number: 0,
    position: 0, // place after a draw; 0 while unknown
    start: null, // serving when the number was drawn: where the progress bar starts
    answer: null, // last join/status answer: {serving, ahead, admitted, wait, at}
    line: null, // last room frame: {serving, rate, cap, serverTime}
    offset: null, // server clock minus local clock, ms
    opensAt: null, // ms, server clock
    drawn: false,
    paused: false,
    pausedMessage: '',
    mode: 'queue', // queue | passthrough | soldOut | maintenance | queueAll
    turn: false, // admitted while the page is in the background: told, not yet forwarded
    modeMessage: null, // the operator's {de, en, linkUrl} of a closed mode
    trouble: false, // the last request or socket failed
    retryAfter: 5, // seconds between status polls
    tokenNotBefore: 0,
    positionAsked: false,
    shown: 0, // highest serving displayed, so the number never runs backwards
    announced: { text: '', at: 0 },
  };
}

function num(v) {
  return typeof v === 'number' && isFinite(v) ? v : 0;
}

function parseTime(v) {
  if (!v) return null;
  const ms = Date.parse(v);
  return isNaN(ms) ? null : ms;
}

// applyAnswer takes a join or status answer in. While the page follows the
// room without a socket (live false), the answer is also the fresher line.
export function applyAnswer(S, b, live) {
  if (typeof b.number === 'number') S.number = b.number;
  if (typeof b.position === 'number' && b.position > 0) S.position = b.position;
  S.answer = {
    serving: num(b.serving),
    ahead: typeof b.ahead === 'number' ? b.ahead : null,
    admitted: b.admitted === true,
    wait: typeof b.estimatedWaitSeconds === 'number' ? b.estimatedWaitSeconds : null,
    at: Date.now(),
  };
  if (typeof b.retryAfterSeconds === 'number' && b.retryAfterSeconds > 0) {
    S.retryAfter = Math.min(60, Math.max(2, b.retryAfterSeconds));
  }
  if ('opensAt' in b) S.opensAt = parseTime(b.opensAt);
  if (b.active === false) S.paused = true;
  else if (b.active === true) S.paused = false;
  S.mode = typeof b.mode === 'string' ? b.mode : 'queue';
  if (S.line && !live) {
    S.line.serving = Math.max(S.line.serving, S.answer.serving);
    S.line.serverTime = serverNow(S);
  }
  if (S.start === null) S.start = S.answer.serving;
}

// applyFrame takes a frame from the room's socket in; it reports false for
// anything but a room frame.
export function applyFrame(S, f) {
  if (!f || f.type !== 'room') return false;
  if (typeof f.serverTime === 'number') {
    // Network delay only ever makes a frame look older, so the largest
    // offset seen is the best one; a much smaller one means the local
    // clock was changed.
    const off = f.serverTime - Date.now();
    if (S.offset === null || off > S.offset || S.offset - off > 2000) S.offset = off;
  }
  S.line = {
    serving: num(f.serving),
    rate: num(f.rate),
    cap: typeof f.cap === 'number' ? f.cap : Infinity,
    serverTime: typeof f.serverTime === 'number' ? f.serverTime : serverNow(S),
  };
  S.paused = f.paused === true || f.active === false;
  if (!S.paused) S.pausedMessage = '';
  applyMode(S, f);
  if ('opensAt' in f) S.opensAt = parseTime(f.opensAt);
  S.drawn = f.drawn === true;
  // A stale frame: the node reaches no server of the queue for now.
  S.trouble = f.stale === true;
  return true;
}

// applyMode takes the mode of a frame or of a sold-out or maintenance
// answer in.
export function applyMode(S, b) {
  S.mode = typeof b.mode === 'string' ? b.mode : 'queue';
  const m = b.modeMessage;
  S.modeMessage = m && typeof m === 'object' ? m : null;
}

// closed reports whether the room's mode turns everyone away: sold out or
// in maintenance.
export function closed(S) {
  return S.mode === 'soldOut' || S.mode === 'maintenance';
}

export function serverNow(S) {
  return Date.now() + (S.offset || 0);
}

// servingNow extrapolates the admission line between frames:
// serving + rate × elapsed, never beyond cap, frozen while paused.
export function servingNow(S) {
  const L = S.line;
  if (!L) return S.answer ? S.answer.serving : 0;
  if (S.paused || !(L.rate > 0)) return Math.min(L.serving, L.cap);
  const elapsed = Math.max(0, serverNow(S) - L.serverTime);
  return Math.min(L.serving + (L.rate * elapsed) / 60000, L.cap);
}

// inPreQueue reports whether the room has not opened (or not drawn) yet
// for this visitor: numbers wait for the draw, not for the line.
export function inPreQueue(S) {
  if (!S.opensAt || S.position || S.drawn) return false;
  return serverNow(S) < S.opensAt + DRAW_GRACE_MS;
}

// myPlace is the visitor's place in the line: the drawn position once
// known, the number until then.
export function myPlace(S) {
  return S.position || S.number;
}

// admitted reports whether the line has reached the visitor.
export function admitted(S) {
  const pos = myPlace(S);
  if (!pos || inPreQueue(S)) return false;
  if (S.answer && S.answer.admitted) return true;
  return pos <= Math.floor(servingNow(S));
}

// storage keeps the ticket and the progress bar's start across reloads
// in sessionStorage; where that is unavailable the number lives as long
// as the page.
export function storage(slug) {
  const keyTicket = 'aditus-queue:' + slug + ':ticket';
  const keyStart = 'aditus-queue:' + slug + ':start';
  function load(key) {
    try {
      return window.sessionStorage.getItem(key);
    } catch (e) {
      return null;
    }
  }
  function save(key, value) {
    try {
      window.sessionStorage.setItem(key, String(value));
    } catch (e) {
      /* private mode or quota: keep going without persistence */
    }
  }
  return {
    ticket: () => load(keyTicket),
    start() {
      const v = load(keyStart);
      return v !== null && isFinite(Number(v)) ? Number(v) : null;
    },
    saveTicket: (ticket) => save(keyTicket, ticket),
    saveStart: (start) => save(keyStart, start),
    clear() {
      try {
        window.sessionStorage.removeItem(keyTicket);
        window.sessionStorage.removeItem(keyStart);
      } catch (e) {
        /* nothing stored */
      }
    },
  };
}
