// events.js is a room's scheduled events: a timeline of the time they
// span, the list with add, edit and remove, and a preview of what a
// visitor meets at a chosen instant (GET …/preview?at=), computed by the
// server with the rules the room runs on.

import { h, clear, setText } from './dom.js';
import { t, num, when } from './i18n.js';
import { call, site, patchSite, ApiError } from './api.js';
import { localInput } from './form.js';

const MODES = ['queue', 'passthrough', 'soldOut', 'maintenance', 'queueAll'];
const MAX_EVENTS = 5;

const iso = (v) => (v ? new Date(v).toISOString() : undefined);
const ms = (s) => new Date(s).getTime();
const fromOf = (e) => e.prequeueFrom || e.startsAt;

// timeline draws events on one bar from the first pre-queue or start to
// the last end (a tenth more for the end modes): the pre-queue striped,
// the event itself in the accent colour, an end mode until the next event.
function timeline(events) {
  const bar = h('div', { class: 'timeline', id: 'event-timeline', role: 'list' });
  if (!events.length) return clear(bar, h('p', { class: 'hint' }, t('noEvents')));
  const lo = Math.min(...events.map((e) => ms(fromOf(e))));
  let hi = Math.max(...events.map((e) => ms(e.endsAt)));
  hi += (hi - lo) / 10 || 3600e3;
  const pct = (x) => `${((x - lo) / (hi - lo)) * 100}%`;
  const width = (a, b) => `${((b - a) / (hi - lo)) * 100}%`;
  const order = events.map((e, i) => [e, i]).sort((a, b) => ms(fromOf(a[0])) - ms(fromOf(b[0])));
  order.forEach(([e, i], k) => {
    const from = ms(fromOf(e));
    const block = h('div', { class: 'tl-event', role: 'listitem', 'data-index': i,
      title: `${e.name || `#${i + 1}`}: ${when(fromOf(e))} – ${when(e.endsAt)}` },
    e.prequeueFrom ? h('div', { class: 'tl-pre' }) : null,
    h('span', { class: 'tl-label' }, e.name || `#${i + 1}`));
    block.style.left = pct(from);
    block.style.width = width(from, ms(e.endsAt));
    if (e.prequeueFrom) block.firstChild.style.width = `${((ms(e.startsAt) - from) / (ms(e.endsAt) - from)) * 100}%`;
    bar.appendChild(block);
    if (e.endMode) {
      const next = order[k + 1] ? ms(fromOf(order[k + 1][0])) : hi;
      const after = h('div', { class: 'tl-after', 'data-mode': e.endMode, title: t(`mode_${e.endMode}`) }, t(`mode_${e.endMode}`));
      after.style.left = pct(ms(e.endsAt));
      after.style.width = width(ms(e.endsAt), next);
      bar.appendChild(after);
    }
  });
  return bar;
}

// modeSelect offers the modes, with "" for the room's own.
function modeSelect(id, value, none) {
  return h('select', { id, 'data-field': id.replace(/^ev-/, '') },
    h('option', { value: '' }, none), MODES.map((m) => h('option', { value: m, selected: m === value }, t(`mode_${m}`))));
}

// editor is the form of event e (index i, or events.length for a new one).
function editor(e, i, onSave, onCancel) {
  const field = (name, el) => h('div', { class: 'field' }, h('label', { for: el.id }, t(`ev_${name}`)), el,
    h('span', { class: 'field-error', 'data-error-for': name }));
  const inp = (name, type, value, extra = {}) => h('input', { id: `ev-${name}`, 'data-field': name, type, value: value ?? '', ...extra });
  const els = {
    name: inp('name', 'text', e.name, { maxlength: 100 }),
    prequeueFrom: inp('prequeueFrom', 'datetime-local', localInput(e.prequeueFrom)),
    startsAt: inp('startsAt', 'datetime-local', localInput(e.startsAt), { required: true }),
    endsAt: inp('endsAt', 'datetime-local', localInput(e.endsAt), { required: true }),
    ratePerMinute: inp('ratePerMinute', 'number', e.ratePerMinute, { min: 1, step: 'any' }),
    mode: modeSelect('ev-mode', e.mode, t('ownSetting')),
    message: h('textarea', { id: 'ev-message', 'data-field': 'message', rows: 2, value: e.message ?? '' }),
    powBits: inp('powBits', 'number', e.pow && e.pow.enabled ? e.pow.bits : '', { min: 8, max: 24 }),
    endMode: modeSelect('ev-endMode', e.endMode, t('ownSetting')),
  };
  const status = h('p', { class: 'form-status', role: 'status' });
  const form = h('form', { class: 'event-form panel', id: 'event-form', novalidate: true },
    h('h3', {}, i < 0 ? t('addEvent') : t('editEvent', { n: i + 1 })),
    Object.entries(els).map(([k, el]) => field(k, el)),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', id: 'event-save' }, t('save')),
      h('button', { type: 'button', onclick: onCancel }, t('cancel')), status));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    for (const s of form.querySelectorAll('.field-error')) s.textContent = '';
    const out = { startsAt: iso(els.startsAt.value), endsAt: iso(els.endsAt.value) };
    if (els.name.value.trim()) out.name = els.name.value.trim();
    if (els.prequeueFrom.value) out.prequeueFrom = iso(els.prequeueFrom.value);
    if (els.ratePerMinute.value !== '') out.ratePerMinute = Number(els.ratePerMinute.value);
    if (els.mode.value) out.mode = els.mode.value;
    if (els.message.value !== '') out.message = els.message.value;
    if (els.powBits.value !== '') out.pow = { enabled: true, bits: Number(els.powBits.value) };
    if (els.endMode.value) out.endMode = els.endMode.value;
    const err = await onSave(out);
    if (!err) return;
    const m = /^events\[(\d+)\]\.(\w+)/.exec(err.field || '');
    const name = m && m[2] === 'pow' ? 'powBits' : m && m[2];
    const slot = name && form.querySelector(`[data-error-for="${name}"]`);
    if (slot) slot.textContent = err.message;
    setText(status, t('error', { msg: err.message }));
  });
  return form;
}

// previewPanel asks the server what a visitor meets at a chosen instant.
function previewPanel(id) {
  const at = h('input', { id: 'preview-at', type: 'datetime-local', value: localInput(new Date().toISOString()), 'aria-label': t('previewAt') });
  const out = h('dl', { class: 'preview-out', id: 'preview-out' });
  const go = h('button', { type: 'button', id: 'preview-go' }, t('preview'));
  go.addEventListener('click', async () => {
    try {
      const p = await call('GET', `${site(id)}/preview?at=${encodeURIComponent(iso(at.value) || '')}`);
      const row = (k, v) => [h('dt', {}, t(k)), h('dd', { 'data-preview': k }, v)];
      clear(out,
        row('pvEvent', p.event === null ? t('ownSettings') : `${p.eventName || `#${p.event + 1}`} (${t(`stage_${p.stage}`)})`),
        row('mode', t(`mode_${p.mode}`)),
        row('pvRate', num(p.ratePerMinute, 1)),
        row('pvPreQueue', p.preQueue ? t('pvDrawAt', { at: when(p.opensAt) }) : t('none')),
        row('pvPow', p.pow.enabled ? t('pvBits', { n: p.pow.bits }) : t('none')),
        row('pvMessage', p.message || t('none')),
        row('pvNext', p.nextChange ? when(p.nextChange) : t('none')));
    } catch (err) {
      clear(out, h('p', { class: 'bad' }, t('error', { msg: err.message })));
    }
  });
  return h('section', { class: 'panel' }, h('h3', {}, t('previewTitle')),
    h('div', { class: 'inline-form' }, at, go), out);
}

// eventsView is the events tab of room s; onSaved receives the room as
// stored after each change.
export function eventsView(s, onSaved) {
  let events = structuredClone(s.events || []);
  const status = h('p', { class: 'form-status', role: 'status', id: 'events-status' });
  const top = h('div', {});
  const slot = h('div', {});

  // save writes list as the room's events over the room as it is now.
  const save = async (list) => {
    try {
      const saved = await patchSite(s.id, (b) => {
        b.events = list;
        // A room with events opens through their pre-queues: an opening
        // already past goes; a future one is the operator's to move.
        if (list.length && b.opensAt && new Date(b.opensAt) <= new Date()) b.opensAt = null;
      });
      events = structuredClone(saved.events || []);
      clear(slot);
      setText(status, t('saved'));
      render();
      onSaved(saved);
      return null;
    } catch (err) {
      if (err instanceof ApiError) return err;
      return { message: err.message };
    }
  };
  const edit = (i) => {
    const e = i < 0 ? {} : events[i];
    clear(slot, editor(e, i, (out) => {
      const list = structuredClone(events);
      if (i < 0) list.push(out);
      else list[i] = out;
      return save(list);
    }, () => clear(slot)));
  };
  function render() {
    const rows = events.map((e, i) => h('tr', { 'data-index': i },
      h('td', {}, e.name || `#${i + 1}`),
      h('td', {}, e.prequeueFrom ? when(e.prequeueFrom) : t('none')),
      h('td', {}, when(e.startsAt)), h('td', {}, when(e.endsAt)),
      h('td', {}, e.ratePerMinute ? num(e.ratePerMinute, 1) : t('ownSetting')),
      h('td', {}, e.mode ? t(`mode_${e.mode}`) : t('ownSetting')),
      h('td', {}, e.endMode ? t(`mode_${e.endMode}`) : t('ownSettings')),
      h('td', {}, h('button', { type: 'button', class: 'small', 'data-edit': i, onclick: () => edit(i) }, t('edit')), ' ',
        h('button', { type: 'button', class: 'small danger', 'data-remove': i, onclick: async () => {
          if (!confirm(t('confirmRemoveEvent', { name: e.name || `#${i + 1}` }))) return;
          const err = await save(events.filter((_, k) => k !== i));
          if (err) setText(status, t('error', { msg: err.message }));
        } }, t('remove')))));
    clear(top, timeline(events),
      events.length ? h('table', { class: 'event-list', id: 'event-list' },
        h('thead', {}, h('tr', {}, ['evName', 'ev_prequeueFrom', 'ev_startsAt', 'ev_endsAt', 'ev_ratePerMinute', 'ev_mode', 'ev_endMode', ''].map((k) => h('th', {}, k ? t(k) : '')))),
        h('tbody', {}, rows)) : null,
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'event-add', disabled: events.length >= MAX_EVENTS, onclick: () => edit(-1) }, t('addEvent')), status));
  }
  render();
  return h('div', { class: 'events-tab' }, h('section', { class: 'panel' }, h('h3', {}, t('eventsTitle')), h('p', { class: 'hint' }, t('eventsHint')), top, slot),
    previewPanel(s.id));
}
