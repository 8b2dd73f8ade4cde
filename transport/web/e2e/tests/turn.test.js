// A visitor who switched tabs is told that their turn has come (title and
// system notification, permission asked once on a click); apps read the
// room's state as JSON with fetch.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, slug, startQueue, waitFor } from '../lib/harness.js';
import { startShop } from '../lib/shop.js';

let queue;
let browser;
let shop;

before(async () => {
  queue = await startQueue();
  browser = await launchBrowser();
  shop = await startShop({ queueBase: queue.base, slug: 'none' });
});

after(async () => {
  await browser?.close();
  await shop?.stop();
  await queue?.stop();
});

// slowRoom is a room admitting one visitor every ten seconds, its burst
// of one used up.
async function slowRoom(prefix, fields = {}) {
  const s = slug(prefix);
  const room = await queue.createRoom({ slug: s, name: 'Harbour Concert', targetUrl: shop.url('/'), ratePerMinute: 6, ...fields });
  for (let i = 0; i < 5; i++) if (!(await queue.join(s)).admitted) break;
  return { s, ...room };
}

test('a visitor in another tab gets the title and a notification at their turn, and is forwarded on coming back', async () => {
  const { s } = await slowRoom('turn');
  const ctx = await browser.newContext({ locale: 'en-GB' });
  await ctx.grantPermissions(['notifications'], { origin: queue.base });
  const page = await ctx.newPage();
  await page.goto(queue.roomURL(s));
  await waitFor(async () => (await page.textContent('#aq-state')) === 'You are in the queue', { message: 'the waiting state' });
  // Playwright lets every page keep the focus; a real tab switch takes it.
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
  const title = await page.title();
  assert.ok(!(await page.isVisible('#aq-notify')), 'offered notifications the visitor already allowed');

  const other = await ctx.newPage();
  await other.goto(shop.url('/'));
  await other.bringToFront();
  await waitFor(() => page.evaluate(() => !document.hasFocus()), { message: 'the waiting tab in the background' });

  await waitFor(async () => (await page.title()) === 'It’s your turn! – Harbour Concert', { timeout: 30000, message: 'the turn in the title' });
  await waitFor(async () => (await page.getAttribute('#aq-card', 'data-notified')) === 'shown', { message: 'the notification shown' });
  assert.equal(await page.textContent('#aq-state'), 'It’s your turn!');
  assert.ok(page.url().startsWith(queue.base), 'forwarded while in the background');

  await page.bringToFront();
  await page.waitForURL((u) => u.toString().startsWith(shop.url('/')) && u.searchParams.has('aditus_queue_token'), { timeout: 10000 });
  assert.notEqual(title, '');
  await ctx.close();
});

test('the offer to notify asks for the permission once, and only on a click', async () => {
  const { s } = await slowRoom('ask');
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  await page.goto(queue.roomURL(s));
  await waitFor(async () => (await page.textContent('#aq-state')) === 'You are in the queue', { message: 'the waiting state' });
  await waitFor(async () => (await page.getAttribute('#aq-card', 'data-notify')) === 'offered', { message: 'the offer' });
  assert.ok(await page.isVisible('#aq-notify'));
  assert.equal(await page.textContent('#aq-notify'), 'Notify me when it’s my turn');
  assert.equal(await page.evaluate(() => Notification.permission), 'default', 'asked before any click');
  await page.click('#aq-notify');
  await waitFor(async () => !(await page.isVisible('#aq-notify')), { message: 'the offer gone after the click' });
  await page.reload();
  await waitFor(async () => (await page.textContent('#aq-state')) === 'You are in the queue', { message: 'the waiting state after reload' });
  await waitFor(async () => (await page.getAttribute('#aq-card', 'data-notify')) === 'answered', { message: 'the offer weighed after reload' });
  assert.ok(!(await page.isVisible('#aq-notify')), 'offered again after it was answered');
  await ctx.close();
});

test('an app reads its place as JSON with fetch, with the room\'s waiting status', async () => {
  const { s, site } = await slowRoom('json');
  await queue.updateRoom(site, { waitingStatus: 202 });
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  await page.goto(`${queue.base}/queue/healthz`);
  const ask = (path) =>
    page.evaluate(async (p) => {
      const r = await fetch(p, { headers: { Accept: 'application/json' } });
      return { status: r.status, retryAfter: r.headers.get('Retry-After'), body: await r.json() };
    }, path);
  const first = await ask(`/queue/${s}`);
  assert.equal(first.status, 202);
  assert.equal(first.body.state, 'waiting');
  assert.equal(first.body.mode, 'queue');
  assert.ok(first.body.position > 1 && typeof first.body.ticket === 'string', JSON.stringify(first.body));
  assert.equal(String(first.body.refreshSeconds), first.retryAfter);
  const again = await ask(`/queue/${s}?ticket=${encodeURIComponent(first.body.ticket)}`);
  assert.equal(again.body.position, first.body.position);
  await queue.updateRoom({ ...site, waitingStatus: 202 }, { mode: 'soldOut', soldOutMessage: { en: 'All gone.' } });
  await waitFor(async () => (await ask(`/queue/${s}?ticket=${encodeURIComponent(first.body.ticket)}`)).status === 410, { message: '410 when sold out' });
  const closed = await ask(`/queue/${s}?ticket=${encodeURIComponent(first.body.ticket)}`);
  assert.equal(closed.body.state, 'soldOut');
  assert.ok(closed.body.message.includes('All gone.'));
  await ctx.close();
});
