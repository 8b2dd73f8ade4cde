// The visitor's way through the script tag: silent admission below the rate,
// the waiting room above it, live movement and the return to the exact page.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, sleep, slug, startQueue, waitFor } from '../lib/harness.js';
import { startShop } from '../lib/shop.js';

let queue;
let browser;
const shops = [];

before(async () => {
  queue = await startQueue();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await Promise.all(shops.map((s) => s.stop()));
  await queue?.stop();
});

async function shopFor(s) {
  const shop = await startShop({ queueBase: queue.base, slug: s });
  shops.push(shop);
  return shop;
}

const passKey = (s) => `aditus-queue:${s}:pass`;
const readPass = (page, s) => page.evaluate((k) => sessionStorage.getItem(k), passKey(s));

// mainFrameURLs records every address the tab's main frame showed.
function mainFrameURLs(page) {
  const urls = [];
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) urls.push(f.url());
  });
  return urls;
}

// formQueue joins through the API until the room stops admitting at once,
// then adds `more` waiting visitors, so a browser arriving next must wait.
async function formQueue(s, more) {
  for (let i = 0; i < 50; i++) {
    const a = await queue.join(s);
    if (!a.admitted) break;
  }
  for (let i = 0; i < more; i++) await queue.join(s);
}

test('a visitor below the rate never sees the waiting room', async () => {
  const s = slug('calm');
  const shop = await shopFor(s);
  await queue.createRoom({ slug: s, name: 'Calm Room', targetUrl: shop.url('/'), ratePerMinute: 600 });
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const urls = mainFrameURLs(page);

  await page.goto(shop.url('/event/42'));
  const pass = JSON.parse(await waitFor(() => readPass(page, s), { message: 'the session pass' }));
  assert.ok(pass.exp > Date.now(), `pass ${JSON.stringify(pass)} is expired`);
  assert.equal(page.url(), shop.url('/event/42'));
  assert.ok(urls.every((u) => !u.startsWith(queue.base)), `the tab visited the queue: ${urls}`);

  // With the pass, the next page load asks the queue nothing.
  const calls = [];
  page.on('request', (r) => {
    if (r.url().startsWith(`${queue.base}/queue/${s}/`) && !r.url().endsWith('/embed.js')) calls.push(r.url());
  });
  await page.click('#shop-title');
  await page.goto(shop.url('/'));
  await sleep(800);
  assert.deepEqual(calls, []);
  assert.equal(page.url(), shop.url('/'));
  await ctx.close();
});

test('a visitor over the rate waits, moves up live, keeps the number on reload and lands on the page asked for', async () => {
  const s = slug('busy');
  const shop = await shopFor(s);
  let { site } = await queue.createRoom({ slug: s, name: 'Summer Nights Open Air', targetUrl: shop.url('/'), ratePerMinute: 1 });
  await formQueue(s, 3);

  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const urls = mainFrameURLs(page);
  const frames = [];
  page.on('websocket', (ws) => {
    ws.on('framereceived', (f) => {
      try {
        frames.push(JSON.parse(f.payload));
      } catch {
        /* not JSON */
      }
    });
  });

  await page.goto(shop.url('/event/42'));
  await page.waitForURL((u) => u.origin === queue.base && u.pathname === `/queue/${s}`, { timeout: 10000 });
  const arrival = urls.find((u) => u.startsWith(queue.base));
  assert.ok(new URL(arrival).searchParams.get('ticket'), `no ticket handed over in ${arrival}`);
  await waitFor(() => !new URL(page.url()).searchParams.has('ticket'), { message: 'the ticket to leave the address bar' });
  assert.equal(new URL(page.url()).searchParams.get('return'), shop.url('/event/42'));

  const number = await waitFor(async () => {
    const t = await page.textContent('#aq-number');
    return /\d/.test(t) && t;
  }, { message: 'a waiting number' });
  const ahead = Number((await page.textContent('#aq-ahead')).replace(/\D/g, ''));
  assert.ok(ahead >= 2, `ahead = ${ahead}, want a queue of at least 2`);
  assert.match(await page.textContent('#aq-serving'), /\d/);

  // A reload keeps the number: no new join, the same number shown.
  const joins = [];
  page.on('request', (r) => {
    if (r.url().endsWith(`/queue/${s}/join`)) joins.push(r.url());
  });
  await page.reload();
  await waitFor(async () => (await page.textContent('#aq-number')) === number, { message: `number ${number} after reload` });
  assert.deepEqual(joins, [], 'the reload drew a new number');
  await waitFor(() => frames.length > 0, { message: 'a room frame over the WebSocket' });

  // Raise the rate: the pushes move the visitor up until admitted.
  const aheadSeen = [];
  const watch = setInterval(async () => {
    try {
      const v = (await page.textContent('#aq-ahead')).replace(/\D/g, '');
      if (v !== '' && aheadSeen[aheadSeen.length - 1] !== Number(v)) aheadSeen.push(Number(v));
    } catch {
      /* navigating */
    }
  }, 100);
  const raisedAt = frames.length;
  site = await queue.updateRoom(site, { ratePerMinute: 30 });
  await page.waitForURL((u) => u.origin === shop.base && u.pathname === '/event/42', { timeout: 40000 });
  clearInterval(watch);

  assert.ok(frames.slice(raisedAt).some((f) => f.type === 'room' && f.rate === 30), 'no frame carried the new rate');
  assert.ok(aheadSeen.length >= 3, `ahead moved only through ${JSON.stringify(aheadSeen)}`);
  for (let i = 1; i < aheadSeen.length; i++) assert.ok(aheadSeen[i] < aheadSeen[i - 1], `ahead went up: ${JSON.stringify(aheadSeen)}`);

  // Back on the exact page, with a token that embed.js verified and removed.
  const landed = urls.filter((u) => u.startsWith(shop.url('/event/42')));
  assert.ok(landed.some((u) => new URL(u).searchParams.get('aditus_queue_token')), `no token in ${landed}`);
  await waitFor(() => !new URL(page.url()).searchParams.has('aditus_queue_token'), { message: 'the token to leave the address bar' });
  assert.equal(page.url(), shop.url('/event/42'));
  const pass = JSON.parse(await waitFor(() => readPass(page, s), { message: 'the session pass' }));
  assert.ok(pass.exp > Date.now());
  await ctx.close();
});

test('an invalid token sends the visitor through the waiting room and back to the same page', async () => {
  const s = slug('badtoken');
  const shop = await shopFor(s);
  await queue.createRoom({ slug: s, name: 'Token Room', targetUrl: shop.url('/'), ratePerMinute: 600 });
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const urls = mainFrameURLs(page);

  await page.goto(shop.url('/event/42?seat=A1&aditus_queue_token=not-a-token'));
  await page.waitForURL((u) => u.origin === shop.base && u.pathname === '/event/42' && !u.searchParams.has('aditus_queue_token') && urls.some((x) => x.startsWith(queue.base)), {
    timeout: 15000,
  });
  const room = new URL(urls.find((u) => u.startsWith(queue.base)));
  assert.equal(room.searchParams.get('return'), shop.url('/event/42?seat=A1'));
  assert.equal(page.url(), shop.url('/event/42?seat=A1'));
  await waitFor(() => readPass(page, s), { message: 'the session pass' });
  await ctx.close();
});

test('with proof of work on, the shop sends visitors to the waiting room, which solves it and forwards them', async (t) => {
  const s = slug('pow');
  const shop = await shopFor(s);
  await queue.createRoom({ slug: s, name: 'Protected On-Sale', targetUrl: shop.url('/'), ratePerMinute: 600, pow: { enabled: true, bits: 15 } });
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const urls = mainFrameURLs(page);
  let challengeAt = 0;
  let solvedAt = 0;
  page.on('response', (r) => {
    if (r.url() === `${queue.base}/queue/${s}/join` && r.status() === 428 && r.frame().url().startsWith(queue.base)) challengeAt = Date.now();
  });
  page.on('request', (r) => {
    if (r.url() === `${queue.base}/queue/${s}/join` && (r.postData() || '').includes('"pow"')) solvedAt = Date.now();
  });

  await page.goto(shop.url('/event/42'));
  await page.waitForURL((u) => u.origin === shop.base && u.pathname === '/event/42' && urls.some((x) => x.startsWith(queue.base)), { timeout: 20000 });
  const room = new URL(urls.find((u) => u.startsWith(queue.base)));
  assert.equal(room.searchParams.get('ticket'), null, 'a ticket was issued without proof of work');
  assert.equal(room.searchParams.get('return'), shop.url('/event/42'));
  assert.ok(challengeAt && solvedAt, 'the waiting room did not solve a challenge');
  t.diagnostic(`proof of work, 15 bits, 428 answer to solved join: ${solvedAt - challengeAt} ms`);
  await waitFor(() => readPass(page, s), { message: 'the session pass' });
  await ctx.close();
});

test('without a WebSocket the page polls, says it is still there and is still forwarded', async () => {
  const s = slug('nows');
  const shop = await shopFor(s);
  let { site } = await queue.createRoom({ slug: s, name: 'No Socket', targetUrl: shop.url('/'), ratePerMinute: 1 });
  await formQueue(s, 2);

  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  let sockets = 0;
  await page.routeWebSocket(/\/ws\?/, (ws) => {
    sockets++;
    ws.close({ code: 1011, reason: 'unavailable in this test' });
  });
  const polls = [];
  const heartbeats = [];
  page.on('request', (r) => {
    if (r.url().startsWith(`${queue.base}/queue/${s}/status?`)) polls.push(r.url());
    if (r.url() === `${queue.base}/queue/${s}/heartbeat`) heartbeats.push(r.postDataJSON());
  });
  await page.clock.install(); // timers under test control: a minute passes on demand
  await page.goto(queue.roomURL(s));
  await waitFor(async () => /\d/.test(await page.textContent('#aq-number')), { message: 'a waiting number' });
  const ticket = await page.evaluate((k) => sessionStorage.getItem(k), `aditus-queue:${s}:ticket`);
  assert.ok(ticket, 'no ticket stored');

  await page.clock.runFor(61000);
  await waitFor(() => heartbeats.length > 0, { message: 'a heartbeat' });
  assert.deepEqual(heartbeats[0], { ticket });
  assert.ok(sockets >= 1, 'the page never tried the socket');
  assert.ok(polls.length >= 1, 'the page did not poll');

  site = await queue.updateRoom(site, { ratePerMinute: 600 });
  await waitFor(
    async () => {
      await page.clock.runFor(5000);
      return new URL(page.url()).origin === shop.base;
    },
    { timeout: 30000, interval: 300, message: 'forwarding by polling' },
  );
  assert.ok(sockets >= 2, `the socket was not retried (${sockets} attempts)`);
  await ctx.close();
});
