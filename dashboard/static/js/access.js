// access.js is a room's credentials (admin only): rotating the secret,
// API keys and bypass codes. Fresh values are shown once (once.js).

import { h, clear } from './dom.js';
import { t, num, when } from './i18n.js';
import { call, site } from './api.js';
import { onceBox } from './once.js';
import { publicURL } from './snippets.js';

// accessView answers the section of room s.
export function accessView(s) {
  const base = site(s.id);
  const notes = h('div', { class: 'once-slot' });
  const keyBody = h('tbody', {});
  const codeBody = h('tbody', {});
  const status = h('p', { class: 'form-status', role: 'status' });

  const fail = (err) => {
    status.textContent = t('error', { msg: err.message });
  };

  async function loadKeys() {
    const r = await call('GET', `${base}/keys`);
    const keys = r.keys || [];
    if (keys.length === 0) return clear(keyBody, h('tr', {}, h('td', { colspan: 3, class: 'empty' }, t('noKeys'))));
    clear(keyBody, keys.map((k) => h('tr', { 'data-key': k.id },
      h('td', {}, k.name), h('td', {}, when(k.createdAt)),
      h('td', { class: 'row-actions' }, h('button', {
        type: 'button', class: 'small danger',
        onclick: async () => {
          if (!confirm(t('confirmRevoke', { name: k.name }))) return;
          try {
            await call('DELETE', `${base}/keys/${encodeURIComponent(k.id)}`);
            await loadKeys();
          } catch (err) {
            fail(err);
          }
        },
      }, t('revoke'))))));
  }

  async function loadCodes() {
    const r = await call('GET', `${base}/bypass-codes`);
    const codes = r.codes || [];
    if (codes.length === 0) return clear(codeBody, h('tr', {}, h('td', { colspan: 5, class: 'empty' }, t('noCodes'))));
    clear(codeBody, codes.map((c) => h('tr', { 'data-code': c.id, class: c.disabled ? 'muted' : '' },
      h('td', {}, c.label), h('td', {}, `${num(c.uses)} / ${c.usageLimit == null ? t('unlimited') : num(c.usageLimit)}`),
      h('td', {}, c.expiresAt ? when(c.expiresAt) : t('never')), h('td', {}, c.disabled ? t('disabled') : t('enabled')),
      h('td', { class: 'row-actions' },
        h('button', {
          type: 'button', class: 'small',
          onclick: async () => {
            try {
              await call('PATCH', `${base}/bypass-codes/${encodeURIComponent(c.id)}`, { disabled: !c.disabled });
              await loadCodes();
            } catch (err) {
              fail(err);
            }
          },
        }, c.disabled ? t('enable') : t('disable')),
        h('button', {
          type: 'button', class: 'small danger',
          onclick: async () => {
            if (!confirm(t('confirmDeleteCode', { label: c.label }))) return;
            try {
              await call('DELETE', `${base}/bypass-codes/${encodeURIComponent(c.id)}`);
              await loadCodes();
            } catch (err) {
              fail(err);
            }
          },
        }, t('delete'))))));
  }

  const keyName = h('input', { id: 'key-name', type: 'text', required: true, maxlength: 100 });
  const keyForm = h('form', { class: 'inline-form' }, h('label', { for: 'key-name' }, t('keyName')), keyName,
    h('button', { type: 'submit', class: 'primary' }, t('createKey')));
  keyForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = '';
    try {
      const k = await call('POST', `${base}/keys`, { name: keyName.value.trim() });
      keyName.value = '';
      clear(notes, onceBox(`${t('keys')}: ${k.name}`, k.key));
      await loadKeys();
    } catch (err) {
      fail(err);
    }
  });

  const label = h('input', { id: 'code-label', type: 'text', required: true, maxlength: 200 });
  const limit = h('input', { id: 'code-limit', type: 'number', min: 1 });
  const expires = h('input', { id: 'code-expires', type: 'datetime-local' });
  const codeForm = h('form', { class: 'inline-form' },
    h('label', { for: 'code-label' }, t('codeLabel')), label,
    h('label', { for: 'code-limit' }, t('usageLimit')), limit,
    h('label', { for: 'code-expires' }, t('expiresAt')), expires,
    h('button', { type: 'submit', class: 'primary' }, t('createCode')));
  codeForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = '';
    const body = { label: label.value.trim() };
    if (limit.value) body.usageLimit = Number(limit.value);
    if (expires.value) body.expiresAt = new Date(expires.value).toISOString();
    try {
      const c = await call('POST', `${base}/bypass-codes`, body);
      label.value = limit.value = expires.value = '';
      const link = `${publicURL()}/queue/${s.slug}/enter?code=${encodeURIComponent(c.code)}`;
      clear(notes, onceBox(`${t('codes')}: ${c.label}`, c.code, [[t('codeLink'), link]]));
      await loadCodes();
    } catch (err) {
      fail(err);
    }
  });

  const rotate = h('button', { type: 'button', class: 'danger', id: 'rotate-secret' }, t('rotate'));
  rotate.addEventListener('click', async () => {
    if (!confirm(t('confirmRotate'))) return;
    try {
      const r = await call('POST', `${base}/secret`, {});
      clear(notes, onceBox(t('secretTitle'), r.secret));
    } catch (err) {
      fail(err);
    }
  });

  const el = h('div', { class: 'access' }, notes, status,
    h('section', { class: 'panel' }, h('h2', {}, t('secretTitle')), h('p', { class: 'hint' }, t('secretHelp')), rotate),
    h('section', { class: 'panel' }, h('h2', {}, t('keys')), h('p', { class: 'hint' }, t('keyHelp')), keyForm,
      h('table', { class: 'grid keys' }, h('thead', {}, h('tr', {}, h('th', {}, t('name')), h('th', {}, t('created')), h('th', {}, ''))), keyBody)),
    h('section', { class: 'panel' }, h('h2', {}, t('codes')), codeForm,
      h('table', { class: 'grid codes' }, h('thead', {}, h('tr', {}, h('th', {}, t('codeLabel')), h('th', {}, t('uses')), h('th', {}, t('expires')), h('th', {}, t('state')), h('th', {}, ''))), codeBody)));
  loadKeys().catch(fail);
  loadCodes().catch(fail);
  return el;
}

// auditView answers the audit log of room s.
export function auditView(s) {
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 4, class: 'empty' }, t('loading'))));
  call('GET', `${site(s.id)}/audit`).then((r) => {
    const list = (r.audit || []).slice().reverse();
    if (list.length === 0) return clear(body, h('tr', {}, h('td', { colspan: 4, class: 'empty' }, t('noAudit'))));
    clear(body, list.map((e) => h('tr', {}, h('td', {}, when(e.at)), h('td', {}, e.actor), h('td', {}, e.action),
      h('td', { class: 'mono wrap' }, typeof e.detail === 'string' ? e.detail : JSON.stringify(e.detail ?? '')))));
  }, (err) => clear(body, h('tr', {}, h('td', { colspan: 4 }, t('error', { msg: err.message })))));
  return h('section', { class: 'panel' }, h('h2', {}, t('audit')),
    h('div', { class: 'scroll' }, h('table', { class: 'grid audit' },
      h('thead', {}, h('tr', {}, h('th', {}, t('at')), h('th', {}, t('actor')), h('th', {}, t('action')), h('th', {}, t('detail')))), body)));
}
