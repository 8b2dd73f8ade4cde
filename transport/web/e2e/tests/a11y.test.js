// Accessibility of every state of the waiting page, in a left-to-right and
// a right-to-left language: axe-core (WCAG 2.0, 2.1 and 2.2, A and AA) in
// Chromium finds no violation. The capacity proxy's built-in waiting and
// challenge pages are checked too. What axe cannot judge is in
// ../ACCESSIBILITY.md.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { freePort, repoRoot, slug, startProxy, waitFor } from '../lib/harness.js';
import { browser, queue, useQueue } from '../lib/suite.js';

const cleanup = useQueue();
const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const tags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

// axe runs axe-core on the page and answers its violations, one line each.
// refreshes marks a page that reloads itself with <meta http-equiv=refresh>
// on purpose (a page without JavaScript has no other way to follow the
// line): axe's meta-refresh rule is left out there, and the criteria it
// stands for (2.2.1, 2.2.4, 3.2.5) are judged by hand in ACCESSIBILITY.md.
async function axe(page, { refreshes = false } = {}) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ content: axeSource });
  const options = { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] };
  if (refreshes) options.rules = { 'meta-refresh': { enabled: false } };
  const res = await page.evaluate((o) => window.axe.run(document, o), options);
  return res.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function open(lang, url, prepare) {
  // bypassCSP: axe is injected as a script of its own, which the page's
  // policy would refuse.
  const ctx = await browser.newContext({ locale: lang === 'ar' ? 'ar-EG' : 'en-GB', bypassCSP: true });
  const page = await ctx.newPage();
  if (prepare) await prepare(page);
  const res = await page.goto(url);
  return { ctx, page, res };
}

const state = (page) => page.getAttribute('#aq-card', 'data-state');
const text = (page, sel) => page.textContent(sel).catch(() => '');
const never = () => new Promise(() => {});

// Each state: how to create its room, and how to know the page is in it.
const states = {
  joining: {
    room: {},
    prepare: (page) => page.route('**/join', never),
    ready: async (page) => (await state(page)) === 'joining' && (await page.getAttribute('#aq-card', 'data-script')) === 'started',
  },
  'proof of work': {
    room: { pow: { enabled: true, bits: 24, autoFactor: 4 } },
    ready: async (page) => (await state(page)) === 'verifying',
  },
  'pre-queue': {
    room: { opensAt: new Date(Date.now() + 3600e3).toISOString() },
    ready: async (page) => /\d/.test(await text(page, '#aq-number')) && !(await page.isHidden('#aq-opening')),
  },
  waiting: {
    room: { ratePerMinute: 1 },
    before: (s) => fill(s, 30),
    ready: async (page) => /\d/.test(await text(page, '#aq-ahead')),
  },
  'your turn': {
    room: { ratePerMinute: 1000 },
    prepare: (page) => page.route('**/token', never),
    ready: async (page) => (await state(page)) === 'admitted',
  },
  paused: {
    room: { active: false },
    ready: async (page) => !(await page.isHidden('#aq-banner')) && (await page.getAttribute('#aq-card', 'data-paused')) !== null,
  },
  'sold out': {
    room: { mode: 'soldOut', soldOutMessage: { en: 'All tickets are gone.', texts: { ar: 'نفدت جميع التذاكر.' }, linkUrl: 'https://shop.example.com/' } },
    ready: async (page) => (await page.getAttribute('#aq-card', 'data-mode')) === 'soldOut' && !(await page.isHidden('#aq-banner-link')),
  },
  maintenance: {
    room: { mode: 'maintenance', maintenanceMessage: { en: 'Back at six.' } },
    ready: async (page) => (await page.getAttribute('#aq-card', 'data-mode')) === 'maintenance',
  },
  reconnecting: {
    room: {},
    prepare: (page) => page.route('**/join', (route) => route.abort()),
    ready: async (page) => !(await page.isHidden('#aq-banner')),
  },
};

async function fill(s, n) {
  for (let i = 0; i < n; i++) await queue.join(s);
}

for (const lang of ['en', 'ar']) {
  test(`every state of the waiting page passes axe-core (${lang})`, async () => {
    const failures = [];
    // The draw: a pre-queue that opens in a few seconds, checked last.
    const drawn = slug('a11y');
    await queue.createRoom({ slug: drawn, name: 'Summer Nights 2026', ratePerMinute: 1, opensAt: new Date(Date.now() + 5000).toISOString() });
    await fill(drawn, 5);
    const drawPage = await open(lang, queue.roomURL(drawn, { lang }));
    for (const [name, st] of Object.entries(states)) {
      const s = slug('a11y');
      await queue.createRoom({ slug: s, name: 'Summer Nights 2026', message: 'Max. 4 tickets per order.', ...st.room });
      if (st.before) await st.before(s);
      const { ctx, page } = await open(lang, queue.roomURL(s, { lang }), st.prepare);
      await waitFor(() => st.ready(page), { timeout: 15000, message: `the ${name} state` });
      assert.equal(await page.getAttribute('html', 'dir'), lang === 'ar' ? 'rtl' : 'ltr');
      for (const v of await axe(page)) failures.push(`${name}: ${v}`);
      await ctx.close();
    }
    await waitFor(() => drawPage.page.isVisible('#aq-position-row'), { timeout: 30000, message: 'the position after the draw' });
    for (const v of await axe(drawPage.page)) failures.push(`draw: ${v}`);
    await drawPage.ctx.close();
    // The pages without a room: not found, too many codes, and the page
    // without JavaScript.
    const s = slug('a11y');
    await queue.createRoom({ slug: s, name: 'Summer Nights 2026', ratePerMinute: 1, targetUrl: 'https://shop.example.com/' });
    await fill(s, 5);
    const others = {
      'not found': `${queue.base}/queue/no-such-room?lang=${lang}`,
      'without JavaScript': `${queue.base}/queue/${s}/wait?lang=${lang}`,
    };
    for (const [name, url] of Object.entries(others)) {
      const { ctx, page } = await open(lang, url);
      for (const v of await axe(page)) failures.push(`${name}: ${v}`);
      await ctx.close();
    }
    {
      const { ctx, page } = await open(lang, `${queue.base}/queue/${s}/wait?lang=${lang}`);
      await page.click('button[type=submit]');
      await waitFor(async () => /\d/.test(await text(page, '#aq-number')), { message: 'a number without JavaScript' });
      assert.ok(await page.$('meta[http-equiv=refresh]'), 'the page without JavaScript does not refresh itself');
      for (const v of await axe(page, { refreshes: true })) failures.push(`waiting without JavaScript: ${v}`);
      await ctx.close();
    }
    {
      const ctx = await browser.newContext({ locale: lang === 'ar' ? 'ar' : 'en', bypassCSP: true });
      const page = await ctx.newPage();
      let res;
      for (let i = 0; i < 12 && (!res || res.status() !== 429); i++) res = await page.goto(`${queue.base}/queue/${s}/enter?code=WRONG-${i}&lang=${lang}`);
      assert.equal(res.status(), 429, 'the code attempts never ran out');
      for (const v of await axe(page)) failures.push(`too many codes: ${v}`);
      await ctx.close();
    }
    assert.deepEqual(failures, [], `axe-core violations in ${lang}:\n${failures.join('\n')}`);
  });
}

test('the capacity proxy\'s waiting and challenge pages pass axe-core', async () => {
  const port = await freePort();
  const shop = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Shop</title><main><h1 id="shop">Shop</h1></main></html>');
  });
  await new Promise((resolve) => shop.listen(port, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => shop.close(resolve)));
  const proxy = await startProxy(`
host "127.0.0.1" {
  location "/" {
    upstream "127.0.0.1:${port}" {}
    waiting_room {
      active         = 1
      on_store_error = "wait"
      refresh        = "30s"
    }
  }
}
`);
  cleanup.push(proxy.stop);
  const failures = [];
  const first = await (await browser.newContext()).newPage();
  await first.goto(`${proxy.base}/`);
  assert.equal(await first.textContent('#shop'), 'Shop');
  const { ctx, page, res } = await open('en', `${proxy.base}/`);
  assert.equal(res.status(), 503);
  for (const v of await axe(page, { refreshes: true })) failures.push(`proxy waiting page: ${v}`);
  // The challenge page as the proxy fills it (pow.go), held before it
  // solves: its worker is never started.
  const challenge = fs.readFileSync(path.join(repoRoot, 'transport/proxy/challenge.html'), 'utf8')
    .replace('{challenge}', 'c'.repeat(32)).replace('{bits}', '30').replace('{cookie}', 'aq_pow').replace('{secure}', '0')
    .replace('{worker}', 'self.onmessage = function () {};');
  await page.route(`${proxy.base}/challenge`, (route) => route.fulfill({ status: 503, contentType: 'text/html; charset=utf-8', body: challenge }));
  await page.goto(`${proxy.base}/challenge`);
  await waitFor(() => page.isVisible('#aq-pow-status'), { message: 'the challenge page' });
  for (const v of await axe(page)) failures.push(`proxy challenge page: ${v}`);
  await ctx.close();
  assert.deepEqual(failures, [], failures.join('\n'));
});

// What axe leaves to a person, measured where a browser can: the focus
// order and its visible outline, 200 % zoom without horizontal scrolling
// or clipped text, reduced motion and forced colours.
for (const lang of ['en', 'ar']) {
  test(`keyboard, 200 % zoom, reduced motion and forced colours (${lang})`, async () => {
    const s = slug('a11y');
    await queue.createRoom({ slug: s, name: 'Summer Nights Open Air 2026 – the long name of the night', ratePerMinute: 1,
      message: 'Max. 4 tickets per order. Eine sehr lange Zeile ohne Umbruch: Donaudampfschifffahrtsgesellschaftskapitän.',
      mode: 'soldOut', soldOutMessage: { en: 'All gone.', linkUrl: 'https://shop.example.com/returns' } });
    // 200 %: a 1280 px window at zoom 2 is a 640 px layout, drawn twice as large.
    const ctx = await browser.newContext({ locale: lang, viewport: { width: 640, height: 450 }, deviceScaleFactor: 2, reducedMotion: 'reduce', bypassCSP: true });
    const page = await ctx.newPage();
    await page.goto(queue.roomURL(s, { lang }));
    await waitFor(async () => !(await page.isHidden('#aq-banner-link')), { message: 'the sold-out banner' });
    const overflow = await page.evaluate(() => {
      const out = [];
      if (document.documentElement.scrollWidth > document.documentElement.clientWidth) out.push('the page scrolls sideways');
      for (const el of document.querySelectorAll('main *, footer *')) {
        if (el.offsetParent && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'hidden') out.push(`clipped: ${el.id || el.className || el.tagName}`);
      }
      return out;
    });
    assert.deepEqual(overflow, [], 'at 200 %');
    // The focus goes through the controls in reading order, each outlined.
    const order = [];
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Tab');
      const f = await page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const st = getComputedStyle(el);
        const all = [...document.querySelectorAll('a[href], button:not([hidden])')].filter((e) => e.offsetParent);
        return { name: el.textContent.trim(), index: all.indexOf(el), outline: st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) >= 2 };
      });
      if (!f) break;
      order.push(f);
    }
    assert.ok(order.length >= 12, `only ${order.length} controls reached: ${JSON.stringify(order)}`);
    order.forEach((f, i) => {
      assert.equal(f.index, i, `focus order: ${JSON.stringify(order)}`);
      assert.ok(f.outline, `no visible focus on ${f.name}`);
    });
    // Reduced motion: nothing moves.
    const moving = await page.evaluate(() => [...document.querySelectorAll('*')].flatMap((el) => ['', '::after', '::before'].map((p) => {
      const st = getComputedStyle(el, p || null);
      return st.animationName !== 'none' || (st.transitionDuration && st.transitionDuration.split(',').some((d) => parseFloat(d) > 0)) ? `${el.tagName}.${el.className}${p}` : null;
    })).filter(Boolean));
    assert.deepEqual(moving, [], 'moving under prefers-reduced-motion');
    // Forced colours: the bar and the dot keep a system colour.
    await page.emulateMedia({ forcedColors: 'active' });
    const dot = await page.evaluate(() => getComputedStyle(document.querySelector('.aq-dot')).forcedColorAdjust);
    assert.equal(dot, 'none', 'the live dot vanishes in forced colours');
    assert.deepEqual(await axe(page), [], 'axe-core in forced colours');
    await ctx.close();
  });
}
