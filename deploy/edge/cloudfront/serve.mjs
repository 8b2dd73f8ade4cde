// serve.mjs — plays CloudFront for the gates' tests
// (deploy/edge/runtimes_test.go): every HTTP request on 127.0.0.1:$PORT
// becomes a viewer-request event (fixtures/viewer-request.json with the
// request's URI, query string and headers), index.js's handler is called
// with it, and its answer becomes the response — or, when the handler
// returns the request, the request goes to ORIGIN, as CloudFront does.
//
//   ADITUS_QUEUE_SLUG, ADITUS_QUEUE_SECRET, ADITUS_QUEUE_ROOM  the config
//   ORIGIN  the shop, http://127.0.0.1:<port>
//   HANDLER optional: another handler module to call (the seed's sketch)
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { makeHandler } = require('./index.js');
const fixture = fs.readFileSync(new URL('./fixtures/viewer-request.json', import.meta.url), 'utf8');
const env = process.env;
const handler = env.HANDLER
  ? require(env.HANDLER).handler
  : makeHandler({ slug: env.ADITUS_QUEUE_SLUG, secret: env.ADITUS_QUEUE_SECRET, room: env.ADITUS_QUEUE_ROOM });

function event(req) {
  const e = JSON.parse(fixture);
  const r = e.Records[0].cf.request;
  const q = req.url.indexOf('?');
  r.method = req.method;
  r.clientIp = req.socket.remoteAddress;
  r.uri = q < 0 ? req.url : req.url.slice(0, q);
  r.querystring = q < 0 ? '' : req.url.slice(q + 1);
  r.headers = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const key = req.rawHeaders[i];
    (r.headers[key.toLowerCase()] ||= []).push({ key, value: req.rawHeaders[i + 1] });
  }
  // CloudFront adds this when the distribution forwards it; the viewer
  // came over plain HTTP here.
  r.headers['cloudfront-forwarded-proto'] = [{ key: 'CloudFront-Forwarded-Proto', value: 'http' }];
  return e;
}

const server = http.createServer(async (req, res) => {
  try {
    const out = await handler(event(req));
    if (out.status) {
      for (const [, list] of Object.entries(out.headers || {})) {
        for (const { key, value } of list) res.appendHeader(key, value);
      }
      res.writeHead(Number(out.status));
      res.end(out.body || '');
      return;
    }
    const headers = {};
    for (const [name, list] of Object.entries(out.headers)) {
      if (name !== 'host' && name !== 'cloudfront-forwarded-proto') headers[name] = list.map((h) => h.value).join(name === 'cookie' ? '; ' : ', ');
    }
    const to = new URL(out.uri + (out.querystring ? '?' + out.querystring : ''), env.ORIGIN);
    const up = http.request(to, { method: out.method, headers }, (upRes) => {
      res.writeHead(upRes.statusCode, upRes.headers);
      upRes.pipe(res);
    });
    up.on('error', (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(up);
  } catch (err) {
    console.error(err);
    res.writeHead(500);
    res.end();
  }
});
server.listen(Number(env.PORT), '127.0.0.1', () => console.log(`cloudfront on http://127.0.0.1:${env.PORT}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
