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
// file's tests and stops them after. It answers a list of cleanups the
// tests add to: they run, last first, once Chromium is closed and before
// the queue server stops.
export function useQueue({ withShop = false } = {}) {
  const cleanup = [];
  before(async () => {
    queue = await startQueue();
    browser = await launchBrowser();
    if (withShop) shop = await startShop({ queueBase: queue.base, slug: 'none' });
  });
  after(async () => {
    await browser?.close();
    await shop?.stop();
    for (const fn of cleanup.reverse()) await fn();
    await queue?.stop();
  });
  return cleanup;
}

// useBrowser starts Chromium alone, for files whose tests start their own
// servers; it answers the list of cleanups run after Chromium is closed.
export function useBrowser() {
  const cleanup = [];
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    for (const fn of cleanup.reverse()) await fn();
  });
  return cleanup;
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
