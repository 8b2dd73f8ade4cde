// serve.mjs — runs a Worker in workerd (miniflare 4) on 127.0.0.1:$PORT
// for the gates' tests (deploy/edge/runtimes_test.go).
//
//   WORKER    the Worker's script (ES module)
//   ADITUS_QUEUE_SLUG, ADITUS_QUEUE_ROOM, ADITUS_QUEUE_SECRET  its bindings
//   ORIGIN    optional ORIGIN binding (our Worker forwards there)
//   UPSTREAM  optional miniflare upstream (fetch(request) goes there, as a
//             Worker's fetch goes to the shop's origin on Cloudflare)
import path from 'node:path';
import { Miniflare } from 'miniflare';

const env = process.env;
const bindings = {
  ADITUS_QUEUE_SLUG: env.ADITUS_QUEUE_SLUG,
  ADITUS_QUEUE_ROOM: env.ADITUS_QUEUE_ROOM,
  ADITUS_QUEUE_SECRET: env.ADITUS_QUEUE_SECRET,
};
if (env.ORIGIN) bindings.ORIGIN = env.ORIGIN;
const mf = new Miniflare({
  modules: true,
  scriptPath: env.WORKER,
  modulesRoot: path.dirname(env.WORKER),
  compatibilityDate: '2025-01-01',
  bindings,
  upstream: env.UPSTREAM || undefined,
  host: '127.0.0.1',
  port: Number(env.PORT),
});
await mf.ready;
console.log(`worker on http://127.0.0.1:${env.PORT}`);
const stop = () => mf.dispose().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
