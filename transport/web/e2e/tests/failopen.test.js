// embed.js fails open: when the queue is down or does not answer, the shop
// stays usable — no redirect, no hang.

import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { freePort, sleep, slug, startQueue } from '../lib/harness.js';
import { startShop } from '../lib/shop.js';
import { browser, useBrowser } from '../lib/suite.js';

const cleanup = useBrowser();

// assertShopUsable checks that the tab stays on the shop page for a while
// and that the page answers clicks.
async function assertShopUsable(page, url, waitMs) {
  await sleep(waitMs);
  assert.equal(page.url(), url, 'the tab left the shop page');
  await page.click('#buy', { timeout: 2000 });
  assert.equal(await page.textContent('#cart'), '1');
}

test('the shop stays usable when the queue server is down', async () => {
  const queue = await startQueue();
  const s = slug('down');
  const shop = await startShop({ queueBase: queue.base, slug: s });
  cleanup.push(() => shop.stop());
  await queue.createRoom({ slug: s, name: 'Down Room', targetUrl: shop.url('/'), ratePerMinute: 1 });
  for (let i = 0; i < 3; i++) await queue.join(s); // a queue has formed
  await queue.stop();

  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const started = Date.now();
  await page.goto(shop.url('/event/42'), { waitUntil: 'load', timeout: 10000 });
  const loadMs = Date.now() - started;
  assert.ok(loadMs < 5000, `the page took ${loadMs} ms to load`);
  await assertShopUsable(page, shop.url('/event/42'), 1500);
  await ctx.close();
});

test('the shop stays usable when the queue accepts connections but never answers', async (t) => {
  // embed.js as the server renders it, pointed at a host that swallows
  // every request, and served by the shop itself.
  const queue = await startQueue();
  const s = slug('hang');
  const res = await fetch(`${queue.base}/queue/${s}/embed.js`);
  assert.equal(res.status, 200);
  const script = await res.text();
  await queue.stop();

  const hangPort = await freePort();
  const held = new Set();
  const hang = net.createServer((sock) => {
    held.add(sock);
    sock.on('close', () => held.delete(sock));
    sock.on('error', () => {});
  });
  await new Promise((resolve) => hang.listen(hangPort, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise((resolve) => {
        for (const sock of held) sock.destroy();
        hang.close(() => resolve());
      }),
  );
  const hangBase = `http://127.0.0.1:${hangPort}`;
  assert.ok(script.includes(JSON.stringify(queue.base)), 'embed.js does not carry the base URL as JSON');
  const shop = await startShop({
    queueBase: hangBase,
    slug: s,
    embedSrc: '/embed-copy.js',
    routes: { '/embed-copy.js': { type: 'text/javascript', body: script.replace(JSON.stringify(queue.base), JSON.stringify(hangBase)) } },
  });
  cleanup.push(() => shop.stop());

  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  let failedAt = 0;
  page.on('requestfailed', (r) => {
    if (r.url().startsWith(hangBase)) failedAt = Date.now();
  });
  const started = Date.now();
  await page.goto(shop.url('/event/42'), { waitUntil: 'load', timeout: 10000 });
  assert.ok(Date.now() - started < 2000, 'the page load waited for the queue');
  await assertShopUsable(page, shop.url('/event/42'), 4000);
  assert.ok(failedAt > 0, 'the request to the silent queue was never given up');
  const abortedAfter = failedAt - started;
  t.diagnostic(`embed.js gave up on the silent queue after ${abortedAfter} ms`);
  assert.ok(abortedAfter >= 2500 && abortedAfter < 8000, `aborted after ${abortedAfter} ms, want the 3 s timeout (not a hang)`);
  assert.equal(page.url(), shop.url('/event/42'));
  await ctx.close();
});
