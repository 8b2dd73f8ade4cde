// The console's events tab: the operator schedules the on-sale day on the
// timeline (a refused overlap shown next to its field), edits and removes
// events, and previews what a visitor meets at chosen instants; and a
// settings form opened before a mode switch does not write the old mode
// back.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { desktop, openConsole, signedIn } from '../lib/console.js';
import { slug, waitFor } from '../lib/harness.js';
import { browser, queue, useQueue } from '../lib/suite.js';

useQueue();

const utc = { ...desktop, timezoneId: 'UTC' };
const siteOf = async (id) => (await queue.api('GET', `/api/admin/queue/sites/${id}`)).body;

// day is tomorrow's date as YYYY-MM-DD (UTC), at hh:mm for datetime-local.
const tomorrow = new Date(Date.now() + 24 * 3600e3).toISOString().slice(0, 10);
const at = (hm) => `${tomorrow}T${hm}`;

async function fillEvent(page, fields) {
  await page.waitForSelector('#event-form');
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'mode' || k === 'endMode') await page.selectOption(`#ev-${k}`, v);
    else await page.fill(`#ev-${k}`, String(v));
  }
  await page.click('#event-save');
}

test('the operator schedules an on-sale day on the timeline and previews it', async () => {
  // A room that opened with opensAt once: its past opening gives way to the events.
  const { site } = await queue.createRoom({ slug: slug('events'), name: 'Tour', targetUrl: 'https://shop.example.com/', ratePerMinute: 100,
    opensAt: new Date(Date.now() - 60000).toISOString() });
  const { ctx, page, problems } = await openConsole(browser, queue.base, utc);
  await signedIn(page, queue.adminToken);
  await page.goto(`${queue.base}/admin/#/room/${site.id}/events`);
  await page.waitForSelector('#event-timeline');
  assert.match(await page.textContent('#event-timeline'), /No events/);

  await page.click('#event-add');
  await fillEvent(page, { name: 'Fan club', startsAt: at('09:00'), endsAt: at('09:30'), ratePerMinute: 300 });
  await waitFor(async () => (await page.locator('#event-timeline .tl-event').count()) === 1, { message: 'the pre-sale on the timeline' });
  assert.equal((await siteOf(site.id)).events[0].ratePerMinute, 300);
  assert.equal((await siteOf(site.id)).opensAt, null, 'the past opening kept beside events');

  // A pre-queue overlapping the pre-sale is refused next to its field.
  await page.click('#event-add');
  await fillEvent(page, { name: 'Main sale', prequeueFrom: at('09:20'), startsAt: at('10:00'), endsAt: at('18:00'), ratePerMinute: 2000, endMode: 'soldOut' });
  await waitFor(async () => /overlaps events\[0\]/.test(await page.textContent('[data-error-for="prequeueFrom"]')), { message: 'the overlap shown at its field' });
  assert.equal((await siteOf(site.id)).events.length, 1, 'stored although refused');
  await page.fill('#ev-prequeueFrom', at('09:30'));
  await page.click('#event-save');
  await waitFor(async () => (await page.locator('#event-timeline .tl-event').count()) === 2, { message: 'the main sale on the timeline' });
  assert.equal(await page.locator('#event-timeline .tl-pre').count(), 1, 'the pre-queue drawn');
  assert.equal(await page.textContent('#event-timeline .tl-after'), 'sold out');
  let s = await siteOf(site.id);
  assert.deepEqual(s.events.map((e) => [e.name, e.startsAt, e.endsAt, e.prequeueFrom, e.ratePerMinute, e.endMode]), [
    ['Fan club', `${tomorrow}T09:00:00Z`, `${tomorrow}T09:30:00Z`, undefined, 300, undefined],
    ['Main sale', `${tomorrow}T10:00:00Z`, `${tomorrow}T18:00:00Z`, `${tomorrow}T09:30:00Z`, 2000, 'soldOut'],
  ]);

  // Edit: the main sale's rate.
  await page.click('#event-list [data-edit="1"]');
  await fillEvent(page, { ratePerMinute: 2500 });
  await waitFor(async () => (await siteOf(site.id)).events[1].ratePerMinute === 2500, { message: 'the edit stored' });

  // Preview at instants of the day.
  const preview = async (hm) => {
    await page.fill('#preview-at', at(hm));
    await page.click('#preview-go');
    await waitFor(async () => (await page.locator('#preview-out dd').count()) > 0, { message: 'the preview' });
    const out = {};
    for (const k of ['pvEvent', 'mode', 'pvRate', 'pvPreQueue', 'pvNext']) out[k] = await page.textContent(`#preview-out [data-preview="${k}"]`);
    await page.evaluate(() => document.querySelector('#preview-out').replaceChildren());
    return out;
  };
  let p = await preview('09:45');
  assert.equal(p.pvEvent, 'Main sale (pre-queue)');
  assert.equal(p.pvRate, '2,500');
  assert.match(p.pvPreQueue, /^yes, drawn at/);
  p = await preview('09:10');
  assert.equal(p.pvEvent, 'Fan club (running)');
  assert.equal(p.pvRate, '300');
  p = await preview('19:00');
  assert.equal(p.mode, 'sold out');
  assert.equal(p.pvNext, '—', 'a next change after the last event');

  // Remove the pre-sale.
  await page.click('#event-list [data-remove="0"]');
  await waitFor(async () => (await siteOf(site.id)).events.length === 1, { message: 'the pre-sale removed' });
  await waitFor(async () => (await page.locator('#event-timeline .tl-event').count()) === 1, { message: 'the timeline redrawn' });
  assert.deepEqual(problems, []);
  await ctx.close();
});

test('a settings form opened before a mode switch does not write the old mode back', async () => {
  const { site } = await queue.createRoom({ slug: slug('stale'), name: 'Gala', targetUrl: 'https://shop.example.com/' });
  const { ctx, page, problems } = await openConsole(browser, queue.base, utc);
  await signedIn(page, queue.adminToken);
  await page.goto(`${queue.base}/admin/#/room/${site.id}/settings`);
  await page.waitForSelector('#f-message');
  await page.selectOption('#mode-select', 'soldOut'); // the dialog is accepted
  await waitFor(async () => (await siteOf(site.id)).mode === 'soldOut', { message: 'the room sold out' });

  await page.fill('#f-message', 'Written from the older form.');
  await page.click('.site-form button[type=submit]');
  await waitFor(() => page.isVisible('#reload-form'), { message: 'the stale form refused' });
  let s = await siteOf(site.id);
  assert.equal(s.mode, 'soldOut', 'the old mode written back');
  assert.notEqual(s.message, 'Written from the older form.');

  await page.click('#reload-form');
  await page.waitForSelector('#f-message');
  await page.fill('#f-message', 'Written from a fresh form.');
  await page.click('.site-form button[type=submit]');
  await waitFor(async () => (await siteOf(site.id)).message === 'Written from a fresh form.', { message: 'the fresh form saved' });
  s = await siteOf(site.id);
  assert.equal(s.mode, 'soldOut');
  assert.deepEqual(problems, []);
  await ctx.close();
});
