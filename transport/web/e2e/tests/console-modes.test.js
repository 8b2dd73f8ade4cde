// The console's mode switch: the disruptive modes ask first, a refusal
// changes nothing, and a change made elsewhere shows on the live dashboard.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openConsole, signedIn } from '../lib/console.js';
import { launchBrowser, slug, startQueue, waitFor } from '../lib/harness.js';

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

const modeOf = async (id) => (await queue.api('GET', `/api/admin/queue/sites/${id}`)).body.mode;

test('the operator switches modes, confirming the disruptive ones, and sees changes made elsewhere', async () => {
  const { site } = await queue.createRoom({ slug: slug('modes'), name: 'Gala night', targetUrl: 'https://shop.example.com/' });
  const { ctx, page, problems } = await openConsole(browser, queue.base);
  await signedIn(page, queue.adminToken);
  await page.goto(`${queue.base}/admin/#/room/${site.id}/live`);
  await page.waitForSelector('#mode-select');
  assert.equal(await page.inputValue('#mode-select'), 'queue');
  assert.ok(!(await page.isVisible('#room-mode')), 'a mode pill for the ordinary queue');

  const asked = [];
  let answer = false;
  page.removeAllListeners('dialog');
  page.on('dialog', (d) => {
    asked.push(d.message());
    return answer ? d.accept() : d.dismiss();
  });
  await page.selectOption('#mode-select', 'soldOut');
  await waitFor(async () => asked.length === 1 && (await page.inputValue('#mode-select')) === 'queue', { message: 'the refusal undone' });
  assert.match(asked[0], /sold out/);
  assert.equal(await modeOf(site.id), 'queue', 'changed although refused');

  answer = true;
  await page.selectOption('#mode-select', 'soldOut');
  await waitFor(async () => (await modeOf(site.id)) === 'soldOut', { message: 'the room sold out' });
  await waitFor(() => page.isVisible('#room-mode'), { message: 'the mode pill' });
  assert.equal(await page.textContent('#room-mode'), 'sold out');
  assert.equal(asked.length, 2);

  await page.selectOption('#mode-select', 'queue');
  await waitFor(async () => (await modeOf(site.id)) === 'queue', { message: 'back to queue' });
  assert.equal(asked.length, 2, 'asked before going back to the queue');

  // Another operator stops admissions: the live frame brings it.
  const cur = (await queue.api('GET', `/api/admin/queue/sites/${site.id}`)).body;
  await queue.updateRoom(cur, { mode: 'queueAll' });
  await waitFor(async () => (await page.inputValue('#mode-select')) === 'queueAll', { timeout: 10000, message: 'the stop on the dashboard' });
  assert.equal(await page.textContent('#room-mode'), 'emergency stop');
  assert.deepEqual(problems, []);
  await ctx.close();
});
