// A sample ticket shop protected by the script tag: pages / and /event/42
// carry <script src="<queue>/queue/<slug>/embed.js" defer>, as the
// integration guide asks. It also serves a key visual for the header image.

import http from 'node:http';
import { freePort } from './harness.js';

const keyVisual = `<svg xmlns="http://www.w3.org/2000/svg" width="920" height="380" viewBox="0 0 920 380">
<defs>
<linearGradient id="sky" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#1b1447"/><stop offset="0.55" stop-color="#5b1f6e"/><stop offset="1" stop-color="#e4572e"/></linearGradient>
<radialGradient id="sun" cx="0.72" cy="0.62" r="0.35"><stop offset="0" stop-color="#ffd27a"/><stop offset="1" stop-color="#ffd27a" stop-opacity="0"/></radialGradient>
</defs>
<rect width="920" height="380" fill="url(#sky)"/>
<rect width="920" height="380" fill="url(#sun)"/>
<circle cx="662" cy="236" r="74" fill="#ffb347" opacity="0.9"/>
<path d="M0 300 L120 250 L230 286 L360 220 L470 278 L600 232 L720 290 L840 246 L920 272 L920 380 L0 380 Z" fill="#140f33" opacity="0.85"/>
<path d="M0 330 L160 300 L300 326 L460 292 L620 330 L780 304 L920 322 L920 380 L0 380 Z" fill="#0b0820"/>
<g fill="#fff" opacity="0.8"><circle cx="90" cy="60" r="1.6"/><circle cx="210" cy="110" r="1.2"/><circle cx="330" cy="48" r="1.4"/><circle cx="470" cy="90" r="1"/><circle cx="560" cy="40" r="1.5"/><circle cx="800" cy="70" r="1.2"/></g>
<text x="48" y="150" font-family="Helvetica, Arial, sans-serif" font-size="54" font-weight="700" fill="#fff">Summer Nights</text>
<text x="50" y="192" font-family="Helvetica, Arial, sans-serif" font-size="24" fill="#ffd9c2">Open Air · 14–16 August 2026</text>
</svg>`;

function page(title, body, embedSrc) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} – Sample Shop</title>
<script src="${embedSrc}" defer></script>
</head>
<body>
<header><a href="/">Sample Shop</a></header>
<main>${body}</main>
</body>
</html>`;
}

// startShop serves the sample shop on a free 127.0.0.1 port. embedSrc
// replaces the script tag's address; routes adds files ({path: {type, body}}).
export async function startShop({ queueBase, slug, embedSrc, routes = {} }) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  embedSrc = embedSrc || `${queueBase}/queue/${encodeURIComponent(slug)}/embed.js`;
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url, base);
    const html = (status, body) => {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(body);
    };
    if (pathname === '/') {
      return html(200, page('Home', '<h1 id="shop-title">Sample Shop</h1><p><a id="event-link" href="/event/42">Summer Nights Open Air</a></p>', embedSrc));
    }
    if (pathname === '/event/42') {
      return html(
        200,
        page(
          'Event 42',
          '<h1 id="shop-title">Summer Nights Open Air</h1><button id="buy" type="button">Buy tickets</button><p id="cart">0</p>' +
            '<script>document.addEventListener("DOMContentLoaded",function(){var n=0;document.getElementById("buy").onclick=function(){document.getElementById("cart").textContent=String(++n)}})</script>',
          embedSrc,
        ),
      );
    }
    if (routes[pathname]) {
      res.writeHead(200, { 'Content-Type': routes[pathname].type, 'Cache-Control': 'no-store' });
      return res.end(routes[pathname].body);
    }
    if (pathname === '/keyvisual.svg') {
      res.writeHead(200, { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=3600' });
      return res.end(keyVisual);
    }
    html(404, '<h1>Not found</h1>');
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    base,
    url: (p) => base + p,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
