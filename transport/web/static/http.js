/* http.js: how the waiting page and the shop-side embed.js talk to the
   queue, and how they take a parameter out of an address.

   One text for both: the page imports this file as an ES module; embed.js,
   a classic script on the shop's page, gets the same text with "export"
   removed (web.RenderEmbed). So this file holds only `export function`
   declarations at the start of a line: no imports, no other exports. */

// call sends one request and answers {status, body, retryAfter}: body is
// the JSON object answered ({} for anything else), retryAfter the
// Retry-After header in seconds (0 when absent). It rejects on network
// errors and after timeoutMs, body reading included. Credentials are never
// sent: the queue's answers depend only on the ticket or token in the call.
export function call(url, method, body, timeoutMs) {
  var ctrl = new AbortController();
  var timer = setTimeout(function () {
    ctrl.abort();
  }, timeoutMs);
  var init = { method: method, mode: 'cors', credentials: 'omit', cache: 'no-store', signal: ctrl.signal, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  return fetch(url, init)
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

// withoutParam answers the absolute address href without any parameter
// called name, every other parameter kept exactly as written (a shop's
// own encoding may matter to the shop).
export function withoutParam(href, name) {
  var u = new URL(href);
  if (u.search) {
    var kept = u.search
      .slice(1)
      .split('&')
      .filter(function (part) {
        var key = part.split('=')[0];
        try {
          key = decodeURIComponent(key.replace(/\+/g, ' '));
        } catch (e) {
          /* keep the raw key */
        }
        return key !== name;
      });
    u.search = kept.length ? '?' + kept.join('&') : '';
  }
  return u.toString();
}
