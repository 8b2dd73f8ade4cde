// The capacity room's built-in waiting page in Chromium: a visitor who
// finds the room full sees an estimate on the first request and their
// place in line once the page comes back with its cookie, and the page
// refreshes by itself into the shop once the visitor inside leaves, also
// while one address floods the room without cookies.

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

// fullRoom starts the shop and our proxy in front of it, a room of one
// slot refreshing every second with the settings extra, and lets a first
// browser in: the room is full. It returns the proxy and that browser's
// page.
async function fullRoom(extra = '') {
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
      ${extra}
    }
  }
}
`);
  cleanup.push(proxy.stop);
  const first = await (await browser.newContext()).newPage();
  await first.goto(`${proxy.base}/`);
  assert.equal(await first.textContent('#shop'), 'Welcome to the shop');
  return { proxy, first };
}

test('the built-in waiting page shows the place in line and refreshes into the shop', async () => {
  const { proxy, first } = await fullRoom();

  const second = await (await browser.newContext()).newPage();
  const res = await second.goto(`${proxy.base}/`);
  assert.equal(res.status(), 503);
  assert.equal(res.headers()['cache-control'], 'no-store');
  assert.equal(res.headers()['retry-after'], '1');
  // A first request: a provisional place, counted once the cookie is back.
  assert.equal(await second.textContent('#position'), 'about 0 ahead');
  assert.equal(await second.textContent('#waiting'), '1');
  await waitFor(async () => (await second.textContent('#position').catch(() => '')) === '1', {
    timeout: 10000,
    message: 'the refreshed page shows place 1',
  });
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

// flood sends requests without cookies from 127.0.0.2 to base, conns at a
// time, until stop() is called; it counts the answers by status, and the
// challenge pages of proof of work apart.
function flood(base, conns) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: conns, localAddress: '127.0.0.2' });
  const counts = { challenges: 0 };
  let running = true;
  const one = () => new Promise((resolve) => {
    const req = http.get(`${base}/`, { agent }, (res) => {
      counts[res.statusCode] = (counts[res.statusCode] || 0) + 1;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => {
        if (body.includes('data-challenge=')) counts.challenges++;
        resolve();
      });
    });
    req.on('error', () => { counts.error = (counts.error || 0) + 1; resolve(); });
  });
  const loops = Array.from({ length: conns }, async () => {
    while (running) await one();
  });
  return {
    counts,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

// firstInLineThroughFlood waits for the second browser to be first in line
// while flood f goes on (its answers counted under key), then lets the
// first browser finish and waits for the second's page to refresh into the
// shop.
async function firstInLineThroughFlood(proxy, first, second, f, key) {
  await waitFor(async () => (await second.textContent('#position').catch(() => '')) === '1', {
    timeout: 10000,
    message: 'the browser is first in line, whatever the flood sent before it',
  });
  const before = f.counts[key];
  await waitFor(async () => f.counts[key] > before + 200, { timeout: 10000, message: `the flood goes on (${key})` });
  assert.equal(await second.textContent('#position'), '1');
  await first.goto(`${proxy.base}/done`);
  await waitFor(async () => (await second.locator('#shop').count()) === 1, {
    timeout: 10000,
    message: 'the waiting page refreshed into the shop during the flood',
  });
}

test('under a flood without cookies, a browser gets its place and is let in when the slot frees', async () => {
  const { proxy, first } = await fullRoom();

  const f = flood(proxy.base, 8);
  cleanup.push(f.stop);
  await waitFor(async () => (f.counts[503] || 0) > 200, { timeout: 10000, message: 'the flood is answered' });

  const second = await (await browser.newContext()).newPage();
  await second.goto(`${proxy.base}/`);
  await firstInLineThroughFlood(proxy, first, second, f, '503');
  await f.stop();
  assert.ok(f.counts[503] > 1000, `the flood sent ${f.counts[503]} requests answered 503`);
  assert.equal(f.counts[200] || 0, 0, 'no flood request was let in');
});

test('when a flood turns proof of work on, a browser solves the challenge, gets its place and is let in', async () => {
  // One address may bring any number of arrivals here, so that the flood
  // counts: pow_auto arms at 100 arrivals a second.
  const { proxy, first } = await fullRoom(`address_budget { burst = 100000 }
      pow_auto {
        arrivals_per_minute = 6000
        bits                = 4
      }`);
  const f = flood(proxy.base, 8);
  cleanup.push(f.stop);
  await waitFor(async () => f.counts.challenges > 100, { timeout: 10000, message: 'the flood is asked for proof of work' });

  const second = await (await browser.newContext()).newPage();
  // The challenge page solves and reloads at once: what it was, and what
  // the browser sent back, are read from the navigations.
  const pages = [];
  second.on('request', (req) => {
    if (!req.isNavigationRequest()) return;
    const p = { cookie: null, body: null };
    pages.push(p);
    req.allHeaders().then((h) => { p.cookie = h.cookie || ''; }, () => { p.cookie = ''; });
  });
  second.on('response', async (res) => {
    if (!res.request().isNavigationRequest()) return;
    const p = pages[pages.length - 1];
    p.status = res.status();
    p.cacheControl = res.headers()['cache-control'];
    p.body = await res.text().catch(() => '');
  });
  const started = Date.now();
  await second.goto(`${proxy.base}/`);
  await waitFor(async () => (await second.locator('#position').count()) === 1, {
    timeout: 60000,
    message: 'the browser solved the challenge and got the waiting page',
  });
  const ms = Date.now() - started;
  await waitFor(async () => pages.length >= 2 && pages[0].body !== null && pages[1].cookie !== null, { timeout: 5000, message: 'both navigations seen' });
  assert.equal(pages[0].status, 503);
  assert.equal(pages[0].cacheControl, 'no-store');
  const m = /data-challenge="([^"]+)" data-bits="(\d+)" data-cookie="([^"]+)"/.exec(pages[0].body);
  assert.ok(m, `a first request during the flood gets the challenge page, not: ${pages[0].body.slice(0, 300)}`);
  const bits = m[2];
  assert.ok(pages[1].cookie.includes(`${m[3]}=${m[1]}.`), `the page came back with the solution in ${m[3]}: ${pages[1].cookie}`);
  await firstInLineThroughFlood(proxy, first, second, f, 'challenges');
  await f.stop();
  assert.equal(f.counts[200] || 0, 0, 'no flood request was let in');
  console.log(`proof of work in Chromium: ${bits} bits, ${ms} ms from the first request to the waiting page; flood: ${f.counts.challenges} challenge pages of ${f.counts[503]} answers 503`);
});
