// The hosted waiting-room page on its own: languages, the unknown room, a
// paused room and a scheduled opening with its draw.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slug, waitFor } from '../lib/harness.js';
import { browser, queue, queuedRoom, shop, useQueue } from '../lib/suite.js';

useQueue({ withShop: true });

// busyRoom creates a room where a new visitor has to wait.
async function busyRoom(prefix, fields = {}) {
  const room = await queuedRoom(prefix, { name: 'Summer Nights Open Air', ratePerMinute: 1, ...fields });
  await queue.join(room.s);
  return room;
}

for (const tc of [
  { name: 'German by locale', locale: 'de-DE', lang: 'de', texts: ['Ihre Wartenummer', 'Vor Ihnen', 'Einlass aktuell bis', 'Geschätzte Wartezeit'], state: 'Sie sind in der Warteschlange' },
  { name: 'English by locale', locale: 'en-US', lang: 'en', texts: ['Your waiting number', 'Ahead of you', 'Now admitting up to', 'Estimated wait'], state: 'You are in the queue' },
  { name: 'German as the first acceptable language', header: 'fr-CH;q=0.5, de-CH;q=0.9, en;q=0.8', lang: 'de', texts: ['Ihre Wartenummer'], state: 'Sie sind in der Warteschlange' },
  { name: 'French by the first acceptable language', header: 'fr-FR,fr;q=0.9', lang: 'fr', texts: ['Votre numéro d’attente'], state: 'Vous êtes dans la file d’attente' },
  { name: 'English for a language it has no catalogue of', header: 'sv-SE,sv;q=0.9', lang: 'en', texts: ['Your waiting number'], state: 'You are in the queue' },
]) {
  test(`the waiting room speaks ${tc.name}`, async () => {
    const { s } = await busyRoom('lang');
    const ctx = await browser.newContext(tc.locale ? { locale: tc.locale } : { extraHTTPHeaders: { 'Accept-Language': tc.header } });
    const page = await ctx.newPage();
    const res = await page.goto(queue.roomURL(s));
    assert.equal(res.status(), 200);
    assert.equal(await page.getAttribute('html', 'lang'), tc.lang);
    const body = await page.textContent('body');
    for (const text of tc.texts) assert.ok(body.includes(text), `page lacks ${text}`);
    await waitFor(async () => (await page.textContent('#aq-state')) === tc.state, { message: `state "${tc.state}"` });
    await ctx.close();
  });
}

test('an unknown room answers 404 with a clear page', async () => {
  for (const [locale, title] of [
    ['en-GB', 'Waiting room not found'],
    ['de-AT', 'Warteraum nicht gefunden'],
  ]) {
    const ctx = await browser.newContext({ locale });
    const page = await ctx.newPage();
    const res = await page.goto(queue.roomURL(slug('missing')));
    assert.equal(res.status(), 404);
    assert.equal((await page.textContent('h1')).trim(), title);
    assert.equal(await page.title(), title);
    await ctx.close();
  }
});

test('a paused room says so, keeps retrying and continues when resumed', async () => {
  let { s, site } = await busyRoom('paused');
  site = await queue.updateRoom(site, { active: false });
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  const joins = [];
  page.on('response', (r) => {
    if (r.url().endsWith(`/queue/${s}/join`)) joins.push(r.status());
  });
  await page.goto(queue.roomURL(s));
  await waitFor(async () => (await page.textContent('#aq-state')) === 'Admission is paused', { message: 'the paused state' });
  assert.ok(await page.isVisible('#aq-banner'), 'no explanation shown');
  assert.ok((await page.textContent('#aq-banner')).trim().length > 10);
  assert.equal(joins[0], 423);

  await queue.updateRoom(site, { active: true });
  await waitFor(async () => /\d/.test(await page.textContent('#aq-number')), { timeout: 20000, message: 'a number after resuming' });
  assert.ok(joins.length >= 2 && joins[joins.length - 1] === 200, `joins answered ${joins}`);
  await ctx.close();
});

test('before a scheduled opening the page counts down, promises a fair draw, then shows the drawn place', async () => {
  const s = slug('opening');
  const opensAt = new Date(Date.now() + 8000).toISOString();
  await queue.createRoom({ slug: s, name: 'Presale', targetUrl: shop.url('/'), ratePerMinute: 12, opensAt });
  await queue.join(s);
  await queue.join(s);
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  await page.goto(queue.roomURL(s));
  await waitFor(() => page.isVisible('#aq-opening'), { message: 'the countdown' });
  assert.match(await page.textContent('#aq-countdown'), /^00:00:0\d$/);
  assert.match(await page.textContent('.aq-draw-note'), /drawn at random/);
  assert.equal(await page.textContent('#aq-state'), 'Admission opens soon');
  assert.ok(!(await page.isVisible('#aq-progress-block')), 'stats shown before the draw');

  await waitFor(() => page.isVisible('#aq-position-row'), { timeout: 20000, message: 'the drawn position' });
  const position = Number((await page.textContent('#aq-position')).replace(/\D/g, ''));
  assert.ok(position >= 1 && position <= 3, `position ${position} after a draw among 3`);
  assert.ok(!(await page.isVisible('#aq-opening')), 'countdown still shown after the draw');
  await ctx.close();
});

// Chromium runs modules, so it never loads the page's nomodule script on
// its own: the test adds that script by hand, once where room.js did not
// run (as in a browser without modules) and once where it did.
test('a browser without ES modules is told to use a current one; one with them keeps its page', async () => {
  const { s } = await busyRoom('nomodule');
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  await page.route(/\/queue\/assets\/room\.([0-9a-f]{16}\.)?js/, (route) => route.abort());
  await page.goto(queue.roomURL(s));
  const fallback = await page.getAttribute('script[nomodule]', 'src');
  await page.addScriptTag({ url: fallback });
  await waitFor(async () => (await page.getAttribute('#aq-card', 'data-state')) === 'unsupported', { message: 'unsupported state' });
  assert.ok(await page.isVisible('#aq-banner'));
  assert.match(await page.textContent('#aq-banner-text'), /too old for the waiting room/);

  const live = await ctx.newPage();
  await live.goto(queue.roomURL(s));
  await waitFor(async () => (await live.textContent('#aq-state')) === 'You are in the queue', { message: 'queue state' });
  await live.addScriptTag({ url: fallback });
  assert.equal(await live.getAttribute('#aq-card', 'data-state'), 'waiting');
  assert.ok(!(await live.isVisible('#aq-banner')));
  await ctx.close();
});
