// Screenshots of the waiting room in German and English, on a desktop and a
// phone, written to artifacts/ for a person to look at.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ensureArtifacts, launchBrowser, sleep, slug, startQueue, waitFor } from '../lib/harness.js';
import { startShop } from '../lib/shop.js';

let queue;
let browser;
let shop;
let dir;

const message = 'Presale for the 2026 edition. Max. 4 tickets per order.\nVorverkauf für 2026. Max. 4 Tickets pro Bestellung.';
const viewports = {
  desktop: { viewport: { width: 1280, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
};

before(async () => {
  queue = await startQueue();
  browser = await launchBrowser();
  shop = await startShop({ queueBase: queue.base, slug: 'none' });
  dir = ensureArtifacts();
});

after(async () => {
  await browser?.close();
  await shop?.stop();
  await queue?.stop();
});

async function room(fields) {
  const s = slug('shot');
  const r = await queue.createRoom({
    slug: s,
    name: 'Summer Nights Open Air 2026',
    targetUrl: shop.url('/'),
    ratePerMinute: 2,
    message,
    headerImageUrl: shop.url('/keyvisual.svg'),
    accentColor: '#d9480f',
    ...fields,
  });
  return { s, ...r };
}

async function shoot(name, url, { locale, device, ready }) {
  const ctx = await browser.newContext({ locale, ...viewports[device] });
  const page = await ctx.newPage();
  const res = await page.goto(url);
  await ready(page, res);
  await sleep(1200); // let the progress bar settle
  const file = path.join(dir, `${name}-${device}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await ctx.close();
  return file;
}

const waiting = async (page) => {
  await waitFor(async () => /\d/.test(await page.textContent('#aq-ahead')), { message: 'the numbers' });
  await waitFor(() => page.evaluate(() => document.querySelector('.aq-hero')?.complete ?? true), { message: 'the header image' });
};

test('screenshots of the waiting room (de, en; desktop, phone)', async (t) => {
  const { s } = await room({});
  for (let i = 0; i < 60; i++) if (!(await queue.join(s)).admitted) break;
  for (let i = 0; i < 40; i++) await queue.join(s);
  const files = [];
  for (const [lang, locale] of [
    ['en', 'en-GB'],
    ['de', 'de-DE'],
  ]) {
    for (const device of Object.keys(viewports)) {
      files.push(await shoot(`room-${lang}`, queue.roomURL(s), { locale, device, ready: waiting }));
    }
  }
  t.diagnostic(`written: ${files.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
});

test('screenshots of the other states (opening countdown, paused, not found)', async (t) => {
  const files = [];
  const pre = await room({ opensAt: new Date(Date.now() + 3 * 3600e3 + 25 * 60e3).toISOString(), accentColor: '#0a63c9' });
  files.push(
    await shoot('opening-en', queue.roomURL(pre.s), {
      locale: 'en-GB',
      device: 'desktop',
      ready: (page) => waitFor(() => page.isVisible('#aq-opening'), { message: 'the countdown' }),
    }),
  );
  files.push(
    await shoot('opening-de', queue.roomURL(pre.s), {
      locale: 'de-DE',
      device: 'phone',
      ready: (page) => waitFor(() => page.isVisible('#aq-opening'), { message: 'the countdown' }),
    }),
  );

  const paused = await room({ headerImageUrl: '', message: '', accentColor: '#2b8a3e' });
  for (let i = 0; i < 60; i++) if (!(await queue.join(paused.s)).admitted) break;
  for (let i = 0; i < 12; i++) await queue.join(paused.s);
  files.push(
    await shoot('paused-de', queue.roomURL(paused.s), {
      locale: 'de-DE',
      device: 'phone',
      ready: async (page) => {
        await waiting(page);
        paused.site = await queue.updateRoom(paused.site, { active: false });
        // Pushed at once over the socket; by polling it can take a poll interval.
        await waitFor(async () => (await page.textContent('#aq-state')) === 'Der Einlass ist pausiert', { timeout: 30000, message: 'the paused state' });
      },
    }),
  );
  files.push(
    await shoot('paused-join-en', queue.roomURL(paused.s), {
      locale: 'en-GB',
      device: 'desktop',
      ready: (page) => waitFor(async () => (await page.textContent('#aq-state')) === 'Admission is paused', { message: 'the paused state' }),
    }),
  );
  files.push(
    await shoot('notfound-en', queue.roomURL(slug('missing')), {
      locale: 'en-GB',
      device: 'desktop',
      ready: async (page, res) => assert.equal(res.status(), 404),
    }),
  );
  t.diagnostic(`written: ${files.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
});
