// draw.js: the draw's part of the waiting page. While a committed draw is
// sealed it shows the commitment ("the draw is sealed: …") and keeps it,
// so that the check after the draw can tell whether the room kept to it;
// once the draw is made, "check the draw" fetches the reveal and the
// visitor's own status and recomputes the position in the browser with
// drawcheck.js, showing each step. Text reaches the page through
// textContent only.

import { call } from './http.js';
import { check } from './drawcheck.js';

const POLL_MS = 5000;
const TIMEOUT_MS = 10000;

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));
}

// drawPanel runs the panel of the room at base (…/queue/<slug>) with the
// page's configuration cfg; it does nothing on a page without the panel.
export function drawPanel(cfg, base) {
  const section = document.getElementById('aq-draw');
  if (!section) return;
  const t = cfg.i18n;
  const keyTicket = 'aditus-queue:' + cfg.slug + ':ticket';
  const keyNoted = 'aditus-queue:' + cfg.slug + ':commitment';
  const get = (path) => call(base + path, 'GET', undefined, TIMEOUT_MS);
  const el = (id) => document.getElementById(id);
  let checking = false;

  const load = (key) => {
    try {
      return sessionStorage.getItem(key);
    } catch (e) {
      return null;
    }
  };
  const save = (key, value) => {
    try {
      sessionStorage.setItem(key, value);
    } catch (e) {
      // the check then compares with the commitment shown at the draw
    }
  };

  // watch follows /info while the draw is pending; it stops once the draw
  // is made, or when the room has no committed draw.
  function watch() {
    get('/info').then(
      (r) => {
        const d = r.status === 200 ? r.body.draw : null;
        if (!d) return;
        section.hidden = false;
        section.setAttribute('data-draw', d.state);
        el('aq-draw-seal').textContent = fill(d.state === 'drawn' ? t.drawMade : t.drawSealed, { hash: String(d.commitment).slice(0, 16) });
        el('aq-draw-seal').title = d.commitment;
        el('aq-draw-link').href = base + '/info';
        if (d.state !== 'drawn') {
          if (!load(keyNoted)) save(keyNoted, d.commitment);
          setTimeout(watch, POLL_MS);
          return;
        }
        el('aq-draw-check').hidden = false;
      },
      () => setTimeout(watch, POLL_MS * 2),
    );
  }

  async function run() {
    if (checking) return;
    checking = true;
    const list = el('aq-draw-steps');
    list.replaceChildren();
    el('aq-draw-verdict').hidden = false;
    el('aq-draw-verdict').textContent = t.drawChecking;
    section.removeAttribute('data-verdict');
    try {
      const rev = await get('/draw');
      const ticket = load(keyTicket);
      const st = ticket ? await get('/status?ticket=' + encodeURIComponent(ticket)) : null;
      const number = st && st.status === 200 ? st.body.number : null;
      const told = st && st.status === 200 && typeof st.body.position === 'number' ? st.body.position : null;
      const res =
        rev.status === 200
          ? await check(rev.body, load(keyNoted), number, told)
          : { ok: false, steps: [{ name: 'reveal', ok: false, detail: 'GET /draw answered ' + rev.status }], position: null };
      for (const s of res.steps) {
        const li = document.createElement('li');
        li.textContent = (s.ok ? (s.note ? '• ' : '✓ ') : '✗ ') + s.name + ': ' + s.detail;
        list.appendChild(li);
      }
      list.hidden = false;
      const verdict = res.position === null ? t.drawConsistent : fill(t.drawVerified, { position: String(res.position) });
      el('aq-draw-verdict').textContent = res.ok ? verdict : t.drawFailed;
      section.setAttribute('data-verdict', res.ok ? 'ok' : 'failed');
    } catch (e) {
      el('aq-draw-verdict').textContent = t.drawFailed;
      section.setAttribute('data-verdict', 'failed');
    } finally {
      checking = false;
    }
  }

  el('aq-draw-check').addEventListener('click', run);
  watch();
}
