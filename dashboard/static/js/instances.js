// instances.js is the admin's view of every node: GET /instances polled
// every 3 seconds while the panel is shown.

import { h, clear } from './dom.js';
import { t, num, when } from './i18n.js';
import { call } from './api.js';

function bytes(n) {
  if (n === null || n === undefined) return t('none');
  const mib = n / (1 << 20);
  return mib >= 1024 ? `${num(mib / 1024, 1)} GiB` : `${num(mib, 1)} MiB`;
}

function uptime(sec) {
  if (sec === null || sec === undefined) return t('none');
  const hh = Math.floor(sec / 3600);
  const mm = Math.floor((sec % 3600) / 60);
  const ss = Math.floor(sec % 60);
  return hh ? `${hh}h ${mm}m` : mm ? `${mm}m ${ss}s` : `${ss}s`;
}

// versionCell shows the release with its commit; the Go release and the
// log formats in its title.
function versionCell(i) {
  const formats = (i.logFormats || []).map((f) => `${f.log} ${f.reads.join('/')}→${f.writes}`).join(', ');
  const title = [i.goVersion, formats].filter(Boolean).join('; ');
  return h('td', { title }, i.version || '', i.commit ? h('span', { class: 'mono' }, ` ${i.commit.slice(0, 7)}`) : '');
}

// instancesPanel answers the panel and a stop function.
export function instancesPanel() {
  const body = h('tbody', {});
  const note = h('p', { class: 'hint', role: 'status' });
  const cols = ['iId', 'iRoles', 'iVersion', 'iFeatures', 'iUptime', 'iCpu', 'iRss', 'iHeap', 'iGoroutines', 'iSched', 'iRps', 'iWs', 'iReported'];
  const el = h('section', { class: 'panel instances', id: 'instances' },
    h('h2', {}, t('instances')),
    h('div', { class: 'scroll' }, h('table', { class: 'grid' }, h('thead', {}, h('tr', {}, cols.map((c) => h('th', {}, t(c))))), body)),
    note);
  let timer = null;
  let stopped = false;
  async function tick() {
    try {
      const r = await call('GET', '/instances');
      note.textContent = '';
      const list = r.instances || [];
      if (list.length === 0) clear(body, h('tr', {}, h('td', { colspan: cols.length, class: 'empty' }, t('noInstances'))));
      else {
        clear(body, list.map((i) => h('tr', { 'data-instance': i.id },
          h('td', { class: 'mono' }, i.id), h('td', {}, (i.roles || []).join(', ')), versionCell(i), h('td', {}, (i.features || []).join(', ') || t('iNoFeatures')),
          h('td', {}, uptime(i.uptimeSeconds)), h('td', {}, `${num(i.cpuPercent, 1)} %`), h('td', {}, bytes(i.rssBytes)),
          h('td', {}, bytes(i.heapBytes)), h('td', {}, num(i.goroutines)), h('td', {}, `${num(i.schedLatencyP99Ms, 2)} ms`),
          h('td', {}, num(i.requestsPerSecond, 1)), h('td', {}, num(i.webSockets)), h('td', {}, when(i.reportedAt)))));
      }
    } catch (err) {
      note.textContent = err.status === 404 || err.status === 405 ? t('instancesUnavailable') : t('error', { msg: err.message });
    }
    if (!stopped) timer = setTimeout(tick, 3000);
  }
  tick();
  return {
    el,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
