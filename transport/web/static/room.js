/* The hosted waiting room: draws a waiting number once, keeps it across
   reloads, follows the room live over a WebSocket (polling as a fallback)
   and forwards the visitor with an admission token when it is their turn.
   Every value from the server reaches the page through textContent. */
(function () {
  'use strict';

  var dataEl = document.getElementById('aq-room');
  if (!dataEl) return;
  var cfg = JSON.parse(dataEl.textContent);
  var t = cfg.i18n;
  var room = (cfg.base || location.origin) + '/queue/' + encodeURIComponent(cfg.slug);
  var keyTicket = 'aditus-queue:' + cfg.slug + ':ticket';
  var keyStart = 'aditus-queue:' + cfg.slug + ':start';
  var REQUEST_TIMEOUT_MS = 10000;
  var PAUSED_RETRY_MS = 10000;
  var HEARTBEAT_MS = 60000;
  var TOKEN_RETRY_MS = 3000;
  var DRAW_GRACE_MS = 60000;
  var ANNOUNCE_EVERY_MS = 30000;
  var SILENT_SOCKET_MS = 20000;

  var card = document.getElementById('aq-card');
  var numbers = new Intl.NumberFormat(cfg.lang === 'de' ? 'de-DE' : 'en-GB');

  // S is the page's whole state; render() derives the view from it.
  var S = {
    phase: 'joining', // joining | verifying | waiting | admitted | forwarding | gone
    ticket: null,
    number: 0,
    position: 0, // place after a draw; 0 while unknown
    start: null, // serving when the number was drawn: where the progress bar starts
    answer: null, // last join/status answer: {serving, ahead, admitted, wait, at}
    line: null, // last room frame: {serving, rate, cap, serverTime}
    offset: null, // server clock minus local clock, ms
    opensAt: null, // ms, server clock
    drawn: false,
    paused: false,
    pausedMessage: '',
    trouble: false, // the last request or socket failed
    retryAfter: 5, // seconds between status polls
    tokenNotBefore: 0,
    positionAsked: false,
    shown: 0, // highest serving displayed, so the number never runs backwards
    announced: { text: '', at: 0 },
  };

  // ---- storage (sessionStorage may be unavailable: then the number lives
  // as long as the page) --------------------------------------------------

  function load(key) {
    try {
      return window.sessionStorage.getItem(key);
    } catch (e) {
      return null;
    }
  }

  function save(key, value) {
    try {
      window.sessionStorage.setItem(key, String(value));
    } catch (e) {
      /* private mode or quota: keep going without persistence */
    }
  }

  function forget() {
    try {
      window.sessionStorage.removeItem(keyTicket);
      window.sessionStorage.removeItem(keyStart);
    } catch (e) {
      /* nothing stored */
    }
    S.ticket = null;
    S.start = null;
    S.position = 0;
    S.positionAsked = false;
  }

  // ---- HTTP ---------------------------------------------------------------

  function call(method, path, body) {
    var ctrl = new AbortController();
    var timer = setTimeout(function () {
      ctrl.abort();
    }, REQUEST_TIMEOUT_MS);
    var init = { method: method, credentials: 'omit', cache: 'no-store', signal: ctrl.signal, headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(room + path, init)
      .then(function (res) {
        return res.text().then(function (text) {
          var json = null;
          try {
            json = text ? JSON.parse(text) : null;
          } catch (e) {
            json = null;
          }
          return {
            status: res.status,
            body: json && typeof json === 'object' ? json : {},
            retryAfter: Number(res.headers.get('Retry-After')) || 0,
          };
        });
      })
      .finally(function () {
        clearTimeout(timer);
      });
  }

  var failures = 0;
  function backoff() {
    failures = Math.min(failures + 1, 6);
    return Math.min(30000, 1000 * Math.pow(2, failures - 1)) * (0.8 + Math.random() * 0.4);
  }

  function num(v) {
    return typeof v === 'number' && isFinite(v) ? v : 0;
  }

  // ---- answers and frames -------------------------------------------------

  function applyAnswer(b) {
    var now = Date.now();
    if (typeof b.number === 'number') S.number = b.number;
    if (typeof b.position === 'number' && b.position > 0) S.position = b.position;
    S.answer = {
      serving: num(b.serving),
      ahead: typeof b.ahead === 'number' ? b.ahead : null,
      admitted: b.admitted === true,
      wait: typeof b.estimatedWaitSeconds === 'number' ? b.estimatedWaitSeconds : null,
      at: now,
    };
    if (typeof b.retryAfterSeconds === 'number' && b.retryAfterSeconds > 0) {
      S.retryAfter = Math.min(60, Math.max(2, b.retryAfterSeconds));
    }
    if ('opensAt' in b) S.opensAt = parseTime(b.opensAt);
    if (b.active === false) S.paused = true;
    else if (b.active === true) S.paused = false;
    if (S.line && !socketOpen) {
      // Polling while the socket is down: the answer is the fresher line.
      S.line.serving = Math.max(S.line.serving, S.answer.serving);
      S.line.serverTime = serverNow();
    }
    if (S.start === null) {
      S.start = S.answer.serving;
      save(keyStart, S.start);
    }
  }

  function onFrame(f) {
    if (!f || f.type !== 'room') return;
    var now = Date.now();
    if (typeof f.serverTime === 'number') {
      // Network delay only ever makes a frame look older, so the largest
      // offset seen is the best one; a much smaller one means the local
      // clock was changed.
      var off = f.serverTime - now;
      if (S.offset === null || off > S.offset || S.offset - off > 2000) S.offset = off;
    }
    S.line = {
      serving: num(f.serving),
      rate: num(f.rate),
      cap: typeof f.cap === 'number' ? f.cap : Infinity,
      serverTime: typeof f.serverTime === 'number' ? f.serverTime : serverNow(),
    };
    S.paused = f.paused === true || f.active === false;
    if (!S.paused) S.pausedMessage = '';
    if ('opensAt' in f) S.opensAt = parseTime(f.opensAt);
    S.drawn = f.drawn === true;
    // A stale frame: the node reaches no server of the queue for now.
    S.trouble = f.stale === true;
    if (S.drawn && !S.position && !S.positionAsked && S.ticket) {
      S.positionAsked = true;
      refresh();
    }
    tick();
  }

  function parseTime(v) {
    if (!v) return null;
    var ms = Date.parse(v);
    return isNaN(ms) ? null : ms;
  }

  function serverNow() {
    return Date.now() + (S.offset || 0);
  }

  // servingNow extrapolates the admission line between frames:
  // serving + rate × elapsed, never beyond cap, frozen while paused.
  function servingNow() {
    var L = S.line;
    if (!L) return S.answer ? S.answer.serving : 0;
    if (S.paused || !(L.rate > 0)) return Math.min(L.serving, L.cap);
    var elapsed = Math.max(0, serverNow() - L.serverTime);
    return Math.min(L.serving + (L.rate * elapsed) / 60000, L.cap);
  }

  function inPreQueue() {
    if (!S.opensAt || S.position || S.drawn) return false;
    return serverNow() < S.opensAt + DRAW_GRACE_MS;
  }

  // ---- joining --------------------------------------------------------------

  function adoptTicketFromURL() {
    var u;
    try {
      u = new URL(location.href);
    } catch (e) {
      return;
    }
    var ticket = u.searchParams.get('ticket');
    if (!ticket) return;
    if (ticket !== load(keyTicket)) {
      forget();
      save(keyTicket, ticket);
    }
    u.searchParams.delete('ticket');
    history.replaceState(history.state, '', u.pathname + u.search + u.hash);
  }

  var powFailures = 0;

  async function join(pow) {
    S.phase = pow || cfg.pow.enabled ? 'verifying' : 'joining';
    render();
    var r;
    try {
      r = await call('POST', '/join', pow ? { pow: pow } : {});
    } catch (e) {
      S.trouble = true;
      later(join, backoff());
      return;
    }
    S.trouble = false;
    if ((r.status === 200 || r.status === 201) && r.body.ticket) {
      failures = 0;
      powFailures = 0;
      forget();
      S.paused = false;
      S.ticket = r.body.ticket;
      save(keyTicket, S.ticket);
      applyAnswer(r.body);
      S.phase = 'waiting';
      connect();
      tick();
      return;
    }
    if (r.status === 428 && r.body.pow && r.body.pow.challenge) {
      if (pow && ++powFailures > 3) {
        powFailures = 0;
        S.trouble = true;
        later(join, PAUSED_RETRY_MS);
        return;
      }
      S.phase = 'verifying';
      render();
      var ch = r.body.pow;
      var nonce;
      try {
        nonce = await solve(ch.challenge, ch.bits);
      } catch (e) {
        S.trouble = true;
        later(join, PAUSED_RETRY_MS);
        return;
      }
      join({ challenge: ch.challenge, nonce: nonce });
      return;
    }
    if (r.status === 423) {
      showPaused(r.body.message);
      later(join, PAUSED_RETRY_MS);
      return;
    }
    if (r.status === 404) {
      S.phase = 'gone';
      render();
      return;
    }
    S.trouble = true;
    later(join, Math.max(backoff(), r.retryAfter * 1000));
  }

  // solve finds the proof of work in a worker, so the page stays smooth.
  function solve(challenge, bits) {
    return new Promise(function (resolve, reject) {
      var url = new URL(cfg.workerUrl, location.href);
      if (url.origin !== location.origin) url = new URL(url.pathname + url.search, location.href);
      var worker;
      try {
        worker = new Worker(url.toString());
      } catch (e) {
        reject(e);
        return;
      }
      var started = performance.now();
      var timer = setTimeout(function () {
        worker.terminate();
        reject(new Error('proof of work timed out'));
      }, 120000);
      worker.onmessage = function (e) {
        clearTimeout(timer);
        worker.terminate();
        if (e.data && typeof e.data.nonce === 'string') {
          card.setAttribute('data-pow-ms', String(Math.round(performance.now() - started)));
          resolve(e.data.nonce);
        } else {
          reject(new Error((e.data && e.data.error) || 'proof of work failed'));
        }
      };
      worker.onerror = function () {
        clearTimeout(timer);
        worker.terminate();
        reject(new Error('proof of work worker failed'));
      };
      worker.postMessage({ challenge: String(challenge), bits: Number(bits) || 0 });
    });
  }

  function showPaused(message) {
    S.paused = true;
    S.pausedMessage = typeof message === 'string' ? message : '';
    render();
  }

  function later(fn, ms) {
    render();
    setTimeout(fn, ms);
  }

  // ---- status, socket, heartbeat --------------------------------------------

  var refreshing = null;

  // refresh asks for the ticket's status once; a ticket the server does not
  // know (401, 404) is forgotten and a new number drawn.
  function refresh() {
    if (!refreshing) {
      refreshing = refreshOnce().finally(function () {
        refreshing = null;
      });
    }
    return refreshing;
  }

  async function refreshOnce() {
    if (!S.ticket) return 'invalid';
    var r;
    try {
      r = await call('GET', '/status?ticket=' + encodeURIComponent(S.ticket));
    } catch (e) {
      S.trouble = true;
      render();
      return 'error';
    }
    if (r.status === 200) {
      S.trouble = false;
      failures = 0;
      if (r.retryAfter > 0) S.retryAfter = Math.min(60, Math.max(2, r.retryAfter));
      applyAnswer(r.body);
      tick();
      return 'ok';
    }
    if (r.status === 401 || r.status === 404) {
      rejoin();
      return 'invalid';
    }
    if (r.status === 423) {
      showPaused(r.body.message);
      return 'ok';
    }
    S.trouble = true;
    render();
    return 'error';
  }

  function rejoin() {
    closeSocket();
    stopPolling();
    forget();
    S.answer = null;
    S.line = null;
    S.number = 0;
    S.shown = 0;
    join();
  }

  var socket = null;
  var socketOpen = false;
  var socketAttempts = 0;
  var socketTimer = 0;
  var lastFrameAt = 0;

  // The room pushes a frame at least every few seconds; an open socket that
  // stays silent (a proxy swallowing frames, a half-dead connection) is
  // dropped so that polling takes over.
  setInterval(function () {
    if (socketOpen && Date.now() - lastFrameAt > SILENT_SOCKET_MS && socket) socket.close();
  }, 5000);

  function connect() {
    if (socket || !S.ticket || S.phase === 'forwarding' || S.phase === 'gone') return;
    clearTimeout(socketTimer);
    var url = room.replace(/^http/, 'ws') + '/ws?ticket=' + encodeURIComponent(S.ticket);
    try {
      socket = new WebSocket(url);
    } catch (e) {
      socket = null;
      socketDown();
      return;
    }
    var s = socket;
    s.onopen = function () {
      if (s !== socket) return;
      socketOpen = true;
      lastFrameAt = Date.now();
      socketAttempts = 0;
      S.trouble = false;
      stopPolling();
    };
    s.onmessage = function (e) {
      if (s !== socket) return;
      lastFrameAt = Date.now();
      var f;
      try {
        f = JSON.parse(e.data);
      } catch (x) {
        return;
      }
      onFrame(f);
    };
    s.onclose = function () {
      if (s !== socket) return;
      socket = null;
      socketOpen = false;
      socketDown();
    };
  }

  function closeSocket() {
    clearTimeout(socketTimer);
    if (socket) {
      var s = socket;
      socket = null;
      socketOpen = false;
      s.close();
    }
  }

  // socketDown falls back to polling and tries the socket again later.
  function socketDown() {
    if (!S.ticket || S.phase === 'forwarding' || S.phase === 'gone') return;
    startPolling();
    var delay = Math.min(30000, 1000 * Math.pow(2, socketAttempts)) * (0.8 + Math.random() * 0.4);
    socketAttempts = Math.min(socketAttempts + 1, 5);
    clearTimeout(socketTimer);
    socketTimer = setTimeout(connect, delay);
  }

  var polling = false;
  var pollTimer = 0;

  function startPolling() {
    if (polling) return;
    polling = true;
    schedulePoll();
  }

  function stopPolling() {
    polling = false;
    clearTimeout(pollTimer);
  }

  function schedulePoll() {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(function () {
      if (!polling) return;
      refresh().then(function () {
        if (polling) schedulePoll();
      });
    }, S.retryAfter * 1000);
  }

  // The socket counts as presence; without it the page says it is still
  // here once a minute, for the room's abandon detection.
  setInterval(function () {
    if (socketOpen || !S.ticket || S.phase !== 'waiting') return;
    call('POST', '/heartbeat', { ticket: S.ticket }).catch(function () {
      /* presence is best effort */
    });
  }, HEARTBEAT_MS);

  // ---- admission ------------------------------------------------------------

  var claiming = false;

  async function claim() {
    if (claiming) return;
    claiming = true;
    S.phase = 'admitted';
    render();
    var r;
    try {
      r = await call('POST', '/token', { ticket: S.ticket });
    } catch (e) {
      claiming = false;
      S.trouble = true;
      S.phase = 'waiting';
      S.tokenNotBefore = Date.now() + TOKEN_RETRY_MS;
      render();
      return;
    }
    claiming = false;
    if (r.status === 200 && r.body.token) {
      forward(r.body);
      return;
    }
    S.phase = 'waiting';
    if (r.status === 401 || r.status === 404) {
      rejoin();
      return;
    }
    if (r.status === 423) {
      showPaused(r.body.message);
      S.tokenNotBefore = Date.now() + PAUSED_RETRY_MS;
      return;
    }
    // 425: not yet; the page ran slightly ahead of the room.
    if (S.answer) S.answer.admitted = false;
    S.tokenNotBefore = Date.now() + TOKEN_RETRY_MS;
    render();
  }

  function httpURL(s) {
    if (!s) return null;
    try {
      var u = new URL(s);
      return u.protocol === 'https:' || u.protocol === 'http:' ? u : null;
    } catch (e) {
      return null;
    }
  }

  function forward(grant) {
    var target = httpURL(cfg.returnUrl) || httpURL(grant.targetUrl);
    if (!target) {
      S.phase = 'admitted';
      render();
      return;
    }
    var param = new URLSearchParams({ aditus_queue_token: grant.token }).toString();
    target.search = target.search.length > 1 ? target.search + '&' + param : '?' + param;
    S.phase = 'forwarding';
    closeSocket();
    stopPolling();
    forget();
    render();
    location.replace(target.toString());
  }

  // ---- view -----------------------------------------------------------------

  function tick() {
    render();
    if (S.phase !== 'waiting' || S.paused || claiming || Date.now() < S.tokenNotBefore) return;
    if (admitted()) claim();
  }

  function myPlace() {
    return S.position || S.number;
  }

  function admitted() {
    var pos = myPlace();
    if (!pos || inPreQueue()) return false;
    if (S.answer && S.answer.admitted) return true;
    return pos <= Math.floor(servingNow());
  }

  var last = {};
  function setText(id, text) {
    if (last[id] === text) return;
    last[id] = text;
    var node = document.getElementById(id);
    if (node) node.textContent = text;
  }

  function setHidden(id, hidden) {
    var node = document.getElementById(id);
    if (node && node.hidden !== hidden) node.hidden = hidden;
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (m, k) {
      return k in values ? values[k] : m;
    });
  }

  function formatWait(seconds, ahead) {
    if (S.paused) return t.waitPaused;
    if (seconds === null || !isFinite(seconds)) return '–';
    if (ahead === 0 || seconds < 60) return t.waitUnderOne;
    var minutes = Math.round(seconds / 60);
    if (minutes <= 1) return t.waitOne;
    if (minutes < 60) return fill(t.waitMinutes, { n: numbers.format(minutes) });
    return fill(t.waitHours, { h: numbers.format(Math.floor(minutes / 60)), m: numbers.format(minutes % 60) });
  }

  function formatCountdown(ms) {
    var s = Math.max(0, Math.ceil(ms / 1000));
    var days = Math.floor(s / 86400);
    s -= days * 86400;
    var hh = Math.floor(s / 3600);
    var mm = Math.floor((s % 3600) / 60);
    var ss = s % 60;
    var clock = [hh, mm, ss]
      .map(function (n) {
        return n < 10 ? '0' + n : String(n);
      })
      .join(':');
    if (days === 0) return clock;
    return (days === 1 ? t.dayOne : fill(t.dayMany, { n: numbers.format(days) })) + ' ' + clock;
  }

  function stateText(pre) {
    switch (S.phase) {
      case 'gone':
        return t.gone;
      case 'forwarding':
        return t.forwarding;
      case 'admitted':
        return t.admitted;
      case 'verifying':
        return S.paused ? t.paused : t.verifying;
      case 'joining':
        return S.paused ? t.paused : t.joining;
    }
    if (S.paused) return t.paused;
    if (pre) return serverNow() < S.opensAt ? t.preQueue : t.drawing;
    return t.waiting;
  }

  function render() {
    var pre = inPreQueue();
    var pos = myPlace();
    var s = servingNow();
    S.shown = Math.max(S.shown, s);
    var shown = Math.floor(S.shown);
    var ahead = null;
    var wait = null;
    if (pos) {
      if (S.line) {
        ahead = Math.max(0, pos - shown - 1);
        wait = S.line.rate > 0 ? (ahead / S.line.rate) * 60 : null;
      } else if (S.answer) {
        ahead = S.answer.ahead !== null ? S.answer.ahead : Math.max(0, pos - shown - 1);
        wait = S.answer.wait !== null ? Math.max(0, S.answer.wait - (Date.now() - S.answer.at) / 1000) : null;
      }
      if (S.phase === 'admitted' || S.phase === 'forwarding') {
        ahead = 0;
        wait = 0;
      }
    }

    card.setAttribute('data-state', S.phase);
    if (S.paused) card.setAttribute('data-paused', '');
    else card.removeAttribute('data-paused');

    setText('aq-state', stateText(pre));

    // The room's own words on a pause come after the page's explanation:
    // they may be an operator's reason, in whatever language it was typed.
    var gone = S.phase === 'gone';
    var hasNumber = S.number > 0;
    var banner = '';
    var detail = '';
    if (gone) banner = t.gone;
    else if (S.paused) {
      banner = hasNumber ? t.pausedDefault : t.pausedJoin;
      detail = S.pausedMessage;
    } else if (S.trouble) banner = t.reconnecting;
    setText('aq-banner-text', banner);
    setText('aq-banner-detail', detail);
    setHidden('aq-banner-detail', detail === '');
    setHidden('aq-banner', banner === '');

    setHidden('aq-ticket', gone || (!hasNumber && S.paused));
    setText('aq-number', S.number ? numbers.format(S.number) : '–');
    setHidden('aq-position-row', !S.position);
    if (S.position) setText('aq-position', numbers.format(S.position));

    setHidden('aq-opening', !pre || gone);
    if (pre) setText('aq-countdown', formatCountdown(S.opensAt - serverNow()));

    setHidden('aq-progress-block', pre || gone || !hasNumber);
    setText('aq-ahead', ahead === null ? '–' : numbers.format(ahead));
    setText('aq-serving', shown > 0 ? t.numberPrefix + numbers.format(shown) : '–');
    setText('aq-wait', S.phase === 'admitted' || S.phase === 'forwarding' ? t.admitted : ahead === null ? '–' : formatWait(wait, ahead));

    var pct = 0;
    if (pos) {
      var from = S.start === null ? 0 : Math.min(S.start, pos - 1);
      pct = pos - from > 0 ? ((S.shown - from) / (pos - from)) * 100 : 100;
      if (S.phase === 'admitted' || S.phase === 'forwarding' || ahead === 0) pct = Math.max(pct, 100);
      pct = Math.max(0, Math.min(100, pct));
    }
    var rounded = String(Math.round(pct));
    var progress = document.getElementById('aq-progress');
    if (progress && progress.getAttribute('aria-valuenow') !== rounded) {
      progress.setAttribute('aria-valuenow', rounded);
      document.getElementById('aq-bar').style.width = pct.toFixed(1) + '%';
    }

    announce(pre, ahead, wait);
  }

  // announce reads the numbers to screen readers as one sentence, at most
  // every 30 s while they move (the visible figures change several times a
  // second and are not live regions). Changes of state are announced by the
  // status line (#aq-state, role=status).
  function announce(pre, ahead, wait) {
    if (S.phase !== 'waiting' || S.paused || pre || ahead === null) return;
    var text = fill(t.announce, { ahead: numbers.format(ahead), wait: formatWait(wait, ahead) });
    var now = Date.now();
    if (text === S.announced.text || now - S.announced.at < ANNOUNCE_EVERY_MS) return;
    S.announced = { text: text, at: now };
    setText('aq-announce', text);
  }

  // ---- start ----------------------------------------------------------------

  function begin() {
    adoptTicketFromURL();
    S.ticket = load(keyTicket);
    var start = load(keyStart);
    S.start = start !== null && isFinite(Number(start)) ? Number(start) : null;
    setInterval(tick, 250);
    document.addEventListener('visibilitychange', function () {
      if (document.visibilityState !== 'visible') return;
      tick();
      if (S.ticket && !socket && S.phase === 'waiting') connect();
    });
    if (!S.ticket) {
      join();
      return;
    }
    S.phase = 'waiting';
    render();
    resume();
  }

  async function resume() {
    var r = await refresh();
    if (r === 'invalid') return; // refresh has drawn a new number
    if (r === 'error') {
      later(resume, backoff());
      return;
    }
    connect();
  }

  begin();
})();
