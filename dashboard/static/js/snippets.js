// snippets.js renders a room's integration: the gateway link, the hosted
// page, the script tag, the edge snippets (nginx njs, Caddy, Cloudflare
// Worker, CloudFront) and the backend verification example, each filled in
// with the room's slug and this server's public URL.

import { h } from './dom.js';
import { t } from './i18n.js';
import { copyButton } from './dom.js';
import { seedSnippets } from './seed-snippets.js';

// publicURL is the base of the links the server hands out (--public-url),
// written into the page by the server.
export function publicURL() {
  const m = document.querySelector('meta[name="aq-public-url"]');
  return ((m && m.content) || location.origin).replace(/\/+$/, '');
}

// fill replaces the seed's placeholders for one room.
export function fill(text, s) {
  const shop = (s.domains && s.domains[0]) || 'shop.example.com';
  return text.replaceAll('__SLUG__', s.slug).replaceAll('__QUEUE__', `${publicURL()}/queue`).replaceAll('__SHOP__', shop);
}

function block(title, text, lang) {
  const pre = h('pre', { class: 'code', 'data-snippet': lang }, h('code', {}, text));
  return h('section', { class: 'snippet' },
    h('div', { class: 'snippet-head' }, h('h3', {}, title), copyButton(t('copy'), t('copied'), text, pre)),
    pre);
}

// integration answers the section of one room.
export function integration(s) {
  const base = `${publicURL()}/queue/${s.slug}`;
  return h('div', { class: 'integration' },
    block(t('intGateway'), `${base}/enter`, 'gateway'),
    block(t('intPage'), base, 'page'),
    block(t('intScript'), `<script src="${base}/embed.js" defer></script>`, 'script'),
    h('h2', {}, t('intEdge')),
    h('p', { class: 'hint' }, t('intSecretNote')),
    block('Nginx (njs)', fill(seedSnippets.nginx, s), 'nginx'),
    block('Caddyfile', fill(seedSnippets.caddy, s), 'caddy'),
    block('Cloudflare Worker', fill(seedSnippets.worker, s), 'worker'),
    block('AWS CloudFront (Lambda@Edge)', fill(seedSnippets.cloudfront, s), 'cloudfront'),
    h('h2', {}, t('intBackend')),
    block('verify.ts', fill(seedSnippets.verify, s), 'verify'));
}
