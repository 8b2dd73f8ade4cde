// capacity.js is the console's view of capacity rooms (declared in the
// proxies' HCL file): their rows in the rooms list, and a room's page with
// its live gauges (the room's live socket, one frame a second), the proxy
// nodes reporting it, the settings an operator changes at runtime (shown
// beside the file's values) and the changes made so far.

import { h, clear, setText } from './dom.js';
import { t, num, when } from './i18n.js';
import { call, ApiError } from './api.js';
import { LiveSocket, gauge } from './live.js';

const path = (id) => `/capacity/${encodeURIComponent(id)}`;

// capacityRows answers the list's rows of capacity rooms, marked as such;
// none when the server has no capacity rooms (or is older).
export async function capacityRows() {
  let r;
  try {
    r = await call('GET', '/capacity');
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 403)) return [];
    throw err;
  }
  return (r.rooms || []).map((c) => h('tr', { 'data-capacity': c.id },
    h('td', {}, h('a', { href: `#/capacity/${encodeURIComponent(c.id)}` }, `${c.host}${c.name}`)),
    h('td', { class: 'mono' }, t('none')),
    h('td', {}, h('span', { class: 'pill kind', 'data-kind': 'capacity' }, t('cap_kind'))),
    h('td', { class: 'num' }, t('none')),
    h('td', { class: 'num' }, t('none'))));
}

// secondsOf turns a Go duration (nanoseconds) into seconds.
const secondsOf = (ns) => Math.round(ns / 1e9);

function field(id, label, input, file) {
  return h('div', { class: 'field' }, h('label', { for: id }, label), input,
    h('span', { class: 'hint', id: `${id}-file` }, file));
}

// changeOf is the change the form's inputs make to state: every field
// the form shows, the proof of work and the budget only when changed.
function changeOf(inp, state) {
  const s = state.settings;
  const change = { version: state.runtime.version, active: Number(inp.active.value), paused: inp.paused.checked, open: inp.open.checked };
  const pm = Number(inp.powPerMinute.value);
  const bits = Number(inp.powBits.value);
  const maxBits = Number(inp.powMaxBits.value);
  if (pm !== (s.pow?.perMinute || 0) || bits !== (s.pow?.bits || 0) || maxBits !== (s.pow?.maxBits || 0)) {
    change.pow = pm > 0 ? { perMinute: pm, bits, maxBits } : { perMinute: 0, bits: 0 };
  }
  const bpm = Number(inp.budgetPerMinute.value);
  const burst = Number(inp.budgetBurst.value);
  const budgetGiven = inp.budgetPerMinute.value !== '' && inp.budgetBurst.value !== '';
  if (budgetGiven && (bpm !== s.addressBudget?.perMinute || burst !== s.addressBudget?.burst)) change.addressBudget = { perMinute: bpm, burst };
  return change;
}

// showState puts state st in the inputs, and beside each the file's value
// where the runtime changed it.
function showState(inp, files, st) {
  const s = st.settings;
  const f = st.file;
  inp.active.value = s.active;
  inp.paused.checked = !!st.runtime.paused;
  inp.open.checked = !!st.runtime.open;
  inp.powPerMinute.value = s.pow?.perMinute || 0;
  inp.powBits.value = s.pow?.bits || 0;
  inp.powMaxBits.value = s.pow?.maxBits || 0;
  inp.budgetPerMinute.value = s.addressBudget?.perMinute ?? '';
  inp.budgetBurst.value = s.addressBudget?.burst ?? '';
  const differs = new Set(st.differs || []);
  const note = (key, diff, text) => {
    setText(files[key].hint, diff ? t('cap_differs', { v: text }) : t('cap_asFile'));
    files[key].hint.classList.toggle('differs', diff);
    files[key].hint.parentElement.toggleAttribute('data-differs', diff);
    if (files[key].reset) files[key].reset.hidden = !diff;
  };
  note('active', differs.has('active'), num(f.active));
  note('paused', differs.has('paused'), t('cap_no'));
  note('open', differs.has('open'), t('cap_no'));
  note('powPerMinute', differs.has('pow'), num(f.pow?.perMinute || 0));
  note('powBits', differs.has('pow'), num(f.pow?.bits || 0));
  note('powMaxBits', differs.has('pow'), num(f.pow?.maxBits || 0));
  note('budgetPerMinute', differs.has('addressBudget'), num(f.addressBudget?.perMinute));
  note('budgetBurst', differs.has('addressBudget'), num(f.addressBudget?.burst));
}

// settingsForm is the form of the runtime settings; fill() shows a state,
// onSave sends a change and answers the state after it, reread reads the
// room again.
function settingsForm(onSave, reread) {
  const inp = {
    active: h('input', { id: 'cap-active', type: 'number', min: 1, max: 10000000, step: 1, required: true }),
    paused: h('input', { id: 'cap-paused', type: 'checkbox' }),
    open: h('input', { id: 'cap-open', type: 'checkbox' }),
    powPerMinute: h('input', { id: 'cap-pow-per-minute', type: 'number', min: 0, step: 'any' }),
    powBits: h('input', { id: 'cap-pow-bits', type: 'number', min: 0, max: 24, step: 1 }),
    powMaxBits: h('input', { id: 'cap-pow-max-bits', type: 'number', min: 0, max: 24, step: 1 }),
    budgetPerMinute: h('input', { id: 'cap-budget-per-minute', type: 'number', min: 1, step: 'any' }),
    budgetBurst: h('input', { id: 'cap-budget-burst', type: 'number', min: 1, step: 1 }),
  };
  const msg = h('p', { role: 'status', id: 'cap-save-status' });
  const files = {};
  let state = null;
  let dirty = false;
  // row is the field of input key; group, when given, is the setting
  // (one of the API's reset names) that its button puts back to the
  // file's value, shown while the setting differs from the file.
  const row = (key, label, group) => {
    const f = field(inp[key].id, label, inp[key], '');
    files[key] = { hint: f.lastChild };
    if (group) {
      const b = h('button', { type: 'button', class: 'small reset', id: `${inp[key].id}-reset`, hidden: '',
        'aria-label': `${t('cap_reset')}: ${label}` }, t('cap_reset'));
      b.addEventListener('click', () => send({ version: state.runtime.version, reset: [group] }));
      files[key].reset = b;
      f.append(b);
    }
    return f;
  };
  const form = h('form', { class: 'panel cap-settings', id: 'cap-settings' }, h('h2', {}, t('cap_settings')),
    h('p', { class: 'hint' }, t('cap_settingsHint')),
    row('active', t('cap_active'), 'active'), row('paused', t('cap_paused'), 'paused'), row('open', t('cap_open'), 'open'),
    row('powPerMinute', t('cap_powPerMinute'), 'pow'), row('powBits', t('cap_powBits')), row('powMaxBits', t('cap_powMaxBits')),
    row('budgetPerMinute', t('cap_budgetPerMinute'), 'addressBudget'), row('budgetBurst', t('cap_budgetBurst')),
    h('button', { type: 'submit', class: 'primary', id: 'cap-save' }, t('cap_save')), msg);
  // While the operator types, the form keeps the version it showed: a
  // save over a change made meanwhile is refused (409), not written over it.
  function fill(st, force) {
    if (dirty && !force) return;
    dirty = false;
    state = st;
    showState(inp, files, st);
  }
  form.addEventListener('input', () => { dirty = true; });
  // send saves change and shows the room after it, or why it was refused.
  async function send(change) {
    msg.className = '';
    setText(msg, t('cap_saving'));
    try {
      fill(await onSave(change), true);
      setText(msg, t('cap_saved'));
    } catch (err) {
      msg.className = 'bad';
      setText(msg, err.status === 409 ? t('cap_stale') : t('error', { msg: err.field ? `${err.field}: ${err.message}` : err.message }));
      if (err.status === 409) fill(await reread(), true);
    }
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    send(changeOf(inp, state));
  });
  return { form, fill };
}

// nodesTable shows the proxy nodes reporting the room.
function nodesTable() {
  const body = h('tbody', {});
  const el = h('section', { class: 'panel', id: 'cap-nodes' }, h('h2', {}, t('cap_nodes')),
    h('div', { class: 'scroll' }, h('table', { class: 'grid' }, h('thead', {}, h('tr', {},
      h('th', {}, t('iId')), h('th', { class: 'num' }, t('cap_refusals')), h('th', { class: 'num' }, t('cap_challenges')),
      h('th', { class: 'num' }, t('cap_pow')), h('th', {}, t('iReported')))), body)));
  return {
    el,
    fill(nodes) {
      if (!nodes.length) clear(body, h('tr', {}, h('td', { colspan: 5, class: 'empty' }, t('cap_noNodes'))));
      else clear(body, nodes.map((n) => h('tr', { 'data-node': n.node }, h('td', { class: 'mono' }, n.node,
        n.fileDiffers ? [' ', h('span', { class: 'pill', 'data-file-differs': '' }, t('cap_fileDiffers'))] : null),
        h('td', { class: 'num' }, num(n.refusals)), h('td', { class: 'num' }, num(n.challenges)), h('td', { class: 'num' }, num(n.pow)),
        h('td', {}, when(new Date(n.at / 1e6).toISOString())))));
    },
  };
}

function auditList() {
  const list = h('ol', { class: 'audit', id: 'cap-audit' });
  const el = h('section', { class: 'panel' }, h('h2', {}, t('cap_audit')), list);
  return {
    el,
    fill(entries) {
      if (!entries.length) clear(list, h('li', { class: 'empty' }, t('cap_noChanges')));
      else clear(list, entries.slice().reverse().map((a) => h('li', {}, `${when(new Date(a.at / 1e6).toISOString())} · ${a.actor} · `,
        h('span', { class: 'mono' }, JSON.stringify({ ...a.runtime })))));
    },
  };
}

// capacityPage shows capacity room id in main; it answers a stop function.
export function capacityPage(main, id) {
  const title = h('h1', {}, t('loading'));
  const status = h('span', { class: 'pill conn', 'data-conn': 'connecting' }, t('connecting'));
  const err = h('p', { class: 'bad', role: 'alert' });
  const g = {
    inside: gauge('cap_gInside'), waiting: gauge('cap_gWaiting'), provisional: gauge('cap_gProvisional'),
    admitted: gauge('cap_gAdmitted'), expired: gauge('cap_gExpired'), pow: gauge('cap_gPow'), refusals: gauge('cap_gRefusals'),
  };
  const nodes = nodesTable();
  const audit = auditList();
  const settings = settingsForm(async (change) => call('PATCH', path(id), change), () => call('GET', path(id)));
  clear(main, h('div', { class: 'section-head' }, h('a', { href: '#/', class: 'back' }, `← ${t('back')}`), title,
    h('span', { class: 'pill kind', 'data-kind': 'capacity' }, t('cap_kind')), status), err,
  h('section', { class: 'gauges', id: 'cap-gauges' }, Object.values(g).map((x) => x.el)), nodes.el, settings.form, audit.el);
  function show(st) {
    setText(title, `${st.host}${st.name}`);
    const a = st.settings.active;
    g.inside.set(`${num(st.inside)} / ${num(a)}`, st.inside / a, st.runtime.paused ? t('cap_isPaused') : st.runtime.open ? t('cap_isOpen') : '', st.inside > a);
    g.waiting.set(num(st.waiting), 0, '');
    g.provisional.set(num(st.provisional), 0, '');
    g.admitted.set(num(st.admittedPerMinute), 0, t('cap_perMinute'));
    g.expired.set(num(st.expiredPerMinute), 0, t('cap_perMinute'));
    g.pow.set(st.pow ? t('cap_bits', { n: st.pow }) : t('cap_powOff'), st.pow / 24, st.powReason || '', st.pow > 0);
    g.refusals.set(num(st.refusals), 0, '');
    nodes.fill(st.nodes || []);
    audit.fill(st.audit || []);
    settings.fill(st);
  }
  call('GET', path(id)).then(show).catch((e) => {
    err.textContent = e.status === 404 ? t('notFound') : t('error', { msg: e.message });
  });
  const sock = new LiveSocket(id, {
    type: 'capacity',
    onFrame: (f) => show(f),
    onStatus: (s) => {
      status.setAttribute('data-conn', s);
      setText(status, t(s));
    },
    onFatal: (code, reason) => {
      err.textContent = t('error', { msg: reason });
    },
  });
  return () => sock.close();
}
