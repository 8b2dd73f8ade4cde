// The waiting page for everyone, in Chromium: each of its eleven languages
// (one screenshot each in artifacts/), the right-to-left layout, the live
// regions' announcements, the way through without JavaScript, and the
// weight of a first visit with the round trips before the number shows.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { openConsole, signedIn } from '../lib/console.js';
import { ensureArtifacts, repoRoot, slug, waitFor } from '../lib/harness.js';
import { browser, queue, shop, useQueue } from '../lib/suite.js';

useQueue({ withShop: true });

const languages = ['de', 'en', 'es', 'fr', 'it', 'nl', 'pl', 'pt', 'tr', 'ar', 'ja'];
const catalogue = (lang) => JSON.parse(fs.readFileSync(path.join(repoRoot, 'transport/web/i18n', `${lang}.json`), 'utf8'));
const phone = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true };

// BUDGET_BYTES is the most a first visit may cost, compressed: the HTML,
// scripts and styles (the page loads no fonts).
const BUDGET_BYTES = 30 * 1024;

async function waitingRoom(fields = {}) {
  const s = slug('page');
  const room = await queue.createRoom({ slug: s, name: 'Summer Nights 2026', targetUrl: shop.url('/'), ratePerMinute: 1,
    message: 'Max. 4 tickets per order.', ...fields });
  for (let i = 0; i < 20; i++) await queue.join(s);
  return { s, ...room };
}

test('each language renders its catalogue, Arabic right to left; one screenshot each', async (t) => {
  const { s } = await waitingRoom();
  const dir = ensureArtifacts();
  for (const lang of languages) {
    const ctx = await browser.newContext({ ...phone, locale: lang });
    const page = await ctx.newPage();
    const res = await page.goto(queue.roomURL(s));
    assert.equal(res.headers()['content-language'], lang, `Accept-Language ${lang}`);
    await waitFor(async () => /\S/.test((await page.textContent('#aq-ahead')).replace('–', '')), { message: `the figures in ${lang}` });
    const words = catalogue(lang);
    assert.equal(await page.getAttribute('html', 'lang'), lang);
    assert.equal(await page.textContent('#aq-number-label'), words.yourNumber);
    assert.equal(await page.textContent('#aq-state'), words.waiting);
    // The wait in words is Intl's: "about {n}" around a formatted duration.
    const wait = await page.textContent('#aq-wait');
    assert.ok(wait.startsWith(words.waitMinutes.split('{n}')[0]) || wait.startsWith(words.waitHours.split('{h}')[0]), `${lang} wait: ${wait}`);
    const rtl = await page.evaluate(() => getComputedStyle(document.body).direction);
    assert.equal(rtl, lang === 'ar' ? 'rtl' : 'ltr', `${lang} direction`);
    if (lang === 'ar') {
      // Right to left: the switch starts at the right, the label sits at
      // the right edge of the card.
      const first = await page.locator('.aq-langs li').first().boundingBox();
      const last = await page.locator('.aq-langs li').last().boundingBox();
      assert.ok(first.x > last.x || first.y < last.y, 'the language switch does not run right to left');
      const label = await page.locator('.aq-stats dt').first().boundingBox();
      const card = await page.locator('#aq-card').boundingBox();
      assert.ok(label.x + label.width > card.x + card.width / 2, 'the first figure is not on the right');
    }
    await page.screenshot({ path: path.join(dir, `page-${lang}-phone.png`), fullPage: true });
    await ctx.close();
  }
  t.diagnostic(`written: ${languages.map((l) => `page-${l}-phone.png`).join(', ')}`);
});

test('the switch changes the language and the choice is kept', async () => {
  const { s } = await waitingRoom();
  const ctx = await browser.newContext({ locale: 'de-DE' });
  const page = await ctx.newPage();
  await page.goto(queue.roomURL(s));
  await waitFor(async () => /\d/.test(await page.textContent('#aq-number')), { message: 'a number' });
  const number = await page.textContent('#aq-number');
  await page.click('.aq-langs a[lang=ja]');
  await waitFor(async () => (await page.getAttribute('html', 'lang')) === 'ja', { message: 'the page in Japanese' });
  await waitFor(async () => (await page.textContent('#aq-number')) === number, { message: 'the same number after the switch' });
  await page.goto(queue.roomURL(s));
  assert.equal(await page.getAttribute('html', 'lang'), 'ja', 'the choice is not kept');
  await ctx.close();
});

test('the operator sets the page\'s language and per-language messages in the console; the visitor reads them', async () => {
  const { s, site } = await waitingRoom();
  const { ctx, page, problems } = await openConsole(browser, queue.base);
  await signedIn(page, queue.adminToken);
  await page.goto(`${queue.base}/admin/#/room/${site.id}/settings`);
  await page.waitForSelector('#f-language');
  assert.equal(await page.inputValue('#f-language'), '', 'a new room follows the browser');
  await page.selectOption('#f-language', 'es');
  await page.click('#f-messages + button');
  await page.selectOption('#f-messages .text-row:last-child .text-lang', 'es');
  await page.fill('#f-messages .text-row:last-child .text-value', 'Máx. 4 entradas por pedido.');
  await page.click('#f-soldOutMessage-texts + button');
  await page.selectOption('#f-soldOutMessage-texts .text-row:last-child .text-lang', 'es');
  await page.fill('#f-soldOutMessage-texts .text-row:last-child .text-value', 'Todo vendido.');
  await page.click('.site-form button[type=submit]');
  await page.waitForSelector('.site-form .form-status:has-text("Saved.")');
  const got = (await queue.api('GET', `/api/admin/queue/sites/${site.id}`)).body;
  assert.equal(got.language, 'es');
  assert.deepEqual(got.messages, { es: 'Máx. 4 entradas por pedido.' });
  assert.deepEqual(got.soldOutMessage.texts, { es: 'Todo vendido.' });
  assert.deepEqual(problems, []);
  await ctx.close();
  // A German browser reads the room in Spanish, the room's language.
  const visitor = await (await browser.newContext({ locale: 'de-DE' })).newPage();
  await visitor.goto(queue.roomURL(s));
  assert.equal(await visitor.getAttribute('html', 'lang'), 'es');
  assert.equal(await visitor.textContent('#aq-message'), 'Máx. 4 entradas por pedido.');
  await visitor.context().close();
});

test('the opening date is Intl\'s in the page\'s language', async () => {
  const s = slug('opens');
  const opensAt = new Date(Date.now() + 3 * 24 * 3600e3);
  await queue.createRoom({ slug: s, name: 'Later', targetUrl: shop.url('/'), ratePerMinute: 1, opensAt: opensAt.toISOString() });
  for (const lang of ['ja', 'ar', 'pl']) {
    const ctx = await browser.newContext({ locale: lang });
    const page = await ctx.newPage();
    await page.goto(queue.roomURL(s));
    await waitFor(async () => /\S/.test(await page.textContent('#aq-opens-on')), { message: `the opening date in ${lang}` });
    const want = await page.evaluate(([l, at, line]) => line.replace('{time}', new Intl.DateTimeFormat(l, { dateStyle: 'full', timeStyle: 'short' }).format(new Date(at))),
      [lang, opensAt.getTime(), catalogue(lang).opensOn]);
    assert.equal(await page.textContent('#aq-opens-on'), want);
    const days = await page.evaluate(([l]) => [2, 3].map((n) => new Intl.NumberFormat(l, { style: 'unit', unit: 'day', unitDisplay: 'long' }).format(n)), [lang]);
    const countdown = await page.textContent('#aq-countdown');
    assert.ok(days.some((d) => countdown.startsWith(d + ' ')), `the countdown in ${lang}: ${await page.textContent('#aq-countdown')}`);
    await ctx.close();
  }
});

test('the position is announced politely, the turn assertively and once', async () => {
  // Admission every 2 s: the figures move while the visitor waits.
  const s = slug('live');
  await queue.createRoom({ slug: s, name: 'Live regions', targetUrl: shop.url('/'), ratePerMinute: 30, burstSeconds: 1 });
  for (let i = 0; i < 6; i++) await queue.join(s);
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  await page.route('**/token', () => {}); // hold the turn on the page
  await page.goto(queue.roomURL(s));
  assert.equal(await page.getAttribute('#aq-announce', 'aria-live'), 'polite');
  assert.equal(await page.getAttribute('#aq-announce-turn', 'aria-live'), 'assertive');
  await page.evaluate(() => {
    window.heard = [];
    window.figures = new Set();
    for (const id of ['aq-announce', 'aq-announce-turn', 'aq-ahead']) {
      new MutationObserver(() => window.heard.push({ id, at: Date.now(), text: document.getElementById(id).textContent }))
        .observe(document.getElementById(id), { childList: true, characterData: true, subtree: true });
    }
  });
  await waitFor(async () => (await page.getAttribute('#aq-card', 'data-state')) === 'admitted', { timeout: 30000, message: 'the turn' });
  await page.waitForTimeout(500);
  const heard = await page.evaluate(() => window.heard);
  const said = (id) => heard.filter((h) => h.id === id && h.text);
  assert.ok(new Set(said('aq-ahead').map((h) => h.text)).size >= 3, `the figures hardly moved: ${JSON.stringify(heard)}`);
  assert.ok(said('aq-announce').length <= 1, `the position announced more than once a minute: ${JSON.stringify(said('aq-announce'))}`);
  assert.deepEqual(said('aq-announce-turn').map((h) => h.text), ['It’s your turn!']);
  await ctx.close();
});

test('without JavaScript a visitor draws a number, waits on a page that refreshes itself, and is forwarded with a token', async () => {
  const s = slug('nojs');
  await queue.createRoom({ slug: s, name: 'No script', targetUrl: shop.url('/'), ratePerMinute: 20, burstSeconds: 1 });
  for (let i = 0; i < 2; i++) await queue.join(s); // ahead of the visitor
  const ctx = await browser.newContext({ javaScriptEnabled: false, locale: 'fr-FR' });
  const page = await ctx.newPage();
  await page.goto(queue.roomURL(s));
  assert.ok(await page.isVisible('form.aq-nojs'), 'the page offers no way on without JavaScript');
  await page.click('form.aq-nojs button');
  await waitFor(async () => /\d/.test(await page.textContent('#aq-number').catch(() => '')), { message: 'the number' });
  assert.equal(await page.getAttribute('html', 'lang'), 'fr');
  assert.match(await page.getAttribute('meta[http-equiv=refresh]', 'content'), /^\d+$/);
  const shown = Number(await page.textContent('#aq-number'));
  assert.ok(shown >= 3, `number ${shown}, behind the two before`);
  await page.waitForURL((u) => u.searchParams.has('aditus_queue_token'), { timeout: 30000 });
  const token = new URL(page.url()).searchParams.get('aditus_queue_token');
  const v = await queue.api('GET', `/queue/${s}/verify?token=${encodeURIComponent(token)}`);
  assert.equal(v.status, 200);
  assert.equal(v.body.number, shown, 'the token is for another number');
  await ctx.close();
});

// firstVisit loads url in a fresh browser with latency ms added to every
// request, on a connection already open (connection set-up is not counted
// as a round trip: over HTTP/1.1 a page opens several anyway), and answers the compressed bytes of every response (gzip, as a
// server or CDN in front would send them) and the milliseconds until the
// number shows.
async function firstVisit(url, latency) {
  const ctx = await browser.newContext({ locale: 'en-GB' });
  const page = await ctx.newPage();
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency, downloadThroughput: -1, uploadThroughput: -1 });
  await page.goto(`${queue.base}/queue/healthz`);
  // Every text the number shows, from the first: once there, it stays.
  await page.addInitScript(() => {
    window.numbers = [];
    const note = (el) => el.textContent && window.numbers.push(el.textContent);
    new MutationObserver((_, seen) => {
      const el = document.getElementById('aq-number');
      if (!el) return;
      seen.disconnect();
      note(el);
      new MutationObserver(() => note(el)).observe(el, { childList: true, characterData: true, subtree: true });
    }).observe(document, { childList: true, subtree: true });
  });
  const bodies = [];
  page.on('response', (res) => {
    bodies.push(res.body().then((b) => ({ url: res.url(), raw: b.length, gz: b.length ? zlib.gzipSync(b, { level: 6 }).length : 0 }), () => null));
  });
  const started = Date.now();
  await page.goto(url, { waitUntil: 'commit' });
  await waitFor(async () => /\d/.test(await page.textContent('#aq-number').catch(() => '')), { timeout: 20000, interval: 10, message: 'the number' });
  const ms = Date.now() - started;
  await page.waitForLoadState('load');
  await waitFor(async () => (await page.getAttribute('#aq-card', 'data-state')) === 'waiting' && (await page.evaluate(() => window.numbers.length)) > 0, { message: 'the page under way' });
  const numbers = await page.evaluate(() => window.numbers);
  const first = numbers.findIndex((n) => /\d/.test(n));
  assert.ok(first >= 0 && numbers.slice(first).every((n) => /\d/.test(n)), `the number went away again: ${JSON.stringify(numbers)}`);
  const files = (await Promise.all(bodies)).filter(Boolean);
  await ctx.close();
  return { files, ms, bytes: files.reduce((n, f) => n + f.gz, 0) };
}

test('a first visit costs at most 30 KB compressed and two round trips before the number shows', async (t) => {
  const s = slug('light');
  await queue.createRoom({ slug: s, name: 'Light', targetUrl: shop.url('/'), ratePerMinute: 1 });
  for (let i = 0; i < 10; i++) await queue.join(s); // the room is full: the gateway link queues
  const latency = 400;
  // Through the gateway link, as a shop sends its visitors.
  const enter = await firstVisit(`${queue.base}/queue/${s}/enter`, latency);
  const direct = await firstVisit(queue.roomURL(s), latency);
  const report = (name, v) => `${name}: ${v.bytes} bytes compressed in ${v.files.length} responses, number after ${v.ms} ms = ${(v.ms / latency).toFixed(2)} round trips of ${latency} ms\n` +
    v.files.map((f) => `  ${f.gz}\t${f.raw}\t${f.url.replace(queue.base, '')}`).join('\n');
  t.diagnostic(report('gateway link', enter));
  t.diagnostic(report('page', direct));
  fs.writeFileSync(path.join(ensureArtifacts(), 'page-weight.txt'), `${report('gateway link', enter)}\n${report('page', direct)}\n`);
  for (const v of [enter, direct]) assert.ok(v.bytes <= BUDGET_BYTES, `a first visit costs ${v.bytes} bytes, over ${BUDGET_BYTES}`);
  assert.ok(enter.ms < 3 * latency, `the number shows after ${(enter.ms / latency).toFixed(2)} round trips through the gateway link`);
  // Every asset is versioned and cached for a year.
  const assets = direct.files.filter((x) => x.url.includes('/queue/assets/'));
  assert.ok(assets.length >= 5, `${assets.length} assets`);
  for (const f of assets) {
    assert.match(f.url, /\/[\w-]+\.[0-9a-f]{16}\.(js|css)$/, 'the version is not in the name');
    const res = await fetch(f.url);
    assert.match(res.headers.get('cache-control'), /max-age=31536000, immutable/, f.url);
  }
});
