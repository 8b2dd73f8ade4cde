/* aditus-queue: protects this shop page with its waiting room.
   Three checks on every page load: a valid pass -> nothing; a returning
   visitor's admission token -> verify it, store the pass, clean the address
   bar; no pass -> join silently while nobody waits, else go to the waiting
   room. It fails open: whenever the queue cannot answer within a few
   seconds, or answers anything unexpected, the page stays as it is. */
(function () {
  'use strict';
  var config = {{.Config}};
  var TOKEN_PARAM = 'aditus_queue_token';
  var TIMEOUT_MS = 3000;
  var DEFAULT_PASS_MS = 10 * 60 * 1000;
  var prefix = 'aditus-queue:' + config.slug + ':';
  var PASS_KEY = prefix + 'pass';
  var BOUNCE_KEY = prefix + 'bounces';
  var base = config.base;
  if (!base && document.currentScript) base = new URL(document.currentScript.src).origin;
  var room = base + '/queue/' + encodeURIComponent(config.slug);

  if (window[prefix + 'embed']) return; // the tag is on the page twice
  window[prefix + 'embed'] = true;

  function read(key) {
    try {
      return JSON.parse(window.sessionStorage.getItem(key));
    } catch (e) {
      return null;
    }
  }

  function write(key, value) {
    try {
      window.sessionStorage.setItem(key, JSON.stringify(value));
    } catch (e) {
      /* no storage: the visitor is checked again on the next page */
    }
  }

  function hasPass() {
    var pass = read(PASS_KEY);
    return !!pass && typeof pass.exp === 'number' && pass.exp > Date.now();
  }

  function storePass(exp) {
    write(PASS_KEY, { exp: exp });
  }

  // expiry reads verify's expiresAt: RFC 3339, or Unix seconds or ms.
  function expiry(v) {
    if (typeof v === 'number' && v > 0) return v < 1e12 ? v * 1000 : v;
    if (typeof v === 'string') {
      var ms = Date.parse(v);
      if (!isNaN(ms)) return ms;
    }
    return Date.now() + DEFAULT_PASS_MS;
  }

  // ask answers {status, body, retryAfter}; it rejects on network errors
  // and after TIMEOUT_MS, body reading included.
  function ask(method, path, body) {
    return call(room + path, method, body, TIMEOUT_MS);
  }

  // withoutToken is the current address minus the token parameter, every
  // other parameter kept exactly as written.
  function withoutToken() {
    return withoutParam(location.href, TOKEN_PARAM);
  }

  function cleanAddressBar() {
    history.replaceState(history.state, '', withoutToken());
  }

  // toRoom sends the visitor to the waiting room with this page as the
  // return URL. More than three trips within a minute mean something is
  // wrong between shop and queue (a clock, a secret): then the shop wins.
  function toRoom(ticket) {
    var now = Date.now();
    var trips = (read(BOUNCE_KEY) || []).filter(function (at) {
      return typeof at === 'number' && now - at < 60000;
    });
    if (trips.length >= 3) return;
    trips.push(now);
    write(BOUNCE_KEY, trips);
    var u = new URL(room);
    if (ticket) u.searchParams.set('ticket', ticket);
    u.searchParams.set('return', withoutToken());
    location.replace(u.toString());
  }

  function verify(token) {
    return ask('GET', '/verify?token=' + encodeURIComponent(token)).then(function (r) {
      if (r.status === 200 && r.body.valid === true) {
        storePass(expiry(r.body.expiresAt));
        cleanAddressBar();
      } else if (r.status === 401 || r.body.valid === false) {
        if (hasPass()) cleanAddressBar();
        else toRoom(null);
      }
    });
  }

  function join() {
    return ask('POST', '/join', {}).then(function (r) {
      if (r.status === 428) return toRoom(null); // proof of work happens in the waiting room
      if (r.status !== 200 && r.status !== 201) return; // 404, 423, 5xx: fail open
      if (!r.body.ticket) return;
      if (r.body.admitted === true) return admit(r.body.ticket);
      if (r.body.admitted === false) return toRoom(r.body.ticket);
    });
  }

  function admit(ticket) {
    return ask('POST', '/token', { ticket: ticket }).then(function (r) {
      if (r.status !== 200 || !r.body.token) return;
      var ttl = Number(r.body.expiresInSeconds);
      storePass(Date.now() + (ttl > 0 ? ttl * 1000 : DEFAULT_PASS_MS));
    });
  }

  function run() {
    var token = new URL(location.href).searchParams.get(TOKEN_PARAM);
    if (token) return verify(token);
    if (hasPass()) return;
    return join();
  }

  // call and withoutParam, shared with the waiting page (static/http.js):
{{.Shared}}
  try {
    var done = run();
    if (done && done.catch) {
      done.catch(function () {
        /* fail open */
      });
    }
  } catch (e) {
    /* fail open */
  }
})();
