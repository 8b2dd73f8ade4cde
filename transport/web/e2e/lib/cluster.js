// A small cluster for the browser tests: one member (roles front,actor, on
// its own embedded log) and front nodes (role front) that reach the room
// grains on it, all on 127.0.0.1 with one admin token and master key. The
// member can be killed and started again on its ports; fronts can be added
// while it runs.

import crypto from 'node:crypto';
import path from 'node:path';
import { Proc, Queue, buildServer, freePort, tempDir, waitHealthy } from './harness.js';

export class Cluster {
  constructor(bin, adminToken, env, dir) {
    this.bin = bin;
    this.adminToken = adminToken;
    this.env = env;
    this.dir = dir;
    this.fronts = [];
  }

  // startMember starts the member on its ports (chosen on the first start,
  // kept for the next ones) and data directory.
  async startMember() {
    if (!this.memberPorts) this.memberPorts = { http: await freePort(), remote: await freePort(), health: await freePort() };
    const p = this.memberPorts;
    this.peer = `127.0.0.1:${p.health}`;
    const base = `http://127.0.0.1:${p.http}`;
    this.memberProc = new Proc('member', this.bin, [...this.common(base, p.http, p.remote, path.join(this.dir, 'member')),
      '--roles', 'front,actor', '--cluster-health', this.peer], this.env);
    await waitHealthy(`${base}/queue/healthz`, [this.memberProc]);
    this.member = new Queue(base, this.adminToken, [this.memberProc]);
    return this.member;
  }

  // addFront starts one more front node and waits until it reaches a grain.
  async addFront() {
    const http = await freePort();
    const base = `http://127.0.0.1:${http}`;
    const n = this.fronts.length + 1;
    const proc = new Proc(`front${n}`, this.bin, [...this.common(base, http, await freePort(), path.join(this.dir, `front${n}`)),
      '--roles', 'front'], this.env);
    await waitHealthy(`${base}/queue/healthz`, [proc]);
    const front = new Queue(base, this.adminToken, [proc]);
    this.fronts.push(front);
    const deadline = Date.now() + 30000;
    for (;;) {
      const r = await front.api('GET', '/api/admin/queue/sites').catch((err) => ({ status: err.message }));
      if (r.status === 200) break;
      if (Date.now() > deadline) throw new Error(`front${n} reached no grain: ${r.status}\n${proc.log()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return front;
  }

  common(base, http, remote, dataDir) {
    return ['serve', '--addr', `127.0.0.1:${http}`, '--public-url', base, '--data-dir', dataDir, '--admin-token', this.adminToken,
      '--ops-addr', '127.0.0.1:0', '--cluster-host', '127.0.0.1', '--cluster-port', String(remote), '--peers', this.peer];
  }

  // killMember ends the member with SIGKILL, as a crash would.
  killMember() {
    return this.memberProc.kill();
  }

  log() {
    return [this.memberProc, ...this.fronts.flatMap((f) => f.procs)].map((p) => p.log()).join('\n');
  }

  async stop() {
    await Promise.all(this.fronts.map((f) => f.stop()));
    await this.memberProc?.stop();
  }
}

// startCluster starts the member and one front.
export async function startCluster() {
  const c = new Cluster(await buildServer(), crypto.randomBytes(24).toString('hex'),
    { AQ_MASTER_KEY: crypto.randomBytes(32).toString('hex') }, tempDir('cluster-'));
  try {
    await c.startMember();
    await c.addFront();
  } catch (err) {
    await c.stop();
    throw err;
  }
  return c;
}
