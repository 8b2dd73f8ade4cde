// "Check the draw" in real Chromium: the seal while the pre-queue is open,
// the draw at the opening, the check of the visitor's own position in the
// browser with Web Crypto, and a failing check when the reveal is changed
// (key, beacon value, range) on its way to the page.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { artifactsDir, launchBrowser, slug, startQueue, waitFor } from '../lib/harness.js';

let queue;
let browser;

before(async () => {
  queue = await startQueue();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await queue?.stop();
});

const attr = (page, name) => page.getAttribute('#aq-draw', name);

async function runCheck(page) {
  await page.evaluate(() => document.getElementById('aq-draw').removeAttribute('data-verdict'));
  await page.click('#aq-draw-check');
  return waitFor(() => attr(page, 'data-verdict'), { timeout: 15000, message: 'the verdict' });
}

test('a visitor checks the draw in the browser; a changed reveal fails', async () => {
  const s = slug('drawn');
  // One admission a minute: nobody is admitted (and forwarded) during the test.
  const opensAt = new Date(Date.now() + 6000).toISOString();
  const { site } = await queue.createRoom({ slug: s, name: 'Drawn presale', ratePerMinute: 1, opensAt });
  for (let i = 0; i < 20; i++) await queue.join(s);
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  await page.goto(queue.roomURL(s));

  await waitFor(async () => (await attr(page, 'data-draw')) === 'sealed', { message: 'the seal' });
  const info = (await queue.api('GET', `/queue/${s}/info`)).body;
  const seal = await page.textContent('#aq-draw-seal');
  assert.ok(seal.includes('sealed') && seal.includes(info.draw.commitment.slice(0, 16)), `seal: ${seal}`);
  assert.equal(await page.getAttribute('#aq-draw-link', 'href'), `${queue.base}/queue/${s}/info`);

  // The console shows the same commitment.
  const admin = await ctx.newPage();
  await admin.goto(`${queue.base}/admin/`);
  await admin.fill('#token', queue.adminToken);
  await admin.click('#sign-in button[type=submit]');
  await admin.goto(`${queue.base}/admin/#/room/${site.id}/settings`);
  const line = await waitFor(() => admin.textContent('#room-draw:not([hidden])'), { message: 'the console\'s draw line' });
  assert.ok(line.includes(info.draw.commitment), `console: ${line}`);
  await admin.close();

  await waitFor(async () => (await attr(page, 'data-draw')) === 'drawn', { timeout: 30000, message: 'the draw' });
  assert.equal(await runCheck(page), 'ok', await page.textContent('#aq-draw-steps'));
  const ticket = await page.evaluate((k) => sessionStorage.getItem(k), `aditus-queue:${s}:ticket`);
  const status = (await queue.api('GET', `/queue/${s}/status?ticket=${encodeURIComponent(ticket)}`)).body;
  const verdict = await page.textContent('#aq-draw-verdict');
  assert.ok(verdict.includes(`position ${status.position} `), `verdict "${verdict}", status ${JSON.stringify(status)}`);
  const steps = await page.$$eval('#aq-draw-steps li', (lis) => lis.map((li) => li.textContent));
  for (const name of ['commitment', 'published', 'key', 'seed', 'range', 'number', 'position']) {
    assert.ok(steps.some((l) => l.startsWith(`✓ ${name}:`)), `no passing ${name} step in ${steps.join('\n')}`);
  }
  await page.screenshot({ path: path.join(artifactsDir, 'draw-checked.png'), fullPage: true });

  const reveal = (await queue.api('GET', `/queue/${s}/draw`)).body;
  const flip = (h) => (h[0] === '0' ? '1' : '0') + h.slice(1);
  const tampered = {
    key: (r) => ({ ...r, key: flip(r.key) }),
    beacon: (r) => ({ ...r, beacon: { round: 1, randomness: flip(r.seed), signature: 'ab' } }),
    range: (r) => ({ ...r, to: r.to + 1, size: r.size + 1 }),
  };
  for (const [name, change] of Object.entries(tampered)) {
    await page.route(`**/queue/${s}/draw`, (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(change(reveal)) }),
    );
    assert.equal(await runCheck(page), 'failed', `a reveal with a changed ${name} passed`);
    assert.ok((await page.textContent('#aq-draw-steps')).includes('✗'), `no failing step for a changed ${name}`);
    await page.unroute(`**/queue/${s}/draw`);
  }
  assert.equal(await runCheck(page), 'ok', 'the genuine reveal after the changed ones');
  await ctx.close();
});
