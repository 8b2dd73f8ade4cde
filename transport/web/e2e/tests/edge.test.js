// The nginx edge gate (deploy/edge/nginx) in front of the shop: a visitor
// without a token, while nobody waits, goes through the room's gateway link
// and comes back to the page it asked for with a token at once, never
// seeing a waiting number; afterwards the cookie carries it.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freePort, repoRoot, sleep, slug } from '../lib/harness.js';
import { startShop } from '../lib/shop.js';
import { browser, queue, useQueue } from '../lib/suite.js';

const njsModule = '/usr/lib/nginx/modules/ngx_http_js_module.so';
const cleanup = useQueue();

// startNginx runs Debian's nginx with njs and deploy/edge/nginx's gate in
// front of upstream, for the room slug at the queue, on a free port.
async function startNginx({ slug: s, secret, upstream }) {
  assert.ok(fs.existsSync(njsModule), 'nginx njs module missing: apt-get install libnginx-mod-http-js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aq-edge-nginx-'));
  const port = await freePort();
  const conf = `${process.getuid() === 0 ? 'user root;' : ''}
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
load_module ${njsModule};
env ADITUS_QUEUE_SECRET;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  js_import aditus_queue from ${path.join(repoRoot, 'deploy/edge/nginx/aditus_queue.js')};
  server {
    listen 127.0.0.1:${port};
    set $aditus_queue_slug ${s};
    set $aditus_queue_room ${queue.base}/queue/${s};
    location / { js_content aditus_queue.gate; }
    location @shop { proxy_pass ${upstream}; }
  }
}
`;
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const child = spawn('nginx', ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', path.join(dir, 'nginx.conf')], {
    env: { ...process.env, ADITUS_QUEUE_SECRET: secret },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  cleanup.push(async () => {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) break;
    try {
      await fetch(base + '/', { redirect: 'manual', signal: AbortSignal.timeout(1000) });
      return base;
    } catch {
      await sleep(50);
    }
  }
  const log = fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '';
  throw new Error(`nginx did not start on ${base}\n${log}`);
}

test('a tokenless visitor below the rate comes back to the page it asked for with a token, without a waiting number', async () => {
  const s = slug('edge');
  // The shop without embed.js: only the gate decides.
  const shop = await startShop({ queueBase: queue.base, slug: s, embedSrc: '/no-embed.js' });
  cleanup.push(() => shop.stop());
  const { secret } = await queue.createRoom({ slug: s, name: 'Edge Room', targetUrl: shop.url('/'), ratePerMinute: 600 });
  const edge = await startNginx({ slug: s, secret, upstream: shop.base });

  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));

  const res = await page.goto(edge + '/event/42?seat=7');
  assert.equal(res.status(), 200);
  assert.equal(page.url(), edge + '/event/42?seat=7', 'the visitor is back on the page it asked for, without the token');
  assert.equal(await page.textContent('#shop-title'), 'Summer Nights Open Air');

  // The way: the gate, the room's gateway link with the page as return URL,
  // the page with a token, the clean page. Never the room's own page.
  const roomPage = `${queue.base}/queue/${s}`;
  const enter = requests.find((u) => u.startsWith(roomPage + '/enter?'));
  assert.ok(enter, `no request to the gateway link: ${requests.join(' ')}`);
  assert.equal(new URL(enter).searchParams.get('return'), edge + '/event/42?seat=7');
  const back = requests.map((u) => new URL(u)).find((u) => u.origin === edge && u.searchParams.has('aditus_queue_token'));
  assert.ok(back, `no return with a token: ${requests.join(' ')}`);
  assert.equal(back.pathname, '/event/42');
  assert.equal(back.searchParams.get('seat'), '7');
  for (const u of requests) {
    const p = new URL(u);
    assert.ok(!(p.origin === queue.base && (p.pathname === `/queue/${s}` || /\/(join|status|ws)$/.test(p.pathname))), `the visitor saw the waiting room: ${u}`);
  }

  const [cookie] = (await ctx.cookies(edge)).filter((c) => c.name === 'aditus_queue');
  assert.ok(cookie, 'the gate set no cookie');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.secure, true);
  assert.equal(cookie.sameSite, 'Lax');
  const left = cookie.expires - Date.now() / 1000;
  assert.ok(left > 500 && left <= 600, `cookie lives ${left} s, want the token's remaining lifetime`);

  // With the cookie, the next page is the shop's at once.
  requests.length = 0;
  const next = await page.goto(edge + '/');
  assert.equal(next.status(), 200);
  assert.equal(await page.textContent('#shop-title'), 'Sample Shop');
  assert.deepEqual(requests.filter((u) => !u.endsWith('/no-embed.js')), [edge + '/']);
  await ctx.close();
});
