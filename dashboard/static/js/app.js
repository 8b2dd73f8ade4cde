// app.js starts the console: sign-in, the header, the router (#/…) and the
// rooms overview with the instances panel.

import { h, clear, setText } from './dom.js';
import { t, lang, setLang, num } from './i18n.js';
import { call, info, token, setToken, isKey, onUnauthorized } from './api.js';
import { siteForm } from './form.js';
import { roomPage, roomState } from './room.js';
import { instancesPanel } from './instances.js';
import { loadTestsView, loadTestRunView } from './loadtests.js';
import { capacityRows, capacityPage } from './capacity.js';

const main = document.getElementById('app');
let stopView = () => {};
let pendingSecret = null;
// signingIn is set while a token is tried: its 401 belongs to the form.
let signingIn = false;

function header() {
  document.title = t('title');
  const signedIn = !!token();
  const out = document.getElementById('sign-out');
  out.hidden = !signedIn;
  out.textContent = t('signOut');
  setText(document.getElementById('who'), signedIn ? (isKey() ? t('asKey') : t('asAdmin')) : '');
  document.getElementById('lang-switch').textContent = t('langSwitch');
  const nav = document.getElementById('nav');
  if (signedIn && !isKey()) {
    clear(nav, h('a', { href: '#/' }, t('rooms')), h('a', { href: '#/loadtests', id: 'nav-loadtests' }, t('lt_title')));
  } else clear(nav);
}

function signInView() {
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const err = h('p', { class: 'bad', role: 'alert', id: 'sign-in-error' });
  const form = h('form', { class: 'sign-in panel', id: 'sign-in' },
    h('h1', {}, t('signIn')),
    h('p', { class: 'hint' }, t('signInHelp')),
    h('label', { for: 'token' }, t('tokenLabel')), input, err,
    h('button', { type: 'submit', class: 'primary' }, t('signIn')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    signingIn = true;
    try {
      await call('GET', '/sites');
      signingIn = false;
      route();
    } catch {
      signingIn = false;
      setToken('');
      err.textContent = t('signInFailed');
      header();
    }
  });
  clear(main, form);
  input.focus();
  return () => {};
}

function roomsView() {
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 5, class: 'empty' }, t('loading'))));
  const err = h('p', { class: 'bad', role: 'alert' });
  const head = h('div', { class: 'section-head' }, h('h1', {}, t('rooms')),
    isKey() ? null : h('a', { href: '#/new', class: 'button primary', id: 'new-room' }, t('newRoom')));
  const parts = [head, err, h('section', { class: 'panel' }, h('div', { class: 'scroll' }, h('table', { class: 'grid rooms', id: 'rooms' },
    h('thead', {}, h('tr', {}, h('th', {}, t('name')), h('th', {}, t('slug')), h('th', {}, t('state')), h('th', { class: 'num' }, t('waiting')), h('th', { class: 'num' }, t('rate')))),
    body)))];
  let panel = null;
  if (!isKey()) {
    panel = instancesPanel();
    parts.push(panel.el);
  }
  clear(main, ...parts);
  let timer = null;
  let stopped = false;
  async function tick() {
    try {
      const r = await call('GET', '/sites');
      const sites = r.sites || [];
      const infos = await Promise.all(sites.map((s) => info(s.slug).catch(() => null)));
      const capacity = isKey() ? [] : await capacityRows();
      err.textContent = '';
      if (sites.length + capacity.length === 0) clear(body, h('tr', {}, h('td', { colspan: 5, class: 'empty' }, t('noRooms'))));
      else {
        clear(body, sites.map((s, k) => {
          const st = roomState(s, infos[k]);
          return h('tr', { 'data-room': s.slug },
            h('td', {}, h('a', { href: `#/room/${encodeURIComponent(s.id)}/live` }, s.name)),
            h('td', { class: 'mono' }, s.slug),
            h('td', {}, h('span', { class: 'pill state', 'data-state': st }, t(`st_${st}`))),
            h('td', { class: 'num', 'data-col': 'waiting' }, infos[k] ? num(infos[k].waiting) : t('none')),
            h('td', { class: 'num' }, num(s.ratePerMinute, 1)));
        }), capacity);
      }
    } catch (e) {
      err.textContent = t('error', { msg: e.message });
    }
    if (!stopped) timer = setTimeout(tick, 3000);
  }
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
    if (panel) panel.stop();
  };
}

function newRoomView() {
  const f = siteForm(null, (res) => {
    pendingSecret = res.secret;
    location.hash = `#/room/${encodeURIComponent(res.site.id)}/integration`;
  });
  clear(main, h('div', { class: 'section-head' }, h('a', { href: '#/', class: 'back' }, `← ${t('back')}`), h('h1', {}, t('newRoom'))), f.form);
  return () => {};
}

async function route() {
  stopView();
  stopView = () => {};
  header();
  if (!token()) {
    stopView = signInView();
    return;
  }
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'room' && parts[1]) {
    const once = pendingSecret;
    pendingSecret = null;
    const hash = location.hash;
    const stop = await roomPage(main, parts[1], parts[2] || 'live', once);
    if (location.hash !== hash) stop();
    else stopView = stop;
    return;
  }
  if (parts[0] === 'capacity' && parts[1] && !isKey()) {
    stopView = capacityPage(main, parts[1]);
    return;
  }
  if (parts[0] === 'loadtests' && !isKey()) {
    stopView = parts[1] ? loadTestRunView(main, parts[1]) : loadTestsView(main);
    return;
  }
  if (parts[0] === 'new' && !isKey()) {
    stopView = newRoomView();
    return;
  }
  if (isKey()) {
    // A key reaches exactly one room: go straight to it.
    try {
      const r = await call('GET', '/sites');
      if (r.sites && r.sites.length === 1) {
        location.replace(`#/room/${encodeURIComponent(r.sites[0].id)}/live`);
        return;
      }
    } catch {
      return;
    }
  }
  stopView = roomsView();
}

onUnauthorized(() => {
  if (signingIn) return;
  setToken('');
  route();
});
document.getElementById('sign-out').addEventListener('click', () => {
  setToken('');
  location.hash = '#/';
  route();
});
document.getElementById('lang-switch').addEventListener('click', () => {
  setLang(lang() === 'de' ? 'en' : 'de');
  route();
});
document.documentElement.lang = lang();
window.addEventListener('hashchange', route);
route();
