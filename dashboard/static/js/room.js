// room.js is one room's page: its header with the state, the rate that can
// be changed at once and pause/resume, and the tabs (live dashboard,
// settings, keys & codes, audit log, integration). A key's session sees
// only what a key may do: no keys, codes, secret, audit or delete.

import { h, clear, setText } from './dom.js';
import { t, num } from './i18n.js';
import { call, site, isKey, patchSite, info } from './api.js';
import { siteForm, healthTest } from './form.js';
import { eventsView } from './events.js';
import { liveView } from './live.js';
import { accessView, auditView } from './access.js';
import { integration } from './snippets.js';
import { onceBox } from './once.js';

// roomState derives a room's state from its configuration and public
// info, for views without the live socket (which has the exact one, draws
// included).
export function roomState(s, i) {
  if (!s.active || (i && !i.active)) return 'paused';
  if (s.opensAt && new Date(s.opensAt) > new Date()) return 'prequeue';
  return i && i.waiting > 0 ? 'queueing' : 'not_queueing';
}

// showDraw shows the room's committed draw from /info: its state and
// commitment, and the reveal's address once it is made (docs/draw.md).
function showDraw(el, slug, i) {
  const d = i && i.draw;
  if (!d) return;
  const key = { sealed: 'drawSealed', closed: 'drawClosed', drawn: 'drawMade' }[d.state] || 'drawSealed';
  clear(el, t(key, { hash: d.commitment }), ' ',
    d.state === 'drawn' ? h('a', { href: `/queue/${encodeURIComponent(slug)}/draw`, target: '_blank', rel: 'noopener' }, t('drawReveal')) : null);
  el.dataset.state = d.state;
  el.hidden = false;
}

// MODES are the room's modes, as the API names them.
const MODES = ['queue', 'passthrough', 'soldOut', 'maintenance', 'queueAll'];

const TABS = [
  ['live', 'tabLive', false],
  ['settings', 'tabSettings', false],
  ['events', 'tabEvents', false],
  ['access', 'tabAccess', true],
  ['audit', 'tabAudit', true],
  ['integration', 'tabIntegration', false],
];

// roomPage renders room id with tab into main; once, when given, is a
// freshly created secret to show at the top. It answers a stop function.
export async function roomPage(main, id, tab, once) {
  clear(main, h('p', {}, t('loading')));
  let s;
  try {
    s = await call('GET', site(id));
  } catch (err) {
    clear(main, h('p', { class: 'bad' }, err.status === 404 || err.status === 403 ? t('notFound') : t('error', { msg: err.message })),
      h('a', { href: '#/' }, t('back')));
    return () => {};
  }
  const tabs = TABS.filter(([, , adminOnly]) => !(adminOnly && isKey()));
  if (!tabs.some(([k]) => k === tab)) tab = 'live';

  const statePill = h('span', { class: 'pill state', id: 'room-state' });
  // setState shows the room's state; a live frame also brings the rate
  // and pause button up to date when another operator (or the
  // self-regulating rate) changed them.
  // changedAt is when this page last changed the room: frames computed
  // before that change may still arrive and must not undo it on screen.
  let changedAt = 0;
  const setState = (st, f) => {
    if (f && Date.now() - changedAt < 3000) return;
    statePill.dataset.state = st;
    setText(statePill, t(`st_${st}`));
    if (!f) return;
    if (typeof f.ratePerMinute === 'number' && document.activeElement !== rate && Number(rate.value) !== f.ratePerMinute) {
      rate.value = f.ratePerMinute;
    }
    if (typeof f.mode === 'string' && f.mode !== s.mode && document.activeElement !== modeSel) {
      s.mode = f.mode;
      showMode();
    }
    if (typeof f.active === 'boolean' && f.active !== s.active) {
      s.active = f.active;
      pause.textContent = s.active ? t('pause') : t('resume');
      pause.className = s.active ? 'danger' : 'primary';
    }
  };
  setState(roomState(s, null));
  const drawLine = h('p', { class: 'draw-seal', id: 'room-draw', hidden: true });
  info(s.slug).then((i) => {
    if (tab !== 'live') setState(roomState(s, i));
    showDraw(drawLine, s.slug, i);
  }, () => {});
  const msg = h('span', { class: 'form-status', role: 'status', id: 'room-msg' });
  const rate = h('input', { id: 'rate-now', type: 'number', min: 1, step: 'any', value: s.ratePerMinute, 'aria-label': t('rateNow') });
  const rateForm = h('form', { class: 'inline-form rate-form' }, h('label', { for: 'rate-now' }, t('rateNow')), rate,
    h('button', { type: 'submit', class: 'primary', id: 'set-rate' }, t('setRate')));
  rateForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const n = Number(rate.value);
      changedAt = Date.now();
      s = await patchSite(id, (b) => {
        b.ratePerMinute = n;
      });
      setText(msg, t('rateSet', { n: num(s.ratePerMinute, 1) }));
    } catch (err) {
      setText(msg, t('error', { msg: err.message }));
    }
  });
  const pause = h('button', { type: 'button', id: 'pause-toggle', class: s.active ? 'danger' : 'primary' }, s.active ? t('pause') : t('resume'));
  pause.addEventListener('click', async () => {
    try {
      const to = !s.active;
      changedAt = Date.now();
      s = await patchSite(id, (b) => {
        b.active = to;
      });
      pause.textContent = s.active ? t('pause') : t('resume');
      pause.className = s.active ? 'danger' : 'primary';
      setText(msg, s.active ? t('resumed') : t('paused'));
      setState(roomState(s, null));
    } catch (err) {
      setText(msg, t('error', { msg: err.message }));
    }
  });

  // The mode switch: the disruptive modes ask first.
  const modeSel = h('select', { id: 'mode-select', 'aria-label': t('mode') },
    MODES.map((m) => h('option', { value: m }, t(`mode_${m}`))));
  const modePill = h('span', { class: 'pill mode', id: 'room-mode' });
  const showMode = () => {
    const m = s.mode || 'queue';
    modeSel.value = m;
    modePill.dataset.mode = m;
    modePill.hidden = m === 'queue';
    setText(modePill, t(`mode_${m}`));
  };
  showMode();
  modeSel.addEventListener('change', async () => {
    const to = modeSel.value;
    if (to !== 'queue' && !confirm(t(`confirmMode_${to}`, { name: s.name }))) {
      showMode();
      return;
    }
    try {
      changedAt = Date.now();
      s = await patchSite(id, (b) => {
        b.mode = to;
      });
      showMode();
      setText(msg, t('modeSet', { mode: t(`mode_${s.mode}`) }));
    } catch (err) {
      showMode();
      setText(msg, t('error', { msg: err.message }));
    }
  });
  const modeBox = h('label', { class: 'inline-form mode-form' }, t('mode'), modeSel);

  const nav = h('nav', { class: 'tabs', role: 'tablist' }, tabs.map(([k, label]) =>
    h('a', { href: `#/room/${encodeURIComponent(id)}/${k}`, role: 'tab', 'aria-selected': k === tab ? 'true' : 'false', 'data-tab': k }, t(label))));
  const body = h('div', { class: 'tab-body' });
  clear(main,
    h('div', { class: 'room-head' },
      h('div', { class: 'room-title' }, isKey() ? null : h('a', { href: '#/', class: 'back' }, `← ${t('back')}`),
        h('h1', {}, s.name), h('span', { class: 'mono slug' }, `/queue/${s.slug}`), statePill, modePill),
      h('div', { class: 'room-controls' }, rateForm, modeBox, pause, msg)),
    drawLine,
    once ? onceBox(t('secretTitle'), once) : null,
    nav, body);

  let stop = () => {};
  if (tab === 'live') {
    const v = liveView(s, setState);
    body.appendChild(v.el);
    stop = v.stop;
  } else if (tab === 'settings') {
    const f = siteForm(s, (saved) => {
      s = saved;
      rate.value = s.ratePerMinute;
      pause.textContent = s.active ? t('pause') : t('resume');
    });
    body.appendChild(f.form);
    healthTest(id, f.form);
    if (!isKey()) {
      body.appendChild(h('section', { class: 'panel danger-zone' }, h('button', {
        type: 'button', class: 'danger', id: 'delete-room',
        onclick: async () => {
          if (!confirm(t('confirmDelete', { name: s.name }))) return;
          try {
            await call('DELETE', site(id));
            location.hash = '#/';
          } catch (err) {
            setText(msg, t('error', { msg: err.message }));
          }
        },
      }, t('deleteRoom'))));
    }
  } else if (tab === 'events') {
    body.appendChild(eventsView(s, (saved) => {
      s = saved;
    }));
  } else if (tab === 'access') {
    body.appendChild(accessView(s));
  } else if (tab === 'audit') {
    body.appendChild(auditView(s));
  } else if (tab === 'integration') {
    body.appendChild(integration(s));
  }
  return stop;
}
