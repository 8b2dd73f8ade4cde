// Capacity rooms in the operator's console: a room of the proxies' HCL
// file is listed beside the rate rooms and marked as such; its page shows
// the gauges pushed by the live socket; active changed from the console,
// and again through the admin API from elsewhere, is seen on the
// dashboard without a reload, with the difference from the file marked;
// the page passes axe-core.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openConsole, signedIn } from '../lib/console.js';
import { freePort, launchBrowser, startQueue, tempDir, waitFor } from '../lib/harness.js';

let queue;
let browser;
let shop;
let proxyBase;

before(async () => {
  const shopPort = await freePort();
  shop = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Shop</title><main><h1 id="shop">Shop</h1></main></html>');
  });
  await new Promise((resolve) => shop.listen(shopPort, '127.0.0.1', resolve));
  const proxyPort = await freePort();
  proxyBase = `http://127.0.0.1:${proxyPort}`;
  const file = path.join(tempDir('capacity-'), 'rooms.hcl');
  fs.writeFileSync(file, `
host "127.0.0.1" {
  location "/" {
    upstream "127.0.0.1:${shopPort}" {}
    waiting_room {
      active         = 1
      on_store_error = "wait"
      refresh        = "30s"
    }
  }
}
`);
  queue = await startQueue(['--proxy-config', file, '--proxy-addr', `127.0.0.1:${proxyPort}`]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => (shop ? shop.close(resolve) : resolve()));
  await queue?.stop();
});

const inside = (page) => page.textContent('[data-gauge="cap_gInside"]');

test('a capacity room is listed, watched live and changed at runtime from the console', async () => {
  const { ctx, page, problems } = await openConsole(browser, queue.base);
  await signedIn(page, queue.adminToken);
  // The proxy announces its room within seconds; the list refreshes every 3 s.
  const row = await page.waitForSelector('#rooms tr[data-capacity]', { timeout: 15000 });
  assert.equal(await row.$eval('[data-kind]', (el) => el.textContent), 'capacity room');
  await row.$eval('a', (a) => a.click());
  await waitFor(async () => (await inside(page)) === '0 / 1', { message: 'the gauge at 0 / 1' });
  assert.equal(await page.textContent('#cap-active-file'), 'as in the file');

  // A visitor goes in through the proxy: the gauge follows, pushed.
  const visitor = await (await browser.newContext()).newPage();
  await visitor.goto(`${proxyBase}/`);
  assert.equal(await visitor.textContent('#shop'), 'Shop');
  await waitFor(async () => (await inside(page)) === '1 / 1', { message: 'the gauge at 1 / 1' });
  await waitFor(async () => (await page.$$('#cap-nodes tr[data-node]')).length === 1, { message: 'the proxy node listed' });

  // active from the console.
  await page.fill('#cap-active', '3');
  await page.click('#cap-save');
  await waitFor(async () => /Saved/.test(await page.textContent('#cap-save-status')), { message: 'saved' });
  await waitFor(async () => (await inside(page)) === '1 / 3', { message: 'the gauge at 1 / 3' });
  assert.equal(await page.textContent('#cap-active-file'), 'differs from the file: 1');

  // active from the API, elsewhere: the open dashboard shows it, pushed.
  const cur = await queue.api('GET', '/api/admin/queue/capacity');
  const id = cur.body.rooms[0].id;
  const st = await queue.api('GET', `/api/admin/queue/capacity/${id}`);
  const res = await queue.api('PATCH', `/api/admin/queue/capacity/${id}`, { version: st.body.runtime.version, active: 7 });
  assert.equal(res.status, 200);
  await waitFor(async () => (await inside(page)) === '1 / 7', { message: 'the API change on the dashboard', timeout: 3000 });
  assert.equal(await page.inputValue('#cap-active'), '7');
  const audit = await page.$$('#cap-audit li');
  assert.equal(audit.length, 2);

  // A save from a form the operator began before a change made elsewhere
  // is refused (409), not written over it; the form shows the room again.
  await page.fill('#cap-active', '5');
  await queue.api('PATCH', `/api/admin/queue/capacity/${id}`, { version: st.body.runtime.version + 1, active: 8 });
  await waitFor(async () => (await inside(page)) === '1 / 8', { message: 'the second API change' });
  await page.click('#cap-save');
  await waitFor(async () => /changed meanwhile/.test(await page.textContent('#cap-save-status')), { message: 'the refusal shown' });
  await waitFor(async () => (await page.inputValue('#cap-active')) === '8', { message: 'the form read again' });
  assert.equal((await queue.api('GET', `/api/admin/queue/capacity/${id}`)).body.settings.active, 8);

  // Pause from the console: the gauge says so, the room lets nobody new in.
  await page.check('#cap-paused');
  await page.click('#cap-save');
  await waitFor(async () => /Saved/.test(await page.textContent('#cap-save-status')), { message: 'paused saved' });
  await waitFor(async () => (await page.textContent('#cap-gauges .gauge:first-child .gauge-sub')) === 'paused', { message: 'the paused gauge' });
  const newcomer = await (await browser.newContext()).newPage();
  const res2 = await newcomer.goto(`${proxyBase}/`);
  assert.equal(res2.status(), 503, 'a newcomer of a paused room waits');
  assert.equal(await page.textContent('#cap-paused-file'), 'differs from the file: no');
  assert.deepEqual(problems, []);
  await ctx.close();
});

test('the most bits of proof of work are set from the console, and a setting goes back to the file with its button', async () => {
  const { ctx, page, problems } = await openConsole(browser, queue.base);
  await signedIn(page, queue.adminToken);
  const id = (await queue.api('GET', '/api/admin/queue/capacity')).body.rooms[0].id;
  const state = async () => (await queue.api('GET', `/api/admin/queue/capacity/${id}`)).body;
  await page.goto(`${queue.base}/admin/#/capacity/${id}`);
  await waitFor(async () => /\d+ \/ \d+/.test(await inside(page)), { message: 'the gauges' });

  // The file has no pow_auto: its button stays hidden until it differs.
  assert.equal(await page.isVisible('#cap-pow-per-minute-reset'), false);
  await page.fill('#cap-pow-per-minute', '600');
  await page.fill('#cap-pow-bits', '14');
  await page.fill('#cap-pow-max-bits', '16');
  await page.click('#cap-save');
  await waitFor(async () => /Saved/.test(await page.textContent('#cap-save-status')), { message: 'proof of work saved' });
  assert.deepEqual((await state()).settings.pow, { perMinute: 600, bits: 14, maxBits: 16 });
  assert.equal(await page.textContent('#cap-pow-max-bits-file'), 'differs from the file: 0');
  // Fewer most bits than bits is refused, naming the field, and nothing changes.
  await page.fill('#cap-pow-max-bits', '12');
  await page.click('#cap-save');
  await waitFor(async () => /pow/.test(await page.textContent('#cap-save-status')), { message: 'the refusal of max bits below bits' });
  assert.equal((await state()).settings.pow.maxBits, 16);

  // Back to the file: active (changed by the test before), then the proof of work.
  const fileActive = (await state()).file.active;
  assert.notEqual((await state()).settings.active, fileActive);
  await page.click('#cap-active-reset');
  await waitFor(async () => (await page.textContent('#cap-active-file')) === 'as in the file', { message: 'active back to the file' });
  assert.equal((await state()).settings.active, fileActive);
  assert.equal(await page.isVisible('#cap-active-reset'), false);
  await page.click('#cap-pow-per-minute-reset');
  await waitFor(async () => (await page.textContent('#cap-pow-bits-file')) === 'as in the file', { message: 'proof of work back to the file' });
  assert.equal((await state()).settings.pow?.perMinute || 0, 0);
  assert.equal(await page.inputValue('#cap-pow-max-bits'), '0');
  assert.deepEqual((await state()).differs, ['paused']);
  assert.deepEqual(problems, []);
  await ctx.close();
});

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

test('the capacity room page passes axe-core', async () => {
  const { ctx, page } = await openConsole(browser, queue.base, { viewport: { width: 1280, height: 900 }, locale: 'en-GB', bypassCSP: true });
  await signedIn(page, queue.adminToken);
  const id = (await queue.api('GET', '/api/admin/queue/capacity')).body.rooms[0].id;
  await page.goto(`${queue.base}/admin/#/capacity/${id}`);
  await waitFor(async () => /\d+ \/ \d+/.test(await inside(page)), { message: 'the gauges' });
  await page.addScriptTag({ content: axeSource });
  const res = await page.evaluate(() => window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] }, resultTypes: ['violations'] }));
  const failures = res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  assert.deepEqual(failures, [], failures.join('\n'));
  await ctx.close();
});
