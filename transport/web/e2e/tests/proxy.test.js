// The capacity room's built-in waiting page in Chromium: a visitor who
// finds the room full sees their place in line, and the page refreshes by
// itself into the shop once the visitor inside leaves.

import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { freePort, startProxy, waitFor } from '../lib/harness.js';
import { browser, useBrowser } from '../lib/suite.js';

const cleanup = useBrowser();

// startShop is the upstream: a page, and /done which frees the visitor's
// slot with the release header.
async function startShop() {
  const port = await freePort();
  const srv = http.createServer((req, res) => {
    const headers = { 'Content-Type': 'text/html; charset=utf-8' };
    if (req.url === '/done') headers['Aditus-Queue-Release'] = '1';
    res.writeHead(200, headers);
    res.end(`<!doctype html><title>Shop</title><h1 id="shop">Welcome to the shop</h1><p>${req.url}</p>`);
  });
  await new Promise((resolve) => srv.listen(port, '127.0.0.1', resolve));
  return { addr: `127.0.0.1:${port}`, stop: () => new Promise((resolve) => srv.close(resolve)) };
}

test('the built-in waiting page shows the place in line and refreshes into the shop', async () => {
  const shop = await startShop();
  cleanup.push(shop.stop);
  const proxy = await startProxy(`
host "127.0.0.1" {
  location "/" {
    upstream "${shop.addr}" {}
    waiting_room {
      active         = 1
      on_store_error = "wait"
      refresh        = "1s"
    }
  }
}
`);
  cleanup.push(proxy.stop);

  const first = await (await browser.newContext()).newPage();
  await first.goto(`${proxy.base}/`);
  assert.equal(await first.textContent('#shop'), 'Welcome to the shop');

  const second = await (await browser.newContext()).newPage();
  const res = await second.goto(`${proxy.base}/`);
  assert.equal(res.status(), 503);
  assert.equal(res.headers()['cache-control'], 'no-store');
  assert.equal(res.headers()['retry-after'], '1');
  assert.equal(await second.textContent('#position'), '1');
  assert.equal(await second.textContent('#waiting'), '1');
  // Still waiting after a few refreshes while the first visitor is inside.
  await second.waitForTimeout(2500);
  assert.equal(await second.textContent('#position'), '1');

  // The first visitor finishes; the shop frees the slot at once.
  await first.goto(`${proxy.base}/done`);
  await waitFor(async () => (await second.locator('#shop').count()) === 1, {
    timeout: 10000,
    message: 'the waiting page refreshed into the shop',
  });
  assert.equal(await second.textContent('#shop'), 'Welcome to the shop');
});
