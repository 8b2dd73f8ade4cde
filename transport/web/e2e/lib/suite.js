// The set-up the browser test files share: one queue server and one
// Chromium for the file's tests, and with { shop: true } a shop behind the
// rooms. Each test file runs in its own process, so these bindings belong
// to the file that calls useQueue.

import { after, before } from 'node:test';
import { launchBrowser, slug, startQueue } from './harness.js';
import { startShop } from './shop.js';

export let queue;
export let browser;
export let shop;

// useQueue starts the queue server and Chromium (and the shop) before the
// file's tests and stops them after.
export function useQueue({ withShop = false } = {}) {
  before(async () => {
    queue = await startQueue();
    browser = await launchBrowser();
    if (withShop) shop = await startShop({ queueBase: queue.base, slug: 'none' });
  });
  after(async () => {
    await browser?.close();
    await shop?.stop();
    await queue?.stop();
  });
}

// queuedRoom creates a room in front of the shop and joins it until a
// visitor has to wait (at most tries joins); it answers the room's slug as
// s with its site and secret.
export async function queuedRoom(prefix, fields, tries = 50) {
  const s = slug(prefix);
  const room = await queue.createRoom({ slug: s, targetUrl: shop.url('/'), ...fields });
  for (let i = 0; i < tries; i++) if (!(await queue.join(s)).admitted) break;
  return { s, ...room };
}
