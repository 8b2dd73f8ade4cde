// The page's live regions, without a browser: render.js reads the
// position out at most once a minute however often the figures move, and
// the turn once. A stand-in document and clock drive it.

import assert from 'node:assert/strict';
import { test } from 'node:test';

const nodes = {};
globalThis.document = {
  getElementById(id) {
    if (!nodes[id]) nodes[id] = { id, textContent: '', hidden: false, style: {}, attrs: {}, setAttribute(k, v) { this.attrs[k] = v; }, getAttribute(k) { return this.attrs[k] ?? null; }, removeAttribute(k) { delete this.attrs[k]; } };
    return nodes[id];
  },
};
let now = 1_000_000;
Date.now = () => now;

const { view } = await import('../../static/render.js');
const { words } = await import('../../static/i18n.js');
const { newState } = await import('../../static/state.js');

const t = { announce: '{ahead} ahead of you. Estimated wait: {wait}.', admitted: 'It’s your turn!', waitUnderOne: 'less than a minute', waitMinutes: 'about {n}', waitHours: 'about {h} {m}', waitPaused: 'paused', numberPrefix: 'No. ', waiting: 'waiting' };

test('the position is read out at most once a minute, the turn once', () => {
  const card = document.getElementById('aq-card');
  const page = view(card, words('en', t));
  const S = newState();
  Object.assign(S, { phase: 'waiting', ticket: 'x', number: 200, start: 0 });
  const said = [];
  let last = '';
  // The line moves by one every 5 s for ten minutes.
  for (let i = 0; i < 120; i++) {
    S.answer = { serving: i, ahead: 199 - i, admitted: false, wait: (199 - i) * 5, at: now };
    page.render(S);
    const text = document.getElementById('aq-announce').textContent;
    if (text !== last) said.push({ at: now, text });
    last = text;
    now += 5000;
  }
  assert.ok(said.length >= 9 && said.length <= 10, `${said.length} announcements in ten minutes`);
  for (let i = 1; i < said.length; i++) assert.ok(said[i].at - said[i - 1].at >= 60000, JSON.stringify(said));
  assert.equal(document.getElementById('aq-announce-turn').textContent, '');
  S.phase = 'admitted';
  page.render(S);
  page.render(S);
  assert.equal(document.getElementById('aq-announce-turn').textContent, 'It’s your turn!');
});
