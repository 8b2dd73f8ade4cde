// A front node and a member (lib/cluster.js): the waiting page while its
// front loses the member and gets it back, and the console's instances
// while a front is added.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slug, waitFor } from '../lib/harness.js';
import { startCluster } from '../lib/cluster.js';
import { openConsole, signedIn } from '../lib/console.js';
import { browser, useBrowser } from '../lib/suite.js';

const cleanup = useBrowser();

async function cluster() {
  const c = await startCluster();
  cleanup.push(() => c.stop());
  return c;
}

test('the waiting page says it is reconnecting when its front loses the member, over the same socket, and recovers', async (t) => {
  const c = await cluster();
  const front = c.fronts[0];
  const s = slug('stale');
  await front.createRoom({ slug: s, name: 'Stale frames', targetUrl: 'https://shop.example.com/', ratePerMinute: 1 });
  for (let i = 0; i < 50; i++) if (!(await front.join(s)).admitted) break;

  const ctx = await browser.newContext({ locale: 'en-GB' });
  t.after(() => ctx.close());
  const page = await ctx.newPage();
  const sockets = [];
  const frames = [];
  page.on('websocket', (ws) => {
    sockets.push(ws);
    ws.on('framereceived', (f) => frames.push({ ws, data: String(f.payload) }));
  });
  await page.goto(front.roomURL(s));
  await waitFor(async () => /\d/.test(await page.textContent('#aq-number')), { message: 'a number' });
  await waitFor(() => frames.length > 0, { message: 'a frame over the socket' });
  assert.ok(!(await page.isVisible('#aq-banner')), 'a banner before any fault');

  await c.killMember();
  try {
    await waitFor(async () => (await page.isVisible('#aq-banner')) && (await page.textContent('#aq-banner-text')).includes('Connection interrupted'),
      { timeout: 20000, message: 'the reconnecting notice' });
  } catch (err) {
    throw new Error(`${err.message}\n${c.log()}`);
  }
  const stale = frames.filter((f) => JSON.parse(f.data).stale === true);
  assert.ok(stale.length > 0, 'no stale frame reached the page');
  assert.equal(sockets.length, 1, 'the page opened another socket instead of hearing the front on its own');
  assert.ok(!sockets[0].isClosed(), 'the front closed the socket');
  assert.ok(/\d/.test(await page.textContent('#aq-number')), 'the number went away while the front had no member');

  // The member comes back on its ports: the front uses it again without a
  // restart, and the notice goes.
  await c.startMember();
  await waitFor(async () => !(await page.isVisible('#aq-banner')), { timeout: 30000, message: 'the notice gone once the member is back' });
  const last = JSON.parse(frames[frames.length - 1].data);
  assert.notEqual(last.stale, true, 'the last frame is still stale');
});

test('the console lists a front added while it runs', async (t) => {
  const c = await cluster();
  const { ctx, page, problems } = await openConsole(browser, c.fronts[0].base);
  t.after(() => ctx.close());
  await signedIn(page, c.adminToken);
  const rows = () => page.$$eval('#instances tr[data-instance]', (trs) => trs.map((tr) => ({ id: tr.dataset.instance, roles: tr.children[1].textContent })));
  const before = await waitFor(async () => {
    const r = await rows();
    return r.length === 2 ? r : null;
  }, { timeout: 20000, message: 'the member and the front in the list' });
  assert.deepEqual(before.map((r) => r.roles).sort(), ['front, actor', 'front'].sort());

  await c.addFront();
  const after = await waitFor(async () => {
    const r = await rows();
    return r.length === 3 ? r : null;
  }, { timeout: 20000, message: 'the added front in the list' });
  const added = after.filter((r) => !before.some((b) => b.id === r.id));
  assert.equal(added.length, 1, `rows after adding a front: ${JSON.stringify(after)}`);
  assert.equal(added[0].roles, 'front');
  assert.deepEqual(problems, []);
});
