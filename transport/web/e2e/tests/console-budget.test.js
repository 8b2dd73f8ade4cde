// The console's room form sets the per-address budget of new numbers and
// proof of work that turns itself on, on create and on edit: the values
// reach the API, the API's 422 is shown at the field, and a save over a
// room changed elsewhere is refused (If-Match) rather than overwriting it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openConsole, signedIn } from '../lib/console.js';
import { slug, waitFor } from '../lib/harness.js';
import { browser, queue, useQueue } from '../lib/suite.js';

useQueue();

const getSite = async (id) => (await queue.api('GET', `/api/admin/queue/sites/${id}`)).body;
const submit = (page) => page.click('.site-form button[type=submit]');

// fieldError submits the form and answers the message shown at field.
async function fieldError(page, field) {
  await submit(page);
  const slot = await page.waitForSelector(`[data-error-for="${field}"]:not(:empty)`);
  const id = `#f-${field.replace(/\./g, '-')}`;
  assert.ok(await page.$eval(id, (el) => el.classList.contains('invalid')), `${field} marked invalid`);
  return slot.textContent();
}

test('the operator sets the address budget and automatic proof of work from the form', async () => {
  const { ctx, page, problems } = await openConsole(browser, queue.base);
  await signedIn(page, queue.adminToken);

  // create: the defaults are shown, the operator widens the budget
  const s = slug('budget');
  await page.click('#new-room');
  await page.waitForSelector('#f-addressBudget-perMinute');
  assert.equal(await page.inputValue('#f-addressBudget-perMinute'), '30');
  assert.equal(await page.inputValue('#f-addressBudget-burst'), '60');
  assert.equal(await page.inputValue('#f-pow-autoFactor'), '4');
  assert.equal(await page.isChecked('#f-pow-auto'), false);
  assert.equal(await page.getAttribute('#f-addressBudget-perMinute', 'max'), '6000000');
  await page.fill('#f-slug', s);
  await page.fill('#f-name', 'Budget room');
  await page.fill('#f-targetUrl', 'https://shop.example.com/');
  await page.fill('#f-addressBudget-perMinute', '6000001');
  assert.match(await fieldError(page, 'addressBudget.perMinute'), /6000000/);
  await page.fill('#f-addressBudget-perMinute', '120');
  await page.fill('#f-addressBudget-burst', '500');
  await page.check('#f-pow-auto');
  await page.fill('#f-pow-autoFactor', '8');
  await submit(page);
  await page.waitForSelector('.once [data-once]');
  const list = (await queue.api('GET', '/api/admin/queue/sites')).body.sites;
  const id = list.find((x) => x.slug === s).id;
  let got = await getSite(id);
  assert.deepEqual(got.addressBudget, { perMinute: 120, burst: 500 });
  assert.equal(got.pow.auto, true);
  assert.equal(got.pow.autoFactor, 8);

  // edit: the form shows what is stored; bad values are named at their field
  await page.goto(`${queue.base}/admin/#/room/${id}/settings`);
  await page.waitForSelector('#f-name');
  assert.equal(await page.inputValue('#f-addressBudget-perMinute'), '120');
  assert.equal(await page.inputValue('#f-addressBudget-burst'), '500');
  assert.equal(await page.isChecked('#f-pow-auto'), true);
  await page.fill('#f-addressBudget-burst', '-1');
  assert.match(await fieldError(page, 'addressBudget.burst'), /10000000/);
  await page.fill('#f-addressBudget-burst', '2000');
  await page.fill('#f-pow-autoFactor', '1');
  assert.match(await fieldError(page, 'pow.autoFactor'), /1\.5/);
  assert.equal(await page.textContent('[data-error-for="addressBudget.burst"]'), '', 'the earlier error is cleared');
  assert.equal((await getSite(id)).addressBudget.burst, 500, 'a refused save changed the room');

  // a valid save, then a second one over the version the first answered
  await page.fill('#f-pow-autoFactor', '');
  await submit(page);
  await page.waitForSelector('.site-form .form-status:has-text("Saved.")');
  got = await getSite(id);
  assert.deepEqual(got.addressBudget, { perMinute: 120, burst: 2000 });
  assert.equal(got.pow.autoFactor, 4, 'an emptied factor takes the default');
  await page.uncheck('#f-pow-auto');
  await page.fill('#f-addressBudget-perMinute', '600');
  await submit(page);
  await waitFor(async () => (await getSite(id)).addressBudget.perMinute === 600, { message: 'the second save' });
  got = await getSite(id);
  assert.equal(got.pow.auto, false);
  assert.equal(got.addressBudget.perMinute, 600);

  // changed elsewhere meanwhile: the form's save is refused, nothing lost
  await queue.updateRoom(got, { addressBudget: { perMinute: 900, burst: 3000 } });
  await page.fill('#f-addressBudget-burst', '7');
  await submit(page);
  await page.waitForSelector('#reload-form');
  assert.deepEqual((await getSite(id)).addressBudget, { perMinute: 900, burst: 3000 });
  assert.deepEqual(problems, []);
  await ctx.close();
});
