// The proof-of-work worker in Chromium: correct solutions, and how long the
// default difficulty (15 bits) takes.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ensureArtifacts, slug } from '../lib/harness.js';
import { browser, queue, useQueue } from '../lib/suite.js';

useQueue();

function leadingZeroBits(buf) {
  let n = 0;
  for (const byte of buf) {
    if (byte === 0) {
      n += 8;
      continue;
    }
    return n + Math.clz32(byte) - 24;
  }
  return n;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

test('pow-worker.js solves 15-bit challenges, and its timing is recorded', async (t) => {
  const bits = 15;
  const runs = 30;
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(queue.roomURL(slug('pow-bench'))); // any page of the queue's origin
  const results = await page.evaluate(
    async ({ url, runs, bits }) => {
      const out = [];
      for (let i = 0; i < runs; i++) {
        const challenge = `${crypto.randomUUID()}.${i}`;
        const started = performance.now();
        const worker = new Worker(url);
        const r = await new Promise((resolve, reject) => {
          worker.onmessage = (e) => resolve(e.data);
          worker.onerror = (e) => reject(new Error(e.message));
          worker.postMessage({ challenge, bits });
        });
        worker.terminate();
        out.push({ challenge, ...r, total: performance.now() - started });
      }
      return out;
    },
    { url: `${queue.base}/queue/assets/pow-worker.js`, runs, bits },
  );

  for (const r of results) {
    assert.equal(typeof r.nonce, 'string', JSON.stringify(r));
    assert.match(r.nonce, /^\d+$/);
    const digest = crypto.createHash('sha256').update(`${r.challenge}.${r.nonce}`).digest();
    assert.ok(leadingZeroBits(digest) >= bits, `nonce ${r.nonce} for ${r.challenge} has only ${leadingZeroBits(digest)} zero bits`);
  }
  const totals = results.map((r) => r.total).sort((a, b) => a - b);
  const hashes = results.reduce((n, r) => n + r.hashes, 0);
  const hashMs = results.reduce((n, r) => n + r.ms, 0);
  const summary = {
    browser: browser.version(),
    bits,
    runs,
    meanMs: Math.round(totals.reduce((a, b) => a + b, 0) / runs),
    medianMs: Math.round(percentile(totals, 50)),
    p90Ms: Math.round(percentile(totals, 90)),
    maxMs: Math.round(totals[totals.length - 1]),
    hashesPerSecond: Math.round((hashes / hashMs) * 1000),
    meanHashes: Math.round(hashes / runs),
  };
  fs.writeFileSync(path.join(ensureArtifacts(), 'pow-timing.json'), `${JSON.stringify(summary, null, 2)}\n`);
  t.diagnostic(`proof of work in Chromium: ${JSON.stringify(summary)}`);
  // The timing is a measurement (artifacts/pow-timing.json), not a pass
  // condition: this machine is shared and its speed varies.
  await ctx.close();
});
