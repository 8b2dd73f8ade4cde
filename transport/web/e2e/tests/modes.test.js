// The room's modes on the hosted page: a change of mode reaches a waiting
// page over its socket at once, and an arriving visitor sees it too.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slug, waitFor } from '../lib/harness.js';
import { browser, queue, queuedRoom, shop, useQueue } from '../lib/suite.js';

useQueue({ withShop: true });

// waitingPage opens a room where the visitor has to wait, and answers the
// page once it follows the room over its socket.
async function waitingPage(prefix, locale = 'en-GB') {
  const { s, site } = await queuedRoom(prefix, { name: 'Winter Lights', ratePerMinute: 1 });
  const ctx = await browser.newContext({ locale });
  const page = await ctx.newPage();
  const frames = [];
  const polls = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => frames.push({ at: Date.now(), data: String(f.payload) })));
  page.on('request', (r) => {
    if (r.url().includes(`/queue/${s}/status`)) polls.push(Date.now());
  });
  await page.goto(queue.roomURL(s));
  await waitFor(async () => (await page.textContent('#aq-state')) === 'You are in the queue', { message: 'the waiting state' });
  await waitFor(async () => frames.length > 0, { message: 'a room frame over the socket' });
  const number = await page.textContent('#aq-number');
  return { s, site, ctx, page, frames, polls, number };
}

test('sold out reaches a waiting page over its socket within 2 s, and queue brings the same place back', async () => {
  const w = await waitingPage('soldout');
  const changed = Date.now();
  const site = await queue.updateRoom(w.site, {
    mode: 'soldOut',
    soldOutMessage: { de: 'Alles verkauft.', en: 'Every ticket has been sold.', linkUrl: shop.url('/returns') },
  });
  await waitFor(async () => (await w.page.textContent('#aq-state')) === 'Sold out', { timeout: 2000, interval: 50, message: 'sold out within 2 s' });
  const shown = Date.now();
  assert.ok(
    !w.polls.some((t) => t >= changed && t <= shown),
    'the page polled status between the change and showing it: it was not pushed',
  );
  assert.ok(w.frames.some((f) => f.at >= changed && f.data.includes('"mode":"soldOut"')), 'no sold-out frame on the socket');
  assert.ok((await w.page.textContent('#aq-banner')).includes('Every ticket has been sold.'));
  assert.equal(await w.page.getAttribute('#aq-banner-link', 'href'), shop.url('/returns'));
  assert.ok(await w.page.isVisible('#aq-banner-link'));
  assert.ok(!(await w.page.isVisible('#aq-progress-block')), 'progress still shown when sold out');

  await queue.updateRoom(site, { mode: 'queue' });
  await waitFor(async () => (await w.page.textContent('#aq-state')) === 'You are in the queue', { timeout: 5000, message: 'back in the queue' });
  assert.equal(await w.page.textContent('#aq-number'), w.number, 'the number changed on the return to queue');
  assert.ok(!(await w.page.isVisible('#aq-banner')), 'the sold-out banner stayed');
  await w.ctx.close();
});

test('an event naming soldOut for its end sells the room out on a waiting page within 2 s of its end', async () => {
  const w = await waitingPage('eventend');
  const ends = new Date(Date.now() + 4000);
  await queue.updateRoom(w.site, {
    events: [{ name: 'Main sale', startsAt: new Date(Date.now() - 60000).toISOString(), endsAt: ends.toISOString(), endMode: 'soldOut' }],
  });
  await waitFor(async () => (await w.page.textContent('#aq-state')) === 'Sold out', { timeout: 8000, interval: 50, message: 'sold out at the end' });
  const late = Date.now() - ends.getTime();
  assert.ok(late >= 0, `sold out ${-late} ms before the event's end`);
  assert.ok(late <= 2000, `sold out ${late} ms after the event's end`);
  assert.ok(w.frames.some((f) => f.at >= ends.getTime() && f.data.includes('"mode":"soldOut"')), 'no sold-out frame on the socket');
  await w.ctx.close();
});

test('the emergency stop tells a waiting visitor that nobody is let in and that they keep their place', async () => {
  const w = await waitingPage('queueall');
  await queue.updateRoom(w.site, { mode: 'queueAll' });
  await waitFor(async () => (await w.page.textContent('#aq-state')) === 'Admission is on hold', { timeout: 2000, interval: 50, message: 'the stop within 2 s' });
  assert.ok((await w.page.textContent('#aq-banner')).includes('you keep your place'));
  assert.equal(await w.page.textContent('#aq-number'), w.number);
  await w.ctx.close();
});

test('a visitor arriving at a sold-out room is told in their language and given no number', async () => {
  const s = slug('closed');
  const { site } = await queue.createRoom({ slug: s, name: 'Winter Lights', targetUrl: shop.url('/'), ratePerMinute: 60 });
  await queue.updateRoom(site, { mode: 'soldOut', soldOutMessage: { de: 'Alles verkauft.', en: 'Every ticket has been sold.' } });
  const ctx = await browser.newContext({ locale: 'de-DE' });
  const page = await ctx.newPage();
  const joins = [];
  page.on('response', (r) => {
    if (r.url().endsWith(`/queue/${s}/join`)) joins.push(r.status());
  });
  await page.goto(queue.roomURL(s));
  await waitFor(async () => (await page.textContent('#aq-state')) === 'Ausverkauft', { message: 'the sold-out state' });
  assert.ok((await page.textContent('#aq-banner')).includes('Alles verkauft.'));
  assert.ok(!(await page.isVisible('#aq-ticket')), 'a ticket shown without a number');
  assert.ok(!(await page.isVisible('#aq-banner-link')), 'a link shown without one configured');
  assert.equal(joins[0], 410);
  await ctx.close();
});
