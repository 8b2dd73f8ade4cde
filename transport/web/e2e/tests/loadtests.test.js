// The console's load tests in headless Chromium against the real server:
// the operator creates a test room, starts a run from the form, watches the
// gauges and the per-second chart move, finds the run in the history,
// stops a second run early, and manages a schedule (a bad cron named next
// to its field). Small loads only: 20 requests a second for a few seconds.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { openConsole, signedIn } from '../lib/console.js';
import { ensureArtifacts, slug, waitFor } from '../lib/harness.js';
import { browser, queue, useQueue } from '../lib/suite.js';

useQueue();
const dir = ensureArtifacts();

test('the operator runs a load test on a test room, watches it live and finds it in the history', async () => {
  const testSlug = slug('lt');
  const { site: testRoom } = await queue.createRoom({ slug: testSlug, name: 'Load test room', targetUrl: 'https://shop.example.com/', ratePerMinute: 100000, active: true, test: true });
  await queue.createRoom({ slug: slug('shop'), name: 'Production room', targetUrl: 'https://shop.example.com/', active: true });

  const { ctx, page, problems } = await openConsole(browser, queue.base);
  await signedIn(page, queue.adminToken);
  await page.click('#nav-loadtests');
  await page.waitForSelector('#lt-start-form');

  // only the test room is offered
  const options = await page.$$eval('#lt-siteId option', (os) => os.map((o) => o.value));
  assert.deepEqual(options, [testRoom.id]);

  await page.selectOption('#lt-profile', 'mix');
  await page.fill('#lt-ratePerSecond', '20');
  await page.fill('#lt-durationSeconds', '4');
  await page.click('#lt-start-form button[type=submit]');
  await page.waitForSelector('#lt-chart');
  assert.match(page.url(), /#\/loadtests\/lt/);
  assert.ok(await page.isVisible('#instances'), 'the instances panel is next to the run');

  // the chart moves: it gains seconds while the run lasts
  const seconds = async () => Number((await page.getAttribute('#lt-chart', 'data-seconds')) || '0');
  await waitFor(async () => (await seconds()) >= 1, { timeout: 15000, message: 'a first second on the chart' });
  const first = await seconds();
  await waitFor(async () => (await seconds()) > first, { timeout: 15000, message: 'the chart moving' });
  assert.ok(await page.$('#lt-chart canvas'), 'the chart is drawn');
  const rate = await page.textContent('[data-gauge="lt_gRate"]');
  assert.match(rate, /\/ 20\/s/);
  await page.screenshot({ path: path.join(dir, 'loadtest-live.png'), fullPage: true });

  await page.waitForSelector('#lt-run-state[data-run-state="finished"]', { timeout: 20000 });
  const requests = Number(((await page.textContent('[data-total="lt_requests"]')) || '').replace(/[^\d]/g, ''));
  assert.ok(requests >= 60, `requests in the totals: ${requests}`);
  assert.ok(await page.isHidden('#lt-stop'), 'no stop button once ended');

  // the history lists it, finished
  await page.click('a.back');
  await page.waitForSelector('#lt-history [data-run] [data-run-state="finished"]');

  // a second run stopped early
  await page.fill('#lt-ratePerSecond', '20');
  await page.fill('#lt-durationSeconds', '60');
  await page.click('#lt-start-form button[type=submit]');
  await page.waitForSelector('#lt-run-state[data-run-state="running"]');
  await waitFor(async () => (await seconds()) >= 1, { timeout: 15000, message: 'the second run under way' });
  await page.click('#lt-stop');
  await page.waitForSelector('#lt-run-state[data-run-state="stopped"]', { timeout: 15000 });

  // schedules: a bad cron is named next to its field; a good one is listed, then deleted
  await page.click('a.back');
  await page.waitForSelector('#lt-schedule-form');
  await page.fill('#ls-cron', '0 0 * * * *');
  await page.click('#lt-schedule-form button[type=submit]');
  await page.waitForSelector('#lt-schedule-form [data-error-for="cron"]:not(:empty)');
  assert.ok(await page.$eval('#ls-cron', (el) => el.classList.contains('invalid')));
  // at the default address budget, the form's default (50 joins/s for
  // 30 s, all from this server) is refused, saying what to raise
  const budget = async (b) => queue.updateRoom((await queue.api('GET', `/api/admin/queue/sites/${testRoom.id}`)).body, { addressBudget: b });
  await budget({ perMinute: 30, burst: 60 });
  await page.fill('#ls-cron', '30 4 * * 1');
  await page.click('#lt-schedule-form button[type=submit]');
  await page.waitForSelector("#lt-schedule-form .form-status:has-text(\"raise the room's addressBudget\")");
  assert.equal(await page.$('#lt-schedules [data-schedule]'), null, 'a refused schedule is listed');
  await budget({ perMinute: 6000000, burst: 10000000 });
  await page.click('#lt-schedule-form button[type=submit]');
  await page.waitForSelector('#lt-schedules [data-schedule]');
  await page.screenshot({ path: path.join(dir, 'loadtests.png'), fullPage: true });
  await page.click('#lt-schedules [data-schedule] button');
  await page.waitForSelector('#lt-schedules [data-schedule]', { state: 'detached' });

  assert.deepEqual(problems, []);
  await ctx.close();
});
