// Test harness: builds and starts the queue server, creates rooms through
// the admin API, and launches Chromium.
// The server is the real aditus-queue binary built from the repository.

import { spawn, execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const e2eDir = path.resolve(here, '..');
export const repoRoot = path.resolve(e2eDir, '../../..');
export const artifactsDir = path.join(e2eDir, 'artifacts');

const run = promisify(execFile);
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aq-e2e-'));
process.on('exit', () => fs.rmSync(workDir, { recursive: true, force: true }));

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// freePort is a loopback port free at the time of the call, for a server
// that must be told its address before it listens. It is chosen at random
// below the kernel's ephemeral range, which the kernel gives outgoing
// connections and port 0 listeners: a port taken from a port 0 listener
// could be handed to another process's outgoing connection before the
// server binds it. The Go tests pick theirs from 20000 up to that range
// (internal/testbin), so these come from 10000 to 19000 (below the broker
// of deploy/local/test.sh on 19092), and each is handed out once per test
// process.
const portLow = 10000;
const portHigh = 19000;
const handedOut = new Set();

export async function freePort() {
  for (let i = 0; i < 200; i++) {
    const port = portLow + crypto.randomInt(portHigh - portLow);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${portLow} and ${portHigh}`);
}

function canListen(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

const builds = new Map();

// build compiles a Go main package once per test process.
function build(name, pkg) {
  if (!builds.has(name)) {
    const out = path.join(workDir, name);
    builds.set(
      name,
      run('go', ['build', '-o', out, pkg], { cwd: repoRoot, maxBuffer: 16 << 20 }).then(
        () => out,
        (err) => {
          throw new Error(`go build ${pkg} failed:\n${err.stderr || err.message}`);
        },
      ),
    );
  }
  return builds.get(name);
}

export const buildServer = () => build('aditus-queue', repoRoot);

// tempDir makes a directory under this test process's work directory,
// removed when the process exits.
export const tempDir = (prefix) => fs.mkdtempSync(path.join(workDir, prefix));

// Proc is a child process whose output is kept for failure reports; env,
// when given, is added to this process's environment.
export class Proc {
  constructor(name, cmd, args, env) {
    this.name = name;
    this.cmd = cmd;
    this.args = args;
    this.env = env;
    this.output = [];
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ? { ...process.env, ...env } : process.env });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    for (const stream of [this.child.stdout, this.child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (d) => {
        this.output.push(d);
        if (this.output.length > 400) this.output.shift();
      });
    }
  }

  // kill ends the process at once (SIGKILL), as a crash would.
  async kill() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async stop() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }

  log() {
    return `--- ${this.name} ---\n${this.output.join('')}`;
  }
}

export async function waitHealthy(url, procs, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    for (const p of procs) {
      if (p.child.exitCode !== null) throw new Error(`${p.name} exited with ${p.child.exitCode}\n${p.log()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = err.message;
    }
    await sleep(100);
  }
  throw new Error(`${url} not healthy after ${timeoutMs} ms (${last})\n${procs.map((p) => p.log()).join('\n')}`);
}

// Queue is a running queue server with its admin token.
export class Queue {
  constructor(base, adminToken, procs) {
    this.base = base;
    this.adminToken = adminToken;
    this.procs = procs;
  }

  async api(method, p, body) {
    const res = await fetch(this.base + p, {
      method,
      headers: { Authorization: `Bearer ${this.adminToken}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(10000),
    });
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = { raw: text };
    }
    return { status: res.status, body: json, headers: res.headers };
  }

  // createRoom creates a room and answers its site object and secret.
  async createRoom(fields) {
    const r = await this.api('POST', '/api/admin/queue/sites', {
      domains: ['127.0.0.1'],
      ratePerMinute: 60,
      message: '',
      accentColor: '#0a63c9',
      // Every request of these tests, the browser's included, comes from
      // loopback: one client address, far beyond the default budget.
      addressBudget: { perMinute: 6000000, burst: 10000000 },
      ...fields,
    });
    if (r.status !== 201) throw new Error(`create room ${fields.slug}: ${r.status} ${JSON.stringify(r.body)}`);
    return { site: r.body.site, secret: r.body.secret };
  }

  // updateRoom sends the whole site object with changes, as PATCH expects.
  async updateRoom(site, changes) {
    const { slug, ...rest } = { ...site, ...changes };
    const r = await this.api('PATCH', `/api/admin/queue/sites/${encodeURIComponent(site.id)}`, rest);
    if (r.status !== 200) throw new Error(`update room ${slug}: ${r.status} ${JSON.stringify(r.body)}`);
    return (r.body && r.body.site) || { ...site, ...changes };
  }

  async join(slug, body = {}) {
    const r = await this.api('POST', `/queue/${encodeURIComponent(slug)}/join`, body);
    if (r.status !== 200) throw new Error(`join ${slug}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  roomURL(slug, params = {}) {
    const u = new URL(`${this.base}/queue/${encodeURIComponent(slug)}`);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return u.toString();
  }

  async stop() {
    await Promise.all(this.procs.map((p) => p.stop()));
  }

  // restart stops the server and starts it again on the same address and
  // data directory (what an operator sees as a server restart).
  async restart() {
    await this.stop();
    this.procs = this.procs.map((p) => new Proc(p.name, p.cmd, p.args, p.env));
    await waitHealthy(`${this.base}/queue/healthz`, this.procs);
  }

  log() {
    return this.procs.map((p) => p.log()).join('\n');
  }
}

// startQueue starts a queue server (see AQ_E2E_TARGET) on a free port and
// waits until GET /queue/healthz answers 200; extra flags are added to
// serve's (say --proxy-config, to run the capacity proxy in the same
// process).
export async function startQueue(extra = []) {
  const adminToken = crypto.randomBytes(24).toString('hex');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(workDir, 'data-'));
  const bin = await buildServer();
  const procs = [new Proc('aditus-queue', bin, ['serve', '--addr', `127.0.0.1:${port}`, '--public-url', base, '--data-dir', dataDir, '--admin-token', adminToken, '--ops-addr', '127.0.0.1:0', ...extra])];
  try {
    await waitHealthy(`${base}/queue/healthz`, procs);
  } catch (err) {
    await Promise.all(procs.map((p) => p.stop()));
    throw err;
  }
  return new Queue(base, adminToken, procs);
}

export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

// launchBrowser starts headless Chromium with a fresh temporary profile
// (Playwright gives every launch its own --user-data-dir).
export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: chromiumArgs,
  });
}

// waitFor polls fn until it returns a truthy value.
export async function waitFor(fn, { timeout = 10000, interval = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let lastErr;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    await sleep(interval);
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${message}${lastErr ? `: ${lastErr.message}` : ''}`);
}

export function slug(prefix) {
  return `${prefix}-${crypto.randomBytes(3).toString('hex')}`;
}

export function ensureArtifacts() {
  fs.mkdirSync(artifactsDir, { recursive: true });
  return artifactsDir;
}

// startProxy starts `aditus-queue proxy` with the HCL configuration text on
// a free port, alone on its own embedded log, and waits until it answers.
// It answers { base, stop }.
export async function startProxy(config) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dir = fs.mkdtempSync(path.join(workDir, 'proxy-'));
  const file = path.join(dir, 'proxy.hcl');
  fs.writeFileSync(file, config);
  const bin = await buildServer();
  const p = new Proc('aditus-queue proxy', bin, ['proxy', '--config', file, '--addr', `127.0.0.1:${port}`, '--data-dir', path.join(dir, 'data'), '--ops-addr', '127.0.0.1:0']);
  const deadline = Date.now() + 30000;
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`proxy exited with ${p.child.exitCode}\n${p.log()}`);
    try {
      // A host no block names: the probe takes no slot of any room.
      await new Promise((resolve, reject) => {
        const req = http.get(`${base}/`, { headers: { host: 'probe.invalid' }, timeout: 1000 }, (res) => {
          res.resume();
          resolve();
        });
        req.on('error', reject);
        req.on('timeout', () => req.destroy(new Error('timeout')));
      });
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        await p.stop();
        throw new Error(`proxy did not answer: ${err.message}\n${p.log()}`);
      }
    }
    await sleep(100);
  }
  return { base, stop: () => p.stop(), log: () => p.log() };
}
