// The operator console (/admin/) in headless Chromium against the real
// server: sign-in, creating a room through the form (with a 422 shown next
// to its field), the live dashboard under joins, pause, the rate, keys
// shown once, a key's narrow session, and reconnecting after a restart.
// Screenshots of the console and of the dashboard under load go to
// artifacts/.

import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { desktop, openConsole, signIn, signedIn } from '../lib/console.js';
import { ensureArtifacts, sleep, slug, startQueue, waitFor } from '../lib/harness.js';
import { browser, queue, useQueue } from '../lib/suite.js';

useQueue();
const dir = ensureArtifacts();

const open = (opts = desktop) => openConsole(browser, queue.base, opts);

async function shot(page, name) {
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

// joins answers the status of n joins made over HTTP.
async function joins(s, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${queue.base}/queue/${s}/join`, { method: 'POST', signal: AbortSignal.timeout(10000) });
    out.push(r.status);
  }
  return out;
}

// hasLiveSocket reports whether this server serves the live socket (a
// plain GET without the upgrade is refused by the socket, not 404).
async function hasLiveSocket(id) {
  const r = await queue.api('GET', `/api/admin/queue/sites/${id}/live`);
  return r.status !== 404 && r.status !== 405;
}

const gaugeNumber = async (page, key) => Number(((await page.textContent(`[data-gauge="${key}"]`)) || '').replace(/[^\d]/g, '') || 'NaN');

test('the operator signs in, creates a room, watches it fill, changes the rate and pauses it', async () => {
  const { ctx, page, problems } = await open();
  // a wrong token is refused and nothing is kept
  await signIn(page, 'not-the-token');
  await page.waitForSelector('#sign-in-error:not(:empty)');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('aq.token')), null);

  await signedIn(page, queue.adminToken);
  assert.ok(await page.isVisible('#instances'), 'the operator sees the instances panel');
  // this node reports itself within a few seconds, with its roles
  await page.waitForSelector('#instances tr[data-instance] >> text=front, actor', { timeout: 15000 });
  // and with the release and the event features it announces
  const row = await page.$eval('#instances tr[data-instance]', (tr) => [tr.children[2].textContent, tr.children[3].textContent]);
  assert.match(row[0], /^\d+\.\d+\.\d+/, 'the version is shown');
  assert.equal(row[1], 'events, modes, restore', 'the announced features are shown');
  assert.ok(!page.url().includes(queue.adminToken), 'the token is never in the URL');

  // create through the form; an invalid colour is named next to its field
  const s = slug('console');
  await page.click('#new-room');
  await page.fill('#f-slug', s);
  await page.fill('#f-name', 'Summer Nights Open Air');
  await page.fill('#f-targetUrl', 'https://shop.example.com/tickets');
  await page.fill('#f-domains', 'shop.example.com');
  await page.fill('#f-ratePerMinute', '1');
  await page.fill('#f-accentColor', 'blue');
  await page.click('.site-form button[type=submit]');
  await page.waitForSelector('[data-error-for="accentColor"]:not(:empty)');
  assert.ok(await page.$eval('#f-accentColor', (el) => el.classList.contains('invalid')));
  await page.fill('#f-accentColor', '#d9480f');
  await page.click('.site-form button[type=submit]');

  // the secret is shown once, on the integration tab with the room's URLs
  await page.waitForSelector('.once [data-once]');
  const secret = await page.textContent('.once [data-once]');
  assert.ok(secret.length >= 32, `secret shown: ${secret}`);
  const gateway = await page.textContent('[data-snippet="gateway"]');
  assert.equal(gateway, `${queue.base}/queue/${s}/enter`);
  const nginx = await page.textContent('[data-snippet="nginx"]');
  assert.ok(nginx.includes(`const SLUG = '${s}'`) && nginx.includes(`${queue.base}/queue/`), 'nginx snippet filled in');
  assert.ok((await page.textContent('[data-snippet="script"]')).includes(`${queue.base}/queue/${s}/embed.js`));
  await shot(page, 'console-integration');
  await page.click('.once button:has-text("I have copied it")');
  assert.ok(!(await page.textContent('body')).includes(secret), 'the secret is gone once dismissed');

  // the live dashboard: joins arrive and the waiting gauge rises
  await page.click('[data-tab="live"]');
  await page.waitForSelector('[data-gauge="gWaiting"]');
  const sites = await queue.api('GET', '/api/admin/queue/sites');
  const room = sites.body.sites.find((x) => x.slug === s);
  assert.ok(room);
  const statuses = await joins(s, 25);
  assert.ok(statuses.every((c) => c === 200), `joins: ${statuses}`);
  await waitFor(async () => (await gaugeNumber(page, 'gWaiting')) >= 20, { timeout: 15000, message: 'waiting gauge ≥ 20' });
  await page.waitForSelector('#room-state[data-state="queueing"]', { timeout: 10000 });
  await joins(s, 15);
  await waitFor(async () => (await gaugeNumber(page, 'gWaiting')) >= 35, { timeout: 15000, message: 'waiting gauge ≥ 35' });
  await sleep(2500);
  await shot(page, 'console-dashboard-load');
  // the README's picture: the visible part only, one device pixel per pixel
  await page.screenshot({ path: path.join(dir, 'console-readme.png'), clip: { x: 0, y: 0, width: 1280, height: 760 } });

  // change the rate at once
  await page.fill('#rate-now', '30');
  await page.click('#set-rate');
  await page.waitForSelector('#room-msg:has-text("30")');
  assert.equal((await queue.api('GET', `/api/admin/queue/sites/${room.id}`)).body.ratePerMinute, 30);

  // pause: joins answer 423; resume: they work again
  await page.click('#pause-toggle');
  await page.waitForSelector('#room-state[data-state="paused"]');
  assert.deepEqual(await joins(s, 1), [423]);
  await page.click('#pause-toggle');
  await waitFor(async () => (await joins(s, 1))[0] === 200, { message: 'joins after resume' });

  // the rooms list shows the room's state and waiting count
  await page.click('.back');
  await page.waitForSelector(`tr[data-room="${s}"] .pill[data-state="queueing"]`, { timeout: 10000 });
  await shot(page, 'console-rooms');
  assert.deepEqual(problems, []);
  await ctx.close();
});

test('a key is shown once and its session sees only its room', async () => {
  const a = await queue.createRoom({ slug: slug('keyroom'), name: 'Key room', targetUrl: 'https://shop.example.com/' });
  const b = await queue.createRoom({ slug: slug('other'), name: 'Other room', targetUrl: 'https://shop.example.com/' });
  const { ctx, page, problems } = await open();
  await signedIn(page, queue.adminToken);
  await page.goto(`${queue.base}/admin/#/room/${a.site.id}/access`);
  await page.fill('#key-name', 'ci');
  await page.click('#key-name ~ button[type=submit]');
  await page.waitForSelector('.once [data-once]');
  const key = await page.textContent('.once [data-once]');
  assert.match(key, /^qak_/);
  await page.waitForSelector('tr[data-key] >> text=ci');
  // shown once: a fresh look at the tab no longer has it
  await page.reload();
  await page.waitForSelector('tr[data-key]');
  assert.ok(!(await page.content()).includes(key), 'the key is not shown again');
  const list = await queue.api('GET', `/api/admin/queue/sites/${a.site.id}/keys`);
  assert.ok(list.body.keys.every((k) => !k.key), 'the API does not answer the key again');

  // a bypass code with its enter?code= link
  await page.fill('#code-label', 'press');
  await page.click('#code-expires ~ button[type=submit]');
  await page.waitForSelector('.once [data-once]');
  const code = await page.textContent('.once [data-once]');
  assert.ok((await page.textContent('.once')).includes(`/queue/${a.site.slug}/enter?code=${encodeURIComponent(code)}`));
  await page.click('tr[data-code] button:has-text("Disable")');
  await page.waitForSelector('tr[data-code].muted');
  await shot(page, 'console-access');
  await ctx.close();

  // the key's own session: only its room, no global sections
  const k = await open();
  await signIn(k.page, key);
  await k.page.waitForSelector('[data-gauge="gWaiting"]');
  assert.ok(k.page.url().includes(a.site.id), 'a key lands on its room');
  if (await hasLiveSocket(a.site.id)) await k.page.waitForSelector('.conn[data-conn="live"]', { timeout: 15000 });
  const tabs = await k.page.$$eval('.tabs a', (els) => els.map((e) => e.dataset.tab));
  // A key may change its room's events and preview them, as its settings.
  assert.deepEqual(tabs, ['live', 'settings', 'events', 'integration']);
  assert.equal(await k.page.$('#instances'), null, 'no instances for a key');
  assert.equal(await k.page.$('#new-room'), null);
  assert.equal(await k.page.$('.room-title .back'), null, 'no way to a list of rooms');
  await k.page.goto(`${queue.base}/admin/#/room/${b.site.id}/live`);
  await k.page.waitForSelector('text=No such waiting room.');
  await k.page.goto(`${queue.base}/admin/#/room/${a.site.id}/settings`);
  await k.page.waitForSelector('#f-name');
  assert.equal(await k.page.$('#delete-room'), null, 'a key cannot delete its room');
  // a key changes its room's configuration; the server names a bad field
  await k.page.fill('#f-pow-bits', '99');
  await k.page.click('.site-form button[type=submit]');
  await k.page.waitForSelector('[data-error-for="pow.bits"]:not(:empty)');
  await shot(k.page, 'console-key-settings');
  // a health URL into our own network is refused, next to its field
  await k.page.fill('#f-pow-bits', '15');
  await k.page.fill('#f-autoRate-healthUrl', 'http://127.0.0.1:9/health');
  await k.page.click('.site-form button[type=submit]');
  await k.page.waitForSelector('[data-error-for="autoRate.healthUrl"]:not(:empty)');
  assert.equal(await k.page.textContent('[data-error-for="pow.bits"]'), '', 'the earlier error is cleared');
  // a valid change is saved
  await k.page.fill('#f-autoRate-healthUrl', '');
  await k.page.fill('#f-name', 'Key room, renamed');
  await k.page.click('.site-form button[type=submit]');
  await k.page.waitForSelector('.site-form .form-status:has-text("Saved.")');
  assert.equal((await queue.api('GET', `/api/admin/queue/sites/${a.site.id}`)).body.name, 'Key room, renamed');
  assert.deepEqual([...problems, ...k.problems], []);
  await k.ctx.close();
});

test('the console speaks German when the browser prefers it, also on a phone', async () => {
  const { ctx, page } = await open({ ...desktop, locale: 'de-DE' });
  assert.equal(await page.textContent('#sign-in h1'), 'Anmelden');
  await page.click('#lang-switch');
  assert.equal(await page.textContent('#sign-in h1'), 'Sign in');
  await ctx.close();

  const r = await queue.createRoom({ slug: slug('telefon'), name: 'Vorverkauf Sommer', targetUrl: 'https://shop.example.com/', ratePerMinute: 1 });
  await joins(r.site.slug, 8);
  const phone = await open({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'de-DE' });
  await signIn(phone.page, queue.adminToken);
  await phone.page.waitForSelector(`tr[data-room="${r.site.slug}"]`);
  assert.equal(await phone.page.textContent('.section-head h1'), 'Warteräume');
  await shot(phone.page, 'console-de-phone-rooms');
  await phone.page.goto(`${queue.base}/admin/#/room/${r.site.id}/live`);
  await waitFor(async () => (await gaugeNumber(phone.page, 'gWaiting')) >= 5, { message: 'waiting gauge on a phone' });
  const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the phone`);
  await sleep(4500);
  await shot(phone.page, 'console-de-phone-live');
  await phone.ctx.close();
});

test('the dashboard reconnects by itself after the server restarts', async (t) => {
  const r = await queue.createRoom({ slug: slug('restart'), name: 'Restart room', targetUrl: 'https://shop.example.com/', ratePerMinute: 1 });
  if (!(await hasLiveSocket(r.site.id))) {
    t.skip('this server has no live socket (GET /api/admin/queue/sites/<id>/live)');
    return;
  }
  const { ctx, page } = await open();
  await signedIn(page, queue.adminToken);
  await page.goto(`${queue.base}/admin/#/room/${r.site.id}/live`);
  await page.waitForSelector('.conn[data-conn="live"]', { timeout: 15000 });
  // the dashboard may be back before restart() returns: watch from before
  const down = page.waitForSelector('.conn:not([data-conn="live"])', { timeout: 60000 });
  await queue.restart();
  await down;
  await page.waitForSelector('.conn[data-conn="live"]', { timeout: 30000 });
  await joins(r.site.slug, 5);
  await waitFor(async () => (await gaugeNumber(page, 'gWaiting')) >= 3, { timeout: 15000, message: 'figures after the restart' });
  await ctx.close();
});

test('the self-regulating rate: the health test button, the ceiling and the adjustments with their rule', async () => {
  // a shop health endpoint on loopback, which this server is allowed to call
  const health = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ metrics: { cpuLoad: 0.2 } }));
  });
  await new Promise((resolve) => health.listen(0, '127.0.0.1', resolve));
  const healthUrl = `http://127.0.0.1:${health.address().port}/health`;
  process.env.AQ_ALLOW_PRIVATE_HEALTH_URLS = '1';
  let q;
  try {
    q = await startQueue();
  } finally {
    delete process.env.AQ_ALLOW_PRIVATE_HEALTH_URLS;
  }
  const ctx = await browser.newContext(desktop);
  try {
    const autoRate = { enabled: false, healthUrl, minRate: 30, maxRate: 600, intervalSeconds: 5, rules: [{ metric: 'responseMs', op: '<', value: 2000 }] };
    const { site } = await q.createRoom({ slug: slug('auto'), name: 'Regulated room', targetUrl: 'https://shop.example.com/', ratePerMinute: 60, autoRate });
    const page = await ctx.newPage();
    page.on('dialog', (d) => d.accept());
    await page.goto(`${q.base}/admin/`);
    await signedIn(page, q.adminToken);
    // the test call from the settings, as the server requires before enabling
    await page.goto(`${q.base}/admin/#/room/${site.id}/settings`);
    await page.click('.health-test button');
    await page.waitForSelector('.health-result p.ok');
    assert.ok((await page.textContent('.health-result')).includes('responseMs'));
    await page.check('#f-autoRate-enabled');
    await page.click('.site-form button[type=submit]');
    await page.waitForSelector('.site-form .form-status:has-text("Saved.")');
    // the dashboard: the ceiling and the first raise with its rule
    await page.click('[data-tab="live"]');
    await page.waitForSelector('.gauge >> text=ceiling 600/min', { timeout: 15000 });
    await page.waitForSelector('table.adjustments td.mono >> text=responseMs', { timeout: 30000 });
    // live figures replace whatever the fallback showed before the socket
    await waitFor(async () => !(await page.textContent('[data-gauge="gInflow"]')).includes('—'), { message: 'inflow from the socket' });
    const row = await page.textContent('table.adjustments tbody tr');
    assert.match(row, /60 → 6\d/, `adjustment row: ${row}`);
    await shot(page, 'console-autorate');
  } finally {
    await ctx.close();
    await q?.stop();
    health.close();
  }
});
