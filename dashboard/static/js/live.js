// live.js is the live dashboard of one room: it holds the room's live
// socket (GET /api/admin/queue/sites/<id>/live), reconnects by itself when
// the server goes away, and draws the gauges, the 30-minute chart and the
// rate adjustments from its frames. While the socket is down it keeps the
// waiting count moving from the room's public info endpoint.

import { h, clear, setText } from './dom.js';
import { t, num, duration, when, lang } from './i18n.js';
import { adminSocket, info, call, site } from './api.js';

const WINDOW = 30 * 60; // seconds of history the chart shows
const FATAL = { 4401: 'bad token', 4403: 'forbidden', 4404: 'unknown room' };

// LiveSocket connects to a room's live socket and keeps it connected:
// after a close it retries with a growing pause (0.5 s … 5 s), except when
// the server refused the session (4401, 4403, 4404). The token travels in
// the first message, never in the URL. type is the frames it takes
// ("stats" for a rate room, "capacity" for a capacity room).
export class LiveSocket {
  constructor(id, { onFrame, onStatus, onFatal, type = 'stats' }) {
    this.id = id;
    this.type = type;
    this.onFrame = onFrame;
    this.onStatus = onStatus;
    this.onFatal = onFatal;
    this.stopped = false;
    this.failures = 0;
    this.timer = null;
    this.connect();
  }

  connect() {
    if (this.stopped) return;
    let ws;
    try {
      ws = adminSocket(`/api/admin/queue/sites/${encodeURIComponent(this.id)}/live`, (f) => {
        if (f.type !== this.type) return;
        this.failures = 0;
        this.onStatus('live');
        this.onFrame(f, this.fresh);
        this.fresh = false;
      });
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    this.fresh = true;
    ws.addEventListener('close', (ev) => {
      if (this.ws !== ws || this.stopped) return;
      if (FATAL[ev.code]) {
        this.stopped = true;
        this.onFatal(ev.code, ev.reason || FATAL[ev.code]);
        return;
      }
      this.retry();
    });
  }

  retry() {
    this.failures++;
    this.onStatus(this.failures > 3 ? 'polling' : 'reconnecting');
    const pause = Math.min(5000, 500 * 2 ** Math.min(this.failures - 1, 4));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), pause);
  }

  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close(1000);
  }
}

// clock formats a unix time as the local time of day in the console's
// language.
function clock(sec, seconds) {
  const opts = { hour: '2-digit', minute: '2-digit' };
  if (seconds) opts.second = '2-digit';
  return new Date(sec * 1000).toLocaleTimeString(lang() === 'de' ? 'de-DE' : 'en-GB', opts);
}

// gauge is one figure of a live view: its value, a bar and a line below.
export function gauge(key) {
  const value = h('div', { class: 'gauge-value', 'data-gauge': key });
  const fill = h('div', { class: 'bar-fill' });
  const sub = h('div', { class: 'gauge-sub' });
  const el = h('section', { class: 'gauge' }, h('h3', {}, t(key)), value, h('div', { class: 'bar' }, fill), sub);
  return {
    el,
    set(text, ratio, subText, alarm) {
      setText(value, text);
      setText(sub, subText);
      fill.style.width = `${Math.max(0, Math.min(1, ratio || 0)) * 100}%`;
      el.classList.toggle('alarm', !!alarm);
    },
  };
}

// liveView builds the dashboard of room s. onState receives every state
// the room reports (for the page's header). Call stop() when leaving.
export function liveView(s, onState) {
  const status = h('span', { class: 'pill conn', 'data-conn': 'connecting' }, t('connecting'));
  const refused = h('p', { class: 'bad', role: 'alert' });
  const gw = gauge('gWaiting');
  const gi = gauge('gInflow');
  const gr = gauge('gRate');
  const ge = gauge('gWait');
  const chartBox = h('div', { class: 'chart', 'aria-label': t('chartTitle') });
  const adjBody = h('tbody', {});
  const el = h('div', { class: 'live' },
    h('div', { class: 'live-head' }, status, refused),
    h('div', { class: 'gauges' }, gw.el, gi.el, gr.el, ge.el),
    h('section', { class: 'panel' }, h('h3', {}, t('chartTitle')), chartBox),
    h('section', { class: 'panel' }, h('h3', {}, t('adjustments')),
      h('table', { class: 'grid adjustments' },
        h('thead', {}, h('tr', {}, h('th', {}, t('at')), h('th', {}, t('change')), h('th', {}, t('rule')), h('th', {}, t('reason')))),
        adjBody)));

  let history = [];
  let last = null;
  let plot = null;
  let mode = 'connecting';
  let poll = null;

  function chartData() {
    return [history.map((p) => p.t), history.map((p) => p.waiting), history.map((p) => p.inflow), history.map((p) => p.rate)];
  }

  function ensurePlot() {
    if (plot || typeof uPlot === 'undefined' || !chartBox.isConnected) return;
    const width = Math.max(300, chartBox.clientWidth);
    plot = new uPlot({
      width,
      height: 260,
      scales: {
        x: { time: true },
        n: { range: (u, min, max) => [0, Math.max(5, (max ?? 0) * 1.1)] },
        r: { range: (u, min, max) => [0, Math.max(5, (max ?? 0) * 1.1)] },
      },
      axes: [{ values: (u, splits, ai, space, incr) => splits.map((v) => clock(v, incr < 60)) },
        { scale: 'n', label: t('sWaiting') }, { scale: 'r', side: 1, label: t('sInflow'), grid: { show: false } }],
      series: [{ label: t('at'), value: (u, v) => (v == null ? '–' : clock(v, true)) }, { label: t('sWaiting'), scale: 'n', stroke: '#0a63c9', width: 2, fill: 'rgba(10,99,201,0.08)' },
        { label: t('sInflow'), scale: 'r', stroke: '#d9480f', width: 2 },
        { label: t('sRate'), scale: 'r', stroke: '#6b7280', width: 1, dash: [6, 4] }],
    }, chartData(), chartBox);
  }

  // draw shows the samples up to now, at least two minutes wide so a
  // fresh room's first samples do not fill the whole width.
  function draw() {
    if (history.length === 0) return;
    ensurePlot();
    if (!plot) return;
    plot.setData(chartData());
    const hi = Math.max(history[history.length - 1].t, Date.now() / 1000);
    plot.setScale('x', { min: Math.min(history[0].t, hi - 120), max: hi });
  }

  function render(f) {
    const maxWaiting = Math.max(1, ...history.map((p) => p.waiting || 0), f.waiting || 0);
    gw.set(num(f.waiting), (f.waiting || 0) / maxWaiting,
      f.issued !== undefined ? t('served', { n: num(f.serving), i: num(f.issued) }) : '');
    const rate = f.ratePerMinute;
    if (f.inflowPerMinute === null || f.inflowPerMinute === undefined) {
      gi.set(`${t('none')} / ${num(rate)}${t('perMin')}`, 0, '');
    } else {
      const over = f.inflowPerMinute > rate;
      gi.set(`${num(f.inflowPerMinute)} / ${num(rate)}${t('perMin')}`, rate ? f.inflowPerMinute / rate : 0,
        over ? t('inflowOver') : t('inflowUnder'), over);
    }
    const ar = f.autoRate || {};
    if (ar.enabled) {
      gr.set(`${num(rate, 1)}${t('perMin')}`, ar.maxRate ? rate / ar.maxRate : 1,
        `${t('ceiling', { n: num(ar.maxRate) })} · ${t('range', { min: num(ar.minRate), max: num(ar.maxRate) })}`);
    } else {
      gr.set(`${num(rate, 1)}${t('perMin')}`, 1, t('fixed'));
    }
    ge.set(duration(f.estimatedWaitSeconds), Math.min(1, (f.estimatedWaitSeconds || 0) / 3600), t(`st_${f.state}`));
    const adj = (f.adjustments || []).slice().reverse();
    if (adj.length === 0) clear(adjBody, h('tr', {}, h('td', { colspan: 4, class: 'empty' }, t('noAdjustments'))));
    else {
      clear(adjBody, adj.map((a) => h('tr', {}, h('td', {}, when(a.at)), h('td', {}, `${num(a.from, 1)} → ${num(a.to, 1)}`),
        h('td', { class: 'mono' }, a.rule || t('none')), h('td', {}, a.reason || ''))));
    }
    onState(f.state, f);
  }

  function trim() {
    const from = Date.now() / 1000 - WINDOW;
    while (history.length && history[0].t < from) history.shift();
  }

  function setMode(m) {
    mode = m;
    status.dataset.conn = m;
    setText(status, t(m));
    if (m === 'live') stopPoll();
    else startPoll();
  }

  // startPoll keeps the waiting count and state current from the room's
  // info while the socket is down (a restart, an older server).
  function startPoll() {
    if (poll) return;
    const tick = async () => {
      try {
        const i = await info(s.slug);
        if (mode === 'live') return;
        const f = {
          ...(last || {}), waiting: i.waiting, serving: i.serving, active: i.active,
          ratePerMinute: (last && last.ratePerMinute) || s.ratePerMinute,
          autoRate: (last && last.autoRate) || s.autoRate, inflowPerMinute: last ? last.inflowPerMinute : null,
          estimatedWaitSeconds: last ? last.estimatedWaitSeconds : null,
        };
        if (!last && f.ratePerMinute) f.estimatedWaitSeconds = Math.round((i.waiting / f.ratePerMinute) * 60);
        // the rate log answers newest first; the frame's list is oldest first
        f.adjustments = await call('GET', `${site(s.id)}/rate-log`).then((r) => (r.adjustments || []).slice(0, 50).reverse(), () => f.adjustments);
        if (mode === 'live') return;
        f.state = !i.active ? 'paused' : (last && (last.state === 'prequeue' || last.state === 'drawn')) ? last.state : i.waiting > 0 ? 'queueing' : 'not_queueing';
        history.push({ t: Date.now() / 1000, waiting: i.waiting, inflow: null, rate: f.ratePerMinute });
        trim();
        render(f);
        draw();
      } catch {
        // the server is away; the socket's retries bring it back
      }
    };
    tick();
    poll = setInterval(tick, 2000);
  }

  function stopPoll() {
    clearInterval(poll);
    poll = null;
  }

  const sock = new LiveSocket(s.id, {
    onFrame(f, fresh) {
      const samples = (f.history || []).map((p) => ({ t: p.t, waiting: p.waiting, inflow: p.inflow, rate: p.rate }));
      if (fresh) history = samples;
      else history.push(...samples.filter((p) => !history.length || p.t > history[history.length - 1].t));
      trim();
      last = f;
      render(f);
      draw();
    },
    onStatus: setMode,
    onFatal(code, reason) {
      setMode('polling');
      setText(refused, t('socketRefused', { why: `${code} ${reason}` }));
    },
  });
  const onResize = () => {
    if (plot) plot.setSize({ width: Math.max(300, chartBox.clientWidth), height: 260 });
  };
  window.addEventListener('resize', onResize);
  startPoll();
  requestAnimationFrame(draw);

  return {
    el,
    stop() {
      sock.close();
      stopPoll();
      window.removeEventListener('resize', onResize);
      if (plot) plot.destroy();
    },
  };
}
