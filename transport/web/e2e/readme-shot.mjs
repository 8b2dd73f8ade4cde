// readme-shot.mjs takes the README's picture of the console: a room under a
// minute and a half of rising joins, its rate raised half-way, seen on the
// live dashboard. Run from the repository root:
//
//   node transport/web/e2e/readme-shot.mjs docs/console.png

import { openConsole, signedIn } from './lib/console.js';
import { launchBrowser, sleep, startQueue } from './lib/harness.js';
const queue = await startQueue();
const browser = await launchBrowser();
try {
  const r = await queue.createRoom({ slug: 'summer-nights', name: 'Summer Nights Open Air 2026', targetUrl: 'https://shop.example.com/', ratePerMinute: 60 });
  const { ctx, page } = await openConsole(browser, queue.base, { viewport: { width: 1280, height: 860 }, locale: 'en-GB' });
  await signedIn(page, queue.adminToken);
  await page.goto(`${queue.base}/admin/#/room/${r.site.id}/live`);
  const end = Date.now() + 100000;
  let k = 0;
  while (Date.now() < end) {
    const burst = k < 40 ? 1 : k < 80 ? 4 : 2;
    for (let i = 0; i < burst; i++) fetch(`${queue.base}/queue/summer-nights/join`, { method: 'POST' }).catch(() => {});
    k++;
    if (k === 70) await queue.updateRoom(r.site, { ratePerMinute: 90 });
    await sleep(1000);
  }
  await sleep(1500);
  await page.screenshot({ path: process.argv[2], clip: { x: 0, y: 0, width: 1280, height: 860 } });
  await ctx.close();
} finally {
  await browser.close();
  await queue.stop();
}
