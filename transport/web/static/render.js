// render.js: draws the state onto the page. Every value reaches the page
// through textContent; a text is written only when it changed, so the
// quarter-second ticks cost nothing while the figures stand still.

import { fill } from './i18n.js';
import { closed, inPreQueue, myPlace, serverNow, servingNow } from './state.js';

// The position is read out at most once a minute: more often, a screen
// reader would talk over everything else the visitor does meanwhile.
const ANNOUNCE_EVERY_MS = 60000;

// view answers the renderer of the card with words (i18n.js) for its text.
export function view(card, words) {
  const { t, lang, number } = words;
  const last = {};

  function setText(id, text) {
    if (last[id] === text) return;
    last[id] = text;
    const node = document.getElementById(id);
    if (node) node.textContent = text;
  }

  function setHidden(id, hidden) {
    const node = document.getElementById(id);
    if (node && node.hidden !== hidden) node.hidden = hidden;
  }

  function render(S) {
    const f = figures(S);
    card.setAttribute('data-state', S.phase);
    card.setAttribute('data-mode', S.mode);
    if (S.paused) card.setAttribute('data-paused', '');
    else card.removeAttribute('data-paused');
    setText('aq-state', stateText(S, f.pre));
    renderBanner(S);
    renderTicket(S, f);
    renderProgress(S, f);
    announce(S, f);
    announceTurn(S);
  }

  function stateText(S, pre) {
    if (S.phase !== 'gone' && S.phase !== 'forwarding' && closed(S)) {
      return S.mode === 'soldOut' ? t.soldOut : t.maintenance;
    }
    switch (S.phase) {
      case 'gone':
        return t.gone;
      case 'forwarding':
        return t.forwarding;
      case 'admitted':
        return t.admitted;
      case 'verifying':
        return S.paused ? t.paused : t.verifying;
      case 'joining':
        return S.paused ? t.paused : t.joining;
    }
    if (S.paused) return t.paused;
    if (S.turn) return t.admitted;
    if (S.mode === 'queueAll') return t.queueAll;
    if (pre) return serverNow(S) < S.opensAt ? t.preQueue : t.drawing;
    return t.waiting;
  }

  // The room's own words on a pause come after the page's explanation:
  // they may be an operator's reason, in whatever language it was typed.
  function renderBanner(S) {
    let banner = '';
    let detail = '';
    let link = '';
    if (S.phase === 'gone') banner = t.gone;
    else if (closed(S)) {
      const m = S.modeMessage || {};
      banner = S.mode === 'soldOut' ? t.soldOutDefault : t.maintenanceDefault;
      detail = modeText(m, lang);
      link = typeof m.linkUrl === 'string' && /^https?:\/\//i.test(m.linkUrl) ? m.linkUrl : '';
    } else if (S.mode === 'queueAll' && S.number > 0) banner = t.queueAllDefault;
    else if (S.paused) {
      banner = S.number > 0 ? t.pausedDefault : t.pausedJoin;
      detail = S.pausedMessage;
    } else if (S.trouble) banner = t.reconnecting;
    setText('aq-banner-text', banner);
    setText('aq-banner-detail', detail);
    setHidden('aq-banner-detail', detail === '');
    renderLink(link);
    setHidden('aq-banner', banner === '');
  }

  function renderLink(href) {
    const a = document.getElementById('aq-banner-link');
    if (!a) return;
    if (href && a.getAttribute('href') !== href) a.setAttribute('href', href);
    setText('aq-banner-link', href ? t.modeLink : '');
    setHidden('aq-banner-link', href === '');
  }

  function renderTicket(S, f) {
    const gone = S.phase === 'gone';
    setHidden('aq-ticket', gone || (!S.number && (S.paused || closed(S))));
    setText('aq-number', S.number ? number(S.number) : '–');
    setHidden('aq-position-row', !S.position);
    if (S.position) setText('aq-position', number(S.position));
    setHidden('aq-opening', !f.pre || gone);
    if (f.pre) {
      setText('aq-countdown', words.countdown(S.opensAt - serverNow(S)));
      setText('aq-opens-on', fill(t.opensOn, { time: words.date(S.opensAt) }));
    }
  }

  function renderProgress(S, f) {
    const through = S.phase === 'admitted' || S.phase === 'forwarding';
    setHidden('aq-progress-block', f.pre || S.phase === 'gone' || !S.number || closed(S));
    setText('aq-ahead', f.ahead === null ? '–' : number(f.ahead));
    setText('aq-serving', f.shown > 0 ? t.numberPrefix + number(f.shown) : '–');
    setText('aq-wait', through ? t.admitted : f.ahead === null ? '–' : words.wait(f.wait, f.ahead, S.paused));
    const pct = percent(S, f);
    const rounded = String(Math.round(pct));
    const progress = document.getElementById('aq-progress');
    if (progress && progress.getAttribute('aria-valuenow') !== rounded) {
      progress.setAttribute('aria-valuenow', rounded);
      document.getElementById('aq-bar').style.width = pct.toFixed(1) + '%';
    }
  }

  // announce reads the numbers to screen readers as one sentence, at most
  // once a minute while they move (the visible figures change several times a
  // second and are not live regions). Changes of state are announced by the
  // status line (#aq-state, role=status).
  function announce(S, f) {
    if (S.phase !== 'waiting' || S.paused || f.pre || f.ahead === null) return;
    const text = fill(t.announce, { ahead: number(f.ahead), wait: words.wait(f.wait, f.ahead, S.paused) });
    const now = Date.now();
    if (text === S.announced.text || now - S.announced.at < ANNOUNCE_EVERY_MS) return;
    S.announced = { text: text, at: now };
    setText('aq-announce', text);
  }

  // announceTurn says "it's your turn" once, assertively: it is the one
  // piece of news that should interrupt.
  function announceTurn(S) {
    const turn = S.turn || S.phase === 'admitted' || S.phase === 'forwarding';
    setText('aq-announce-turn', turn ? t.admitted : '');
  }

  // powTime records how long the proof of work took, for the browser tests
  // and anyone tuning a room's difficulty.
  function powTime(ms) {
    card.setAttribute('data-pow-ms', String(ms));
  }

  return { render, powTime };
}

// modeText is the operator's message of a closed mode in lang: the text
// the server chose for the page, the one in texts, German or English, else
// English, else German (as room.ModeMessage.Text).
function modeText(m, lang) {
  if (typeof m.text === 'string') return m.text;
  const texts = m.texts && typeof m.texts === 'object' ? m.texts : {};
  for (const l of [lang, 'en', 'de']) {
    if (typeof texts[l] === 'string' && texts[l]) return texts[l];
    if ((l === 'en' || l === 'de') && typeof m[l] === 'string' && m[l]) return m[l];
  }
  return '';
}

// figures derives what the card shows: whether the room is before its
// draw, the visitor's place, the serving number shown (which never runs
// backwards: S.shown keeps the highest), the people ahead and the wait in
// seconds (null while unknown).
function figures(S) {
  const pre = inPreQueue(S);
  const pos = myPlace(S);
  S.shown = Math.max(S.shown, servingNow(S));
  const shown = Math.floor(S.shown);
  let ahead = null;
  let wait = null;
  if (pos) {
    if (S.line) {
      ahead = Math.max(0, pos - shown - 1);
      wait = S.line.rate > 0 ? (ahead / S.line.rate) * 60 : null;
    } else if (S.answer) {
      ahead = S.answer.ahead !== null ? S.answer.ahead : Math.max(0, pos - shown - 1);
      wait = S.answer.wait !== null ? Math.max(0, S.answer.wait - (Date.now() - S.answer.at) / 1000) : null;
    }
    if (S.phase === 'admitted' || S.phase === 'forwarding') {
      ahead = 0;
      wait = 0;
    }
  }
  return { pre, pos, shown, ahead, wait };
}

// percent is how far the progress bar has come, from the serving number
// when the visitor drew theirs to their place.
function percent(S, f) {
  if (!f.pos) return 0;
  const from = S.start === null ? 0 : Math.min(S.start, f.pos - 1);
  let pct = f.pos - from > 0 ? ((S.shown - from) / (f.pos - from)) * 100 : 100;
  if (S.phase === 'admitted' || S.phase === 'forwarding' || f.ahead === 0) pct = Math.max(pct, 100);
  return Math.max(0, Math.min(100, pct));
}
