/* The draw's part of the waiting page: while a committed draw is sealed it
   shows the commitment ("the draw is sealed: …") and keeps it, so that the
   check after the draw can tell whether the room kept to it; once the draw
   is made, "check the draw" fetches the reveal and the visitor's own
   status and recomputes the position in the browser with drawcheck.js,
   showing each step. Text reaches the page through textContent only. */
(function () {
  'use strict';

  var dataEl = document.getElementById('aq-room');
  var section = document.getElementById('aq-draw');
  if (!dataEl || !section || !window.AQDraw) return;
  var cfg = JSON.parse(dataEl.textContent);
  var t = cfg.i18n;
  var room = (cfg.base || location.origin) + '/queue/' + encodeURIComponent(cfg.slug);
  var keyTicket = 'aditus-queue:' + cfg.slug + ':ticket';
  var keyNoted = 'aditus-queue:' + cfg.slug + ':commitment';
  var POLL_MS = 5000;
  var TIMEOUT_MS = 10000;
  var checking = false;

  function load(key) {
    try {
      return sessionStorage.getItem(key);
    } catch (e) {
      return null;
    }
  }

  function save(key, value) {
    try {
      sessionStorage.setItem(key, value);
    } catch (e) {
      /* the check then compares with the commitment shown at the draw */
    }
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (m, k) {
      return k in values ? values[k] : m;
    });
  }

  function get(path) {
    var ctl = new AbortController();
    var timer = setTimeout(function () {
      ctl.abort();
    }, TIMEOUT_MS);
    return fetch(room + path, { headers: { Accept: 'application/json' }, cache: 'no-store', signal: ctl.signal })
      .then(function (res) {
        return res.json().then(function (body) {
          return { status: res.status, body: body };
        });
      })
      .finally(function () {
        clearTimeout(timer);
      });
  }

  function show(id, hidden) {
    document.getElementById(id).hidden = hidden;
  }

  function text(id, value) {
    document.getElementById(id).textContent = value;
  }

  // watch follows /info while the draw is pending; it stops once the draw
  // is made, or when the room has no committed draw.
  function watch() {
    get('/info')
      .then(function (r) {
        var d = r.status === 200 && r.body ? r.body.draw : null;
        if (!d) return;
        section.hidden = false;
        section.setAttribute('data-draw', d.state);
        var short = String(d.commitment).slice(0, 16);
        text('aq-draw-seal', fill(d.state === 'drawn' ? t.drawMade : t.drawSealed, { hash: short }));
        document.getElementById('aq-draw-seal').title = d.commitment;
        document.getElementById('aq-draw-link').href = room + '/info';
        if (d.state !== 'drawn') {
          if (!load(keyNoted)) save(keyNoted, d.commitment);
          setTimeout(watch, POLL_MS);
          return;
        }
        show('aq-draw-check', false);
      })
      .catch(function () {
        setTimeout(watch, POLL_MS * 2);
      });
  }

  async function check() {
    if (checking) return;
    checking = true;
    var list = document.getElementById('aq-draw-steps');
    while (list.firstChild) list.removeChild(list.firstChild);
    show('aq-draw-verdict', false);
    text('aq-draw-verdict', t.drawChecking);
    section.removeAttribute('data-verdict');
    try {
      var rev = await get('/draw');
      var ticket = load(keyTicket);
      var st = ticket ? await get('/status?ticket=' + encodeURIComponent(ticket)) : null;
      var number = st && st.status === 200 ? st.body.number : null;
      var told = st && st.status === 200 && typeof st.body.position === 'number' ? st.body.position : null;
      var res = rev.status === 200
        ? await window.AQDraw.check(rev.body, load(keyNoted), number, told)
        : { ok: false, steps: [{ name: 'reveal', ok: false, detail: 'GET /draw answered ' + rev.status }], position: null };
      res.steps.forEach(function (s) {
        var li = document.createElement('li');
        li.textContent = (s.ok ? (s.note ? '• ' : '✓ ') : '✗ ') + s.name + ': ' + s.detail;
        list.appendChild(li);
      });
      list.hidden = false;
      var verdict = res.position === null ? t.drawConsistent : fill(t.drawVerified, { position: String(res.position) });
      text('aq-draw-verdict', res.ok ? verdict : t.drawFailed);
      section.setAttribute('data-verdict', res.ok ? 'ok' : 'failed');
    } catch (e) {
      text('aq-draw-verdict', t.drawFailed);
      section.setAttribute('data-verdict', 'failed');
    } finally {
      checking = false;
    }
  }

  document.getElementById('aq-draw-check').addEventListener('click', check);
  watch();
})();
