// loadtests.js is the operator's load-test section: start a run against a
// test room, watch it live (gauges, a per-second chart of throughput
// against latency, the instances beside it), stop it, browse the history
// with its regression flags, and manage the schedules. Admin token only:
// the server refuses every load-test route to a room's key.

import { h, clear, setText } from './dom.js';
import { t, num, when } from './i18n.js';
import { adminSocket, call } from './api.js';
import { instancesPanel } from './instances.js';
import { gauge } from './live.js';

const PROFILES = ['join', 'status', 'mix'];

const runPath = (id) => `/loadtests/${encodeURIComponent(id)}`;

// specFields builds the room, profile, rate and duration inputs shared by
// the start form and the schedule form; prefix keeps their ids apart.
function specFields(prefix, rooms) {
  const field = (name, input) => h('div', { class: 'field' },
    h('label', { for: `${prefix}-${name}` }, t(`lt_${name}`)), input,
    h('p', { class: 'field-error', 'data-error-for': name }));
  const room = h('select', { id: `${prefix}-siteId`, required: true },
    rooms.length ? rooms.map((s) => h('option', { value: s.id }, `${s.name} (${s.slug})`)) : h('option', { value: '' }, t('lt_noTestRooms')));
  const profile = h('select', { id: `${prefix}-profile` }, PROFILES.map((p) => h('option', { value: p }, t(`lt_p_${p}`))));
  const rate = h('input', { id: `${prefix}-ratePerSecond`, type: 'number', min: '1', step: 'any', value: '50', required: true });
  const secs = h('input', { id: `${prefix}-durationSeconds`, type: 'number', min: '1', step: '1', value: '30', required: true });
  return {
    els: [field('siteId', room), field('profile', profile), field('ratePerSecond', rate), field('durationSeconds', secs)],
    value: () => ({ siteId: room.value, profile: profile.value, ratePerSecond: Number(rate.value), durationSeconds: Number(secs.value) }),
  };
}

// showError puts a refused request's message next to its field, or in
// status when it names none.
function showError(form, status, err) {
  form.querySelectorAll('[data-error-for]').forEach((p) => setText(p, ''));
  form.querySelectorAll('.invalid').forEach((el) => el.classList.remove('invalid'));
  const slot = err.field && form.querySelector(`[data-error-for="${err.field}"]`);
  if (slot) {
    setText(slot, err.message);
    const input = form.querySelector(`[id$="-${err.field}"]`);
    if (input) input.classList.add('invalid');
    setText(status, '');
  } else setText(status, t('error', { msg: err.message }));
}

function stateCell(r) {
  return h('span', { class: 'pill lt-state', 'data-run-state': r.state }, t(`lt_s_${r.state}`));
}

function regressionCell(r) {
  if (!r.scheduled || r.state !== 'finished') return h('span', {}, t('none'));
  if (!r.regression) return h('span', { class: 'ok' }, t('lt_noRegression'));
  return h('span', { class: 'bad lt-regression', title: (r.regressionReasons || []).join('\n') },
    `⚑ ${(r.regressionFigures || []).map((f) => t(`lt_f_${f}`)).join(', ')}`);
}

// loadTestsView shows the start form, the history and the schedules.
export function loadTestsView(main) {
  const status = h('p', { class: 'form-status', role: 'status' });
  const startBox = h('section', { class: 'panel', id: 'lt-start' }, h('h2', {}, t('lt_start')), h('p', { class: 'hint' }, t('loading')));
  const histBody = h('tbody', {});
  const older = h('button', { type: 'button', class: 'small', id: 'lt-older', hidden: true }, t('lt_older'));
  const schedBody = h('tbody', {});
  const schedBox = h('section', { class: 'panel', id: 'lt-schedules' }, h('h2', {}, t('lt_schedules')));
  clear(main,
    h('div', { class: 'section-head' }, h('h1', {}, t('lt_title'))),
    h('p', { class: 'hint' }, t('lt_intro')),
    startBox,
    h('section', { class: 'panel' }, h('h2', {}, t('lt_history')),
      h('div', { class: 'scroll' }, h('table', { class: 'grid', id: 'lt-history' },
        h('thead', {}, h('tr', {}, ['lt_started', 'lt_room', 'lt_profile', 'lt_rate', 'lt_duration', 'state', 'lt_achieved', 'lt_p95', 'lt_errorRate', 'lt_regression']
          .map((k) => h('th', {}, t(k))))), histBody)), older),
    schedBox);

  let stopped = false;
  let timer = null;
  let pages = [];
  let next = '';

  function historyRow(r) {
    const tot = r.totals || {};
    return h('tr', { 'data-run': r.id },
      h('td', {}, h('a', { href: `#/loadtests/${encodeURIComponent(r.id)}` }, when(r.startedAt)), r.scheduled ? h('span', { class: 'pill', title: r.scheduleId }, t('lt_scheduled')) : null),
      h('td', { class: 'mono' }, r.slug), h('td', {}, t(`lt_p_${r.profile}`)), h('td', { class: 'num' }, num(r.ratePerSecond, 1)),
      h('td', { class: 'num' }, `${num(r.durationSeconds)} s`), h('td', {}, stateCell(r)),
      h('td', { class: 'num' }, r.totals ? num(tot.achievedRate, 1) : t('none')),
      h('td', { class: 'num' }, r.totals ? `${num(tot.p95Ms, 1)} ms` : t('none')),
      h('td', { class: 'num' }, r.totals ? `${num(100 * tot.errorRate, 2)} %` : t('none')),
      h('td', {}, regressionCell(r)));
  }

  async function refresh() {
    try {
      const first = await call('GET', '/loadtests?limit=20');
      pages[0] = first.runs || [];
      if (pages.length === 1) next = first.next || '';
      const runs = pages.flat();
      if (runs.length === 0) clear(histBody, h('tr', {}, h('td', { colspan: 10, class: 'empty' }, t('lt_noRuns'))));
      else clear(histBody, runs.map(historyRow));
      older.hidden = !next;
      const sc = await call('GET', '/schedules');
      renderSchedules(sc.schedules || []);
    } catch (e) {
      setText(status, t('error', { msg: e.message }));
    }
    if (!stopped) timer = setTimeout(refresh, 3000);
  }

  older.addEventListener('click', async () => {
    try {
      const r = await call('GET', `/loadtests?limit=20&before=${encodeURIComponent(next)}`);
      pages.push(r.runs || []);
      next = r.next || '';
      clear(histBody, pages.flat().map(historyRow));
      older.hidden = !next;
    } catch (e) {
      setText(status, t('error', { msg: e.message }));
    }
  });

  function renderSchedules(list) {
    if (list.length === 0) clear(schedBody, h('tr', {}, h('td', { colspan: 6, class: 'empty' }, t('lt_noSchedules'))));
    else {
      clear(schedBody, list.map((s) => h('tr', { 'data-schedule': s.id },
        h('td', { class: 'mono' }, s.cron), h('td', { class: 'mono' }, s.slug), h('td', {}, t(`lt_p_${s.profile}`)),
        h('td', { class: 'num' }, num(s.ratePerSecond, 1)), h('td', { class: 'num' }, `${num(s.durationSeconds)} s`),
        h('td', { class: 'row-actions' }, h('button', {
          type: 'button', class: 'small danger', onclick: async () => {
            if (!confirm(t('lt_confirmDelete', { cron: s.cron }))) return;
            try {
              await call('DELETE', `/schedules/${encodeURIComponent(s.id)}`);
              refreshSoon();
            } catch (e) {
              setText(status, t('error', { msg: e.message }));
            }
          },
        }, t('delete'))))));
    }
  }

  function refreshSoon() {
    clearTimeout(timer);
    refresh();
  }

  (async () => {
    let rooms = [];
    try {
      const r = await call('GET', '/sites');
      rooms = (r.sites || []).filter((s) => s.test);
    } catch (e) {
      setText(status, t('error', { msg: e.message }));
    }
    if (stopped) return;
    const spec = specFields('lt', rooms);
    const formStatus = h('p', { class: 'form-status', role: 'status' });
    const form = h('form', { class: 'lt-form', id: 'lt-start-form' }, h('div', { class: 'lt-fields' }, spec.els),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', disabled: rooms.length === 0 }, t('lt_startButton')), formStatus));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        const run = await call('POST', '/loadtests', spec.value());
        location.hash = `#/loadtests/${encodeURIComponent(run.id)}`;
      } catch (e) {
        showError(form, formStatus, e);
      }
    });
    clear(startBox, h('h2', {}, t('lt_start')), h('p', { class: 'hint' }, rooms.length ? t('lt_startHint') : t('lt_noTestRoomsHint')), form);

    const sspec = specFields('ls', rooms);
    const cron = h('input', { id: 'ls-cron', class: 'mono', value: '0 3 * * *', required: true, spellcheck: 'false' });
    const sStatus = h('p', { class: 'form-status', role: 'status' });
    const sform = h('form', { class: 'lt-form', id: 'lt-schedule-form' },
      h('div', { class: 'lt-fields' }, h('div', { class: 'field' }, h('label', { for: 'ls-cron' }, t('lt_cron')), cron,
        h('p', { class: 'field-error', 'data-error-for': 'cron' })), sspec.els),
      h('div', { class: 'actions' }, h('button', { type: 'submit', disabled: rooms.length === 0 }, t('lt_addSchedule')), sStatus));
    sform.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        await call('POST', '/schedules', { cron: cron.value, ...sspec.value() });
        showError(sform, sStatus, { message: '' });
        setText(sStatus, t('saved'));
        refreshSoon();
      } catch (e) {
        showError(sform, sStatus, e);
      }
    });
    clear(schedBox, h('h2', {}, t('lt_schedules')), h('p', { class: 'hint' }, t('lt_cronHint')),
      h('div', { class: 'scroll' }, h('table', { class: 'grid' },
        h('thead', {}, h('tr', {}, ['lt_cron', 'lt_room', 'lt_profile', 'lt_rate', 'lt_duration', ''].map((k) => h('th', {}, k ? t(k) : '')))), schedBody)),
      sform);
    refresh();
  })();

  clear(main.querySelector('.section-head'), h('h1', {}, t('lt_title')), status);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

// loadTestRunView watches one run over its live socket; an ended run is
// shown from its stored series.
export function loadTestRunView(main, id) {
  const head = h('div', { class: 'room-title' }, h('a', { href: '#/loadtests', class: 'back' }, `← ${t('lt_title')}`), h('h1', {}, t('lt_run')));
  const stateEl = h('span', { class: 'pill lt-state', id: 'lt-run-state' });
  const stop = h('button', { type: 'button', class: 'danger', id: 'lt-stop', hidden: true }, t('lt_stop'));
  const msg = h('p', { class: 'hint', id: 'lt-message' });
  const gRate = gauge('lt_gRate');
  const gLat = gauge('lt_gLatency');
  const gErr = gauge('lt_gErrors');
  const chartBox = h('div', { class: 'chart', id: 'lt-chart', 'aria-label': t('lt_chart') });
  const totals = h('dl', { class: 'lt-totals', id: 'lt-totals' });
  const panel = instancesPanel();
  clear(main, h('div', { class: 'room-head' }, head, h('div', { class: 'room-controls' }, stateEl, stop)), msg,
    h('div', { class: 'lt-live' },
      h('div', {}, h('div', { class: 'gauges' }, gRate.el, gLat.el, gErr.el),
        h('section', { class: 'panel' }, h('h3', {}, t('lt_chart')), chartBox),
        h('section', { class: 'panel' }, h('h3', {}, t('lt_totals')), totals)),
      panel.el));

  let run = null;
  let series = [];
  let plot = null;
  let ws = null;
  let closed = false;

  function data() {
    return [series.map((s) => s.t), series.map((s) => s.achievedRate), series.map((s) => s.p50Ms), series.map((s) => s.p95Ms)];
  }

  function draw() {
    chartBox.dataset.seconds = String(series.length);
    if (series.length === 0 || typeof uPlot === 'undefined' || !chartBox.isConnected) return;
    if (!plot) {
      plot = new uPlot({
        width: Math.max(300, chartBox.clientWidth), height: 260,
        scales: { x: { time: true }, r: { range: (u, min, max) => [0, Math.max(5, (max ?? 0) * 1.1)] }, ms: { range: (u, min, max) => [0, Math.max(1, (max ?? 0) * 1.1)] } },
        axes: [{}, { scale: 'r', label: t('lt_sRate') }, { scale: 'ms', side: 1, label: t('lt_sMs'), grid: { show: false } }],
        series: [{}, { label: t('lt_sRate'), scale: 'r', stroke: '#0a63c9', width: 2, fill: 'rgba(10,99,201,0.08)' },
          { label: 'p50', scale: 'ms', stroke: '#2f9e44', width: 2 }, { label: 'p95', scale: 'ms', stroke: '#d9480f', width: 2 }],
      }, data(), chartBox);
    } else plot.setData(data());
    // the whole planned run is the chart's width, so the line grows along it
    if (run && run.startedAt) {
      const from = Date.parse(run.startedAt) / 1000;
      plot.setScale('x', { min: from, max: Math.max(from + run.durationSeconds, series[series.length - 1].t) });
    }
  }

  function render() {
    if (!run) return;
    stateEl.dataset.runState = run.state;
    setText(stateEl, t(`lt_s_${run.state}`));
    stop.hidden = run.state !== 'running';
    setText(msg, `${run.slug} · ${t(`lt_p_${run.profile}`)} · ${num(run.ratePerSecond, 1)}/s · ${num(run.durationSeconds)} s${run.scheduled ? ` · ${t('lt_scheduled')}` : ''}${run.message ? ` — ${run.message}` : ''}`);
    const last = series[series.length - 1];
    const tot = run.totals;
    const rate = tot ? tot.achievedRate : last ? last.achievedRate : 0;
    gRate.set(`${num(rate, 1)} / ${num(run.ratePerSecond, 1)}/s`, run.ratePerSecond ? rate / run.ratePerSecond : 0,
      tot ? t('lt_whole') : t('lt_thisSecond'), rate < 0.9 * run.ratePerSecond && (tot || series.length > 1));
    const p50 = tot ? tot.p50Ms : last ? last.p50Ms : 0;
    const p95 = tot ? tot.p95Ms : last ? last.p95Ms : 0;
    gLat.set(`${num(p50, 1)} / ${num(p95, 1)} ms`, Math.min(1, p95 / 1000), 'p50 / p95', p95 > 500);
    const er = tot ? tot.errorRate : last ? last.errorRate : 0;
    gErr.set(`${num(100 * er, 2)} %`, er, tot ? t('lt_errors', { n: num(tot.errors) }) : '', er > 0);
    if (tot) {
      clear(totals, [['lt_requests', num(tot.requests)], ['lt_ok', num(tot.ok)], ['lt_achieved', num(tot.achievedRate, 1)],
        ['lt_p95', `${num(tot.p95Ms, 1)} ms`], ['p99', `${num(tot.p99Ms, 1)} ms`], ['lt_errorRate', `${num(100 * tot.errorRate, 2)} %`],
        ['lt_regression', run.scheduled && run.state === 'finished' ? (run.regression ? `⚑ ${(run.regressionReasons || []).join('; ')}` : t('lt_noRegression')) : t('none')]]
        .map(([k, v]) => [h('dt', {}, k === 'p99' ? 'p99' : t(k)), h('dd', { 'data-total': k }, v)]));
    } else clear(totals, h('p', { class: 'hint' }, t('lt_running')));
    draw();
  }

  function connect() {
    ws = adminSocket(`/api/admin/queue/loadtests/${encodeURIComponent(id)}/live`, (f) => {
      if (f.type === 'run') {
        run = f.run;
        series = f.run.series || [];
      } else if (f.type === 'second') {
        if (!series.length || f.index > series[series.length - 1].index) series.push(f);
      } else if (f.type === 'end') {
        run = { ...f.run };
      }
      render();
    });
    ws.addEventListener('close', (ev) => {
      if (closed) return;
      if (ev.code === 4401 || ev.code === 4403 || ev.code === 4404) {
        setText(msg, t('socketRefused', { why: `${ev.code} ${ev.reason}` }));
        return;
      }
      if (run && run.state !== 'running') return;
      // the server went away mid-run: read the stored run, then listen again
      setTimeout(async () => {
        if (closed) return;
        try {
          run = await call('GET', runPath(id));
          series = run.series || [];
          render();
        } catch {
          // still away
        }
        if (!closed && (!run || run.state === 'running')) connect();
      }, 1000);
    });
  }

  stop.addEventListener('click', async () => {
    stop.disabled = true;
    try {
      run = await call('POST', `${runPath(id)}/stop`);
      render();
    } catch (e) {
      setText(msg, t('error', { msg: e.message }));
    }
    stop.disabled = false;
  });
  const onResize = () => plot && plot.setSize({ width: Math.max(300, chartBox.clientWidth), height: 260 });
  window.addEventListener('resize', onResize);
  connect();
  return () => {
    closed = true;
    if (ws) ws.close(1000);
    panel.stop();
    window.removeEventListener('resize', onResize);
    if (plot) plot.destroy();
  };
}
