// form.js is the create/edit form of a waiting room: every field of the
// site (the SiteConfig schema of /api/openapi.json) including the
// self-regulating rate, proof of work that turns itself on and the
// per-address budget of new numbers. A 422 answer names the invalid field; the form
// shows its message next to that field.

import { h, clear } from './dom.js';
import { t } from './i18n.js';
import { call, site, version, ApiError } from './api.js';

// pageLanguages are the visitor page's languages (room.Languages).
const pageLanguages = ['de', 'en', 'es', 'fr', 'it', 'nl', 'pl', 'pt', 'tr', 'ar', 'ja'];

// groups lists the fields by section: [path, kind, extra].
const groups = [
  ['fGeneral', [
    ['slug', 'text', { createOnly: true, required: true, pattern: '[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?' }],
    ['name', 'text', { required: true }],
    ['targetUrl', 'url'],
    ['domains', 'lines'],
    ['active', 'checkbox'],
    ['test', 'checkbox'],
  ]],
  ['fAdmission', [
    ['ratePerMinute', 'number', { min: 1, step: 'any' }],
    ['burstSeconds', 'number', { min: 1, max: 60, step: 'any' }],
    ['tokenTtlSeconds', 'number', { min: 30, max: 86400 }],
    ['opensAt', 'datetime'],
  ]],
  ['fLook', [
    ['language', 'select', { options: ['', ...pageLanguages] }],
    ['message', 'textarea'],
    ['messages', 'texts'],
    ['headerImageUrl', 'url'],
    ['accentColor', 'text', { placeholder: '#0a63c9' }],
  ]],
  ['fProtection', [
    ['pow.enabled', 'checkbox'],
    ['pow.bits', 'number', { min: 8, max: 24 }],
    ['pow.auto', 'checkbox'],
    ['pow.autoFactor', 'number', { min: 1.5, max: 100, step: 'any' }],
    ['abandon.enabled', 'checkbox'],
    ['abandon.graceSeconds', 'number', { min: 60, max: 3600 }],
    ['allowBareNumber', 'checkbox'],
  ]],
  // An emptied field is sent as 0, which the server takes for its default.
  ['fBudget', [
    ['addressBudget.perMinute', 'number', { min: 1, max: 6000000, step: 'any' }],
    ['addressBudget.burst', 'number', { min: 1, max: 10000000, step: 1 }],
  ]],
  ['fAutoRate', [
    ['autoRate.enabled', 'checkbox'],
    ['autoRate.healthUrl', 'url'],
    ['autoRate.minRate', 'number', { min: 0, step: 'any' }],
    ['autoRate.maxRate', 'number', { min: 0, step: 'any' }],
    ['autoRate.intervalSeconds', 'number', { min: 5, max: 600 }],
    ['autoRate.raisePercent', 'number', { min: 0, step: 'any', placeholder: '5' }],
    ['autoRate.cutPercent', 'number', { min: 0, step: 'any', placeholder: '25' }],
    ['autoRate.maxFailures', 'number', { min: 1, placeholder: '3' }],
    ['autoRate.rules', 'rules'],
  ]],
  ['fModes', [
    ['soldOutMessage.en', 'textarea'],
    ['soldOutMessage.de', 'textarea'],
    ['soldOutMessage.texts', 'texts'],
    ['soldOutMessage.linkUrl', 'url'],
    ['maintenanceMessage.en', 'textarea'],
    ['maintenanceMessage.de', 'textarea'],
    ['maintenanceMessage.texts', 'texts'],
    ['waitingStatus', 'number', { min: 200, max: 429, placeholder: '200' }],
  ]],
];

const defaults = {
  active: true, ratePerMinute: 60, burstSeconds: 5, tokenTtlSeconds: 600, accentColor: '#0a63c9',
  pow: { enabled: false, bits: 15, auto: false, autoFactor: 4 }, abandon: { enabled: false, graceSeconds: 180 },
  autoRate: { enabled: false, rules: [] }, domains: [],
  addressBudget: { perMinute: 30, burst: 60 },
};

function get(obj, p) {
  return p.split('.').reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

function put(obj, p, v) {
  const ks = p.split('.');
  let o = obj;
  for (const k of ks.slice(0, -1)) {
    if (typeof o[k] !== 'object' || o[k] === null) o[k] = {};
    o = o[k];
  }
  o[ks[ks.length - 1]] = v;
}

const idOf = (p) => `f-${p.replace(/\./g, '-')}`;

// localInput turns an RFC 3339 time into a datetime-local value.
export function localInput(s) {
  if (!s) return '';
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function ruleRow(r) {
  const op = h('select', { class: 'rule-op', 'aria-label': t('ruleOp') },
    h('option', { value: '<' }, '<'), h('option', { value: '>' }, '>'));
  op.value = r.op || '<';
  const row = h('div', { class: 'rule' },
    h('input', { class: 'rule-metric', type: 'text', value: r.metric || '', placeholder: 'responseMs', 'aria-label': t('ruleMetric') }),
    op,
    h('input', { class: 'rule-value', type: 'number', step: 'any', value: r.value ?? '', 'aria-label': t('ruleValue') }),
    h('button', { type: 'button', class: 'small', onclick: () => row.remove() }, t('removeRule')));
  return row;
}

// textRow is one language's text of a per-language field.
function textRow(lang, text) {
  const pick = h('select', { class: 'text-lang', 'aria-label': t('textLang') },
    pageLanguages.map((l) => h('option', { value: l }, l)));
  pick.value = lang;
  const row = h('div', { class: 'text-row' },
    pick,
    h('textarea', { class: 'text-value', rows: 2, value: text || '', 'aria-label': t('textValue') }),
    h('button', { type: 'button', class: 'small', onclick: () => row.remove() }, t('removeRule')));
  return row;
}

function input(path, kind, extra, value) {
  const id = idOf(path);
  const common = { id, name: path, 'data-field': path };
  switch (kind) {
    case 'checkbox':
      return h('input', { ...common, type: 'checkbox', checked: !!value });
    case 'textarea':
      return h('textarea', { ...common, rows: 3, value: value || '' });
    case 'lines':
      return h('textarea', { ...common, rows: 2, value: (value || []).join('\n'), placeholder: 'shop.example.com' });
    case 'number':
      return h('input', { ...common, type: 'number', min: extra.min, max: extra.max, step: extra.step, placeholder: extra.placeholder, value: value ?? '' });
    case 'datetime':
      return h('input', { ...common, type: 'datetime-local', value: localInput(value) });
    case 'select': {
      const el = h('select', common, extra.options.map((o) => h('option', { value: o }, o || t('langAuto'))));
      el.value = value || '';
      return el;
    }
    case 'texts': {
      const list = h('div', { class: 'texts', id, 'data-field': path },
        Object.entries(value || {}).map(([l, text]) => textRow(l, text)));
      return h('div', {}, list,
        h('button', { type: 'button', class: 'small', onclick: () => list.appendChild(textRow('fr', '')) }, t('addText')));
    }
    case 'rules': {
      const list = h('div', { class: 'rules', id, 'data-field': path }, (value || []).map(ruleRow));
      return h('div', {}, list,
        h('button', { type: 'button', class: 'small', onclick: () => list.appendChild(ruleRow({ metric: 'responseMs', op: '<', value: 500 })) }, t('addRule')));
    }
    default:
      return h('input', { ...common, type: kind === 'url' ? 'url' : 'text', required: extra.required, pattern: extra.pattern, placeholder: extra.placeholder, value: value ?? '' });
  }
}

// siteForm builds the form. With current null it creates a room; onDone
// receives the API's answer. Extra buttons (the health test) are added by
// the room page through the returned object.
export function siteForm(current, onDone) {
  const creating = !current;
  const base = current || defaults;
  const form = h('form', { class: 'site-form', novalidate: true });
  const status = h('p', { class: 'form-status', role: 'status' });
  for (const [legend, fields] of groups) {
    const fs = h('fieldset', {}, h('legend', {}, t(legend)));
    for (const [path, kind, extra = {}] of fields) {
      if (extra.createOnly && !creating) continue;
      const el = input(path, kind, extra, get(base, path));
      const label = h('label', { for: idOf(path) }, t(`f_${path.replace(/\./g, '_')}`));
      const err = h('span', { class: 'field-error', 'data-error-for': path });
      fs.appendChild(h('div', { class: `field field-${kind}` }, kind === 'checkbox' ? [el, label] : [label, el], err));
    }
    form.appendChild(fs);
  }
  const submit = h('button', { type: 'submit', class: 'primary' }, creating ? t('create') : t('save'));
  form.appendChild(h('div', { class: 'actions' }, submit, status));

  function collect() {
    const out = creating ? structuredClone(defaults) : structuredClone(current);
    for (const [, fields] of groups) {
      for (const [path, kind, extra = {}] of fields) {
        if (extra.createOnly && !creating) continue;
        const el = form.querySelector(`#${idOf(path)}`);
        let v;
        if (kind === 'checkbox') v = el.checked;
        else if (kind === 'number') v = el.value === '' ? (extra.placeholder ? undefined : 0) : Number(el.value);
        else if (kind === 'lines') v = el.value.split(/[\s,]+/).filter(Boolean);
        else if (kind === 'datetime') v = el.value ? new Date(el.value).toISOString() : null;
        else if (kind === 'rules') {
          v = [...el.querySelectorAll('.rule')].map((r) => ({
            metric: r.querySelector('.rule-metric').value.trim(),
            op: r.querySelector('.rule-op').value,
            value: Number(r.querySelector('.rule-value').value),
          }));
        } else if (kind === 'texts') {
          v = {};
          for (const r of el.querySelectorAll('.text-row')) {
            const text = r.querySelector('.text-value').value;
            if (text.trim()) v[r.querySelector('.text-lang').value] = text;
          }
        } else v = el.value;
        put(out, path, v);
      }
    }
    return out;
  }

  function clearErrors() {
    for (const e of form.querySelectorAll('.field-error')) e.textContent = '';
    for (const e of form.querySelectorAll('.invalid')) e.classList.remove('invalid');
  }

  // showError puts the server's message next to the field it names
  // ("pow.bits", "autoRate.rules[1]", …); unknown fields go to the status line.
  function showError(err) {
    const field = (err.field || '').replace(/\[\d+\]$/, '');
    const slot = field && form.querySelector(`[data-error-for="${CSS.escape(field)}"]`);
    if (slot) {
      slot.textContent = err.message;
      const el = form.querySelector(`[data-field="${CSS.escape(field)}"]`);
      if (el) {
        el.classList.add('invalid');
        el.focus();
      }
      status.textContent = t('fixField');
    } else {
      status.textContent = t('error', { msg: err.message });
    }
  }

  // stale tells the operator that the room changed since the form was
  // read (a mode switch, the rate, another operator): nothing was saved,
  // and the form can be loaded again with the room as it is now.
  function stale() {
    clear(status, t('staleForm'), ' ',
      h('button', { type: 'button', class: 'small', id: 'reload-form', onclick: () => location.reload() }, t('reloadForm')));
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors();
    status.textContent = '';
    submit.disabled = true;
    try {
      const body = collect();
      let res;
      if (creating) res = await call('POST', '/sites', body);
      else {
        const { id, slug, createdAt, updatedAt, ...rest } = body;
        res = await call('PATCH', site(current.id), rest, version(current));
        current = res; // the next save is over this version
      }
      status.textContent = t('saved');
      onDone(res);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) stale();
      else if (err instanceof ApiError) showError(err);
      else status.textContent = t('error', { msg: err.message });
    } finally {
      submit.disabled = false;
    }
  });
  return { form, collect, status };
}

// healthTest is the button that calls the health-check test for a room
// and shows each rule with its observed value.
export function healthTest(id, form) {
  const out = h('div', { class: 'health-result', role: 'status' });
  const btn = h('button', { type: 'button', class: 'small' }, t('healthTest'));
  btn.addEventListener('click', async () => {
    clear(out, t('loading'));
    try {
      const r = await call('POST', `${site(id)}/health-check/test`, {});
      const head = r.ok
        ? t('healthOk', { status: r.status, ms: Math.round(r.responseMs) })
        : t('healthBad', { why: r.error || `HTTP ${r.status}` });
      clear(out, h('p', { class: r.ok ? 'ok' : 'bad' }, head),
        h('ul', {}, (r.rules || []).map((x) => h('li', { class: x.passed ? 'ok' : 'bad' },
          `${x.metric} ${x.op} ${x.value} — ${t('observed')} ${x.observed ?? t('none')}: ${x.passed ? t('passed') : t('failed')}`))));
    } catch (err) {
      clear(out, err.status === 404 || err.status === 405 ? t('healthUnavailable') : t('error', { msg: err.message }));
    }
  });
  const slot = form.querySelector('[data-error-for="autoRate.healthUrl"]');
  slot.parentElement.appendChild(h('div', { class: 'health-test' }, btn, h('span', { class: 'hint' }, t('healthHint')), out));
}
