// i18n.js holds every sentence of the console in German and English. The
// server picks the first language from Accept-Language (as the waiting page
// does) and writes it into <html lang>; the switch in the header overrides
// it for this browser session.

const en = {
  title: 'aditus-queue console',
  signIn: 'Sign in',
  signInHelp: 'Sign in with the admin token that `aditus-queue serve` printed on its first start, or with a room’s API key (qak_…). It is kept only in this browser tab and sent as a bearer header.',
  tokenLabel: 'Admin token or API key',
  signInFailed: 'This token or key was not accepted.',
  signOut: 'Sign out',
  langSwitch: 'Deutsch',
  asAdmin: 'Operator',
  asKey: 'API key',
  rooms: 'Waiting rooms',
  instances: 'Instances',
  newRoom: 'New waiting room',
  noRooms: 'No waiting room yet.',
  name: 'Name', slug: 'Slug', state: 'State', waiting: 'Waiting', serving: 'Serving', rate: 'Rate / min',
  open: 'Open',
  st_not_queueing: 'not queueing', st_queueing: 'queueing', st_paused: 'paused', st_prequeue: 'pre-queue', st_drawn: 'draw made',
  drawSealed: 'Draw sealed, commitment {hash}', drawMade: 'Draw made, commitment {hash}', drawReveal: 'reveal', drawClosed: 'Draw waiting for its beacon round, commitment {hash}',
  tabLive: 'Live', tabSettings: 'Settings', tabAccess: 'Keys & codes', tabAudit: 'Audit log', tabIntegration: 'Integration',
  pause: 'Pause', resume: 'Resume', setRate: 'Set rate', rateNow: 'Admission rate per minute',
  rateSet: 'Rate set to {n}/min.', paused: 'Paused: no numbers are issued, nobody is admitted.', resumed: 'Admission resumed.',
  save: 'Save', create: 'Create', cancel: 'Cancel', delete: 'Delete', saved: 'Saved.',
  deleteRoom: 'Delete this waiting room', confirmDelete: 'Delete “{name}” for good? Waiting visitors lose their place.',
  // form
  fGeneral: 'Room', fLook: 'Waiting page', fAdmission: 'Admission', fProtection: 'Protection', fAutoRate: 'Self-regulating rate',
  f_slug: 'Slug (in every visitor URL, fixed once created)', f_name: 'Name shown to visitors', f_targetUrl: 'Target URL (the shop)',
  f_domains: 'Shop domains (host names, one per line)', f_ratePerMinute: 'Admission rate per minute', f_active: 'Active (unticked: paused)',
  f_message: 'Message under the title', f_headerImageUrl: 'Header image URL', f_accentColor: 'Accent colour (#rrggbb)',
  f_tokenTtlSeconds: 'Admission token lifetime (seconds)', f_burstSeconds: 'Burst (seconds of the rate kept while quiet)',
  f_opensAt: 'Opens at (local time; empty: open now)', f_allowBareNumber: 'Allow bare waiting numbers (seed integrations)',
  f_test: 'Test room (load tests allowed)',
  f_pow_enabled: 'Proof of work before a number', f_pow_bits: 'Difficulty (bits, 8–24)',
  f_abandon_enabled: 'Detect abandoned numbers', f_abandon_graceSeconds: 'Grace (seconds, 60–3600)',
  f_autoRate_enabled: 'Regulate the rate by the shop’s health', f_autoRate_healthUrl: 'Health URL',
  f_autoRate_minRate: 'Minimum rate / min', f_autoRate_maxRate: 'Maximum rate / min (ceiling)',
  f_autoRate_intervalSeconds: 'Check every (seconds, 5–600)', f_autoRate_raisePercent: 'Raise per healthy check (%)',
  f_autoRate_cutPercent: 'Cut on a violated rule (%)', f_autoRate_maxFailures: 'Failed checks before falling to the minimum',
  f_autoRate_rules: 'Rules (the response time is the metric responseMs)', addRule: 'Add rule', removeRule: 'Remove',
  ruleMetric: 'Metric', ruleOp: 'Op', ruleValue: 'Value',
  healthTest: 'Test the health URL', healthHint: 'Save the health URL first, test it, then enable the regulation: the server requires a passing test.', healthOk: 'Healthy: HTTP {status} in {ms} ms.', healthBad: 'Not healthy: {why}',
  healthUnavailable: 'This server cannot test health URLs yet.', observed: 'observed', passed: 'passed', failed: 'failed',
  fixField: 'Please correct the marked field.',
  // secrets
  onceTitle: 'Shown this once', onceHelp: 'Copy it now: the server keeps only a hash or a sealed copy and cannot show it again.',
  copy: 'Copy', copied: 'Copied', done: 'I have copied it',
  secretTitle: 'Room secret', secretHelp: 'Shops and proxies verify admission tokens with it (HS256).',
  rotate: 'Rotate secret', confirmRotate: 'Rotate the secret? Tokens signed with the old secret stop verifying at the shop as soon as it uses the new one.',
  keys: 'API keys', keyName: 'Key name', createKey: 'Create key', revoke: 'Revoke', noKeys: 'No keys.',
  keyHelp: 'A key reaches only this room: read and change its configuration (e.g. from CI at the on-sale).',
  confirmRevoke: 'Revoke the key “{name}”?', created: 'Created',
  codes: 'Bypass codes', codeLabel: 'Label', usageLimit: 'Usage limit (empty: unlimited)', expiresAt: 'Expires at (empty: never)',
  createCode: 'Create code', noCodes: 'No codes.', uses: 'Uses', expires: 'Expires', disabled: 'disabled', enabled: 'enabled',
  disable: 'Disable', enable: 'Enable', codeLink: 'Link for this code', never: 'never', unlimited: 'unlimited',
  confirmDeleteCode: 'Delete the code “{label}”?',
  audit: 'Audit log', at: 'When', actor: 'Who', action: 'What', detail: 'Detail', noAudit: 'Nothing recorded yet.',
  // integration
  intGateway: 'Gateway link (publish it instead of the shop link)', intPage: 'Hosted waiting page',
  intScript: 'Script tag for every shop page', intEdge: 'Edge enforcement (offline token check at the proxy or CDN)',
  intBackend: 'Verification in the shop’s backend', intSecretNote: 'Set ADITUS_QUEUE_SECRET to the room’s secret (shown once at creation or rotation).',
  // live
  live: 'live', connecting: 'connecting…', reconnecting: 'reconnecting…', polling: 'live socket unavailable: polling',
  socketRefused: 'The live socket refused this session: {why}',
  gWaiting: 'Waiting', gInflow: 'Inflow vs admission', gRate: 'Admission rate', gWait: 'Wait for a newcomer',
  perMin: '/min', ceiling: 'ceiling {n}/min', range: 'auto {min}–{max}/min', fixed: 'fixed rate',
  inflowOver: 'arriving faster than admitted', inflowUnder: 'admission keeps up',
  served: 'serving #{n} · issued {i}', chartTitle: 'Waiting vs inflow, last 30 minutes',
  sWaiting: 'waiting', sInflow: 'inflow/min', sRate: 'rate/min',
  adjustments: 'Rate adjustments', noAdjustments: 'No automatic adjustments.', rule: 'Rule', reason: 'Reason', change: 'Change',
  none: '—', now: 'no wait', underMinute: 'under a minute', minutes: '{n} min', hours: '{h} h {m} min',
  // instances
  iId: 'Node', iRoles: 'Roles', iVersion: 'Version', iUptime: 'Uptime', iCpu: 'CPU', iRss: 'Memory', iHeap: 'Go heap',
  iGoroutines: 'Goroutines', iSched: 'Sched p99', iRps: 'Req/s', iWs: 'Sockets', iReported: 'Reported',
  noInstances: 'No instance has reported yet.', instancesUnavailable: 'This server does not report instances yet.',
  error: 'Error: {msg}', loading: 'Loading…', notFound: 'No such waiting room.', back: 'All rooms',
  // load tests
  lt_title: 'Load tests', lt_intro: 'A load test sends real visitor requests to a test room through this server’s public URL, so the whole path is measured. One runs at a time; production rooms are never touched.',
  lt_start: 'Start a load test', lt_startButton: 'Start', lt_startHint: 'Only test rooms are listed (rooms created with “Test room” ticked).',
  lt_noTestRooms: 'no test room', lt_noTestRoomsHint: 'There is no test room yet: create a waiting room with “Test room” ticked first.',
  lt_siteId: 'Test room', lt_profile: 'Profile', lt_ratePerSecond: 'Requests per second', lt_durationSeconds: 'Duration (seconds)',
  lt_p_join: 'joins', lt_p_status: 'status polls', lt_p_mix: 'mix (1 join : 9 polls)',
  lt_history: 'History', lt_older: 'Older runs', lt_noRuns: 'No load test yet.', lt_started: 'Started', lt_room: 'Room',
  lt_rate: 'Rate / s', lt_duration: 'Duration', lt_achieved: 'Achieved / s', lt_p95: 'p95', lt_errorRate: 'Errors', lt_regression: 'Regression',
  lt_noRegression: 'no', lt_scheduled: 'scheduled', lt_f_p99Ms: 'p99', lt_f_achievedRate: 'rate', lt_f_errorRate: 'errors',
  lt_s_running: 'running', lt_s_finished: 'finished', lt_s_stopped: 'stopped', lt_s_interrupted: 'interrupted', lt_s_failed: 'failed', lt_s_skipped: 'skipped',
  lt_schedules: 'Schedules', lt_noSchedules: 'No schedule.', lt_cron: 'Cron (UTC)', lt_addSchedule: 'Add schedule',
  lt_cronHint: 'Five fields, in UTC: minute hour day month weekday — “0 3 * * *” is every night at 03:00 UTC. A scheduled run clearly worse than the previous comparable runs is flagged.',
  lt_confirmDelete: 'Delete the schedule “{cron}”?',
  lt_run: 'Load test', lt_stop: 'Stop', lt_chart: 'Throughput and latency, per second', lt_totals: 'Totals', lt_running: 'Running…',
  lt_gRate: 'Achieved rate', lt_gLatency: 'Latency', lt_gErrors: 'Error rate', lt_whole: 'whole run', lt_thisSecond: 'last second',
  lt_errors: '{n} failed', lt_sRate: 'answers / s', lt_sMs: 'ms', lt_requests: 'Requests', lt_ok: 'Answered OK',
};

const de = {
  title: 'aditus-queue Konsole',
  signIn: 'Anmelden',
  signInHelp: 'Mit dem Admin-Token anmelden, den `aditus-queue serve` beim ersten Start ausgegeben hat, oder mit dem API-Key eines Warteraums (qak_…). Er bleibt nur in diesem Browser-Tab und wird als Bearer-Header gesendet.',
  tokenLabel: 'Admin-Token oder API-Key',
  signInFailed: 'Dieser Token oder Key wurde nicht angenommen.',
  signOut: 'Abmelden',
  langSwitch: 'English',
  asAdmin: 'Betreiber',
  asKey: 'API-Key',
  rooms: 'Warteräume',
  instances: 'Instanzen',
  newRoom: 'Neuer Warteraum',
  noRooms: 'Noch kein Warteraum.',
  name: 'Name', slug: 'Slug', state: 'Zustand', waiting: 'Wartend', serving: 'Aufgerufen', rate: 'Rate / min',
  open: 'Öffnen',
  st_not_queueing: 'keine Warteschlange', st_queueing: 'Warteschlange', st_paused: 'pausiert', st_prequeue: 'Vorab-Warteschlange', st_drawn: 'ausgelost',
  drawSealed: 'Auslosung versiegelt, Commitment {hash}', drawMade: 'Ausgelost, Commitment {hash}', drawReveal: 'Offenlegung', drawClosed: 'Auslosung wartet auf ihre Beacon-Runde, Commitment {hash}',
  tabLive: 'Live', tabSettings: 'Einstellungen', tabAccess: 'Keys & Codes', tabAudit: 'Protokoll', tabIntegration: 'Einbindung',
  pause: 'Pausieren', resume: 'Fortsetzen', setRate: 'Rate setzen', rateNow: 'Weiterleitungsrate pro Minute',
  rateSet: 'Rate auf {n}/min gesetzt.', paused: 'Pausiert: keine neuen Nummern, keine Weiterleitung.', resumed: 'Weiterleitung fortgesetzt.',
  save: 'Speichern', create: 'Anlegen', cancel: 'Abbrechen', delete: 'Löschen', saved: 'Gespeichert.',
  deleteRoom: 'Diesen Warteraum löschen', confirmDelete: '„{name}“ endgültig löschen? Wartende verlieren ihren Platz.',
  fGeneral: 'Warteraum', fLook: 'Warteseite', fAdmission: 'Weiterleitung', fProtection: 'Schutz', fAutoRate: 'Selbstregelnde Rate',
  f_slug: 'Slug (in jeder Besucher-URL, nach dem Anlegen fest)', f_name: 'Name für Besucher', f_targetUrl: 'Ziel-URL (der Shop)',
  f_domains: 'Shop-Domains (Hostnamen, eine pro Zeile)', f_ratePerMinute: 'Weiterleitungsrate pro Minute', f_active: 'Aktiv (ohne Haken: pausiert)',
  f_message: 'Hinweis unter dem Titel', f_headerImageUrl: 'URL des Kopfbilds', f_accentColor: 'Akzentfarbe (#rrggbb)',
  f_tokenTtlSeconds: 'Gültigkeit des Zugriffs-Tokens (Sekunden)', f_burstSeconds: 'Burst (Sekunden der Rate, die ruhig aufgespart werden)',
  f_opensAt: 'Öffnet um (Ortszeit; leer: sofort offen)', f_allowBareNumber: 'Reine Wartenummern erlauben (Seed-Integrationen)',
  f_test: 'Testraum (Lasttests erlaubt)',
  f_pow_enabled: 'Proof of Work vor der Nummer', f_pow_bits: 'Schwierigkeit (Bits, 8–24)',
  f_abandon_enabled: 'Verlassene Nummern erkennen', f_abandon_graceSeconds: 'Karenz (Sekunden, 60–3600)',
  f_autoRate_enabled: 'Rate nach der Gesundheit des Shops regeln', f_autoRate_healthUrl: 'Health-URL',
  f_autoRate_minRate: 'Mindestrate / min', f_autoRate_maxRate: 'Höchstrate / min (Obergrenze)',
  f_autoRate_intervalSeconds: 'Prüfen alle (Sekunden, 5–600)', f_autoRate_raisePercent: 'Anheben je gesunder Prüfung (%)',
  f_autoRate_cutPercent: 'Senken bei verletzter Regel (%)', f_autoRate_maxFailures: 'Fehlschläge bis zur Mindestrate',
  f_autoRate_rules: 'Regeln (die Antwortzeit ist die Metrik responseMs)', addRule: 'Regel hinzufügen', removeRule: 'Entfernen',
  ruleMetric: 'Metrik', ruleOp: 'Op', ruleValue: 'Wert',
  healthTest: 'Health-URL testen', healthHint: 'Erst die Health-URL speichern, dann testen, dann die Regelung einschalten: der Server verlangt einen bestandenen Test.', healthOk: 'Gesund: HTTP {status} in {ms} ms.', healthBad: 'Nicht gesund: {why}',
  healthUnavailable: 'Dieser Server kann Health-URLs noch nicht testen.', observed: 'gemessen', passed: 'erfüllt', failed: 'verletzt',
  fixField: 'Bitte das markierte Feld korrigieren.',
  onceTitle: 'Nur jetzt sichtbar', onceHelp: 'Jetzt kopieren: der Server behält nur einen Hash oder eine versiegelte Kopie und kann den Wert nicht erneut zeigen.',
  copy: 'Kopieren', copied: 'Kopiert', done: 'Ich habe ihn kopiert',
  secretTitle: 'Secret des Warteraums', secretHelp: 'Shops und Proxys prüfen damit die Zugriffs-Tokens (HS256).',
  rotate: 'Secret erneuern', confirmRotate: 'Secret erneuern? Mit dem alten Secret signierte Tokens gelten beim Shop nicht mehr, sobald er das neue verwendet.',
  keys: 'API-Keys', keyName: 'Name des Keys', createKey: 'Key anlegen', revoke: 'Widerrufen', noKeys: 'Keine Keys.',
  keyHelp: 'Ein Key erreicht nur diesen Warteraum: Konfiguration lesen und ändern (z. B. aus der CI zum Vorverkaufsstart).',
  confirmRevoke: 'Den Key „{name}“ widerrufen?', created: 'Angelegt',
  codes: 'Bypass-Codes', codeLabel: 'Bezeichnung', usageLimit: 'Nutzungslimit (leer: unbegrenzt)', expiresAt: 'Gültig bis (leer: unbegrenzt)',
  createCode: 'Code anlegen', noCodes: 'Keine Codes.', uses: 'Nutzungen', expires: 'Gültig bis', disabled: 'gesperrt', enabled: 'aktiv',
  disable: 'Sperren', enable: 'Entsperren', codeLink: 'Link für diesen Code', never: 'nie', unlimited: 'unbegrenzt',
  confirmDeleteCode: 'Den Code „{label}“ löschen?',
  audit: 'Protokoll', at: 'Wann', actor: 'Wer', action: 'Was', detail: 'Details', noAudit: 'Noch nichts protokolliert.',
  intGateway: 'Gateway-Link (statt des Shop-Links veröffentlichen)', intPage: 'Gehostete Warteseite',
  intScript: 'Script-Tag für jede Shop-Seite', intEdge: 'Absicherung am Edge (Token-Prüfung offline im Proxy oder CDN)',
  intBackend: 'Prüfung im Backend des Shops', intSecretNote: 'ADITUS_QUEUE_SECRET auf das Secret des Warteraums setzen (einmalig beim Anlegen oder Erneuern angezeigt).',
  live: 'live', connecting: 'verbinde…', reconnecting: 'verbinde neu…', polling: 'Live-Socket nicht verfügbar: frage ab',
  socketRefused: 'Der Live-Socket hat diese Sitzung abgelehnt: {why}',
  gWaiting: 'Wartend', gInflow: 'Zulauf vs. Weiterleitung', gRate: 'Weiterleitungsrate', gWait: 'Wartezeit für Neue',
  perMin: '/min', ceiling: 'Obergrenze {n}/min', range: 'automatisch {min}–{max}/min', fixed: 'feste Rate',
  inflowOver: 'Zulauf schneller als Weiterleitung', inflowUnder: 'Weiterleitung hält Schritt',
  served: 'aufgerufen Nr. {n} · ausgegeben {i}', chartTitle: 'Wartende vs. Zulauf, letzte 30 Minuten',
  sWaiting: 'wartend', sInflow: 'Zulauf/min', sRate: 'Rate/min',
  adjustments: 'Anpassungen der Rate', noAdjustments: 'Keine automatischen Anpassungen.', rule: 'Regel', reason: 'Grund', change: 'Änderung',
  none: '—', now: 'keine Wartezeit', underMinute: 'unter einer Minute', minutes: '{n} Min.', hours: '{h} Std. {m} Min.',
  iId: 'Knoten', iRoles: 'Rollen', iVersion: 'Version', iUptime: 'Laufzeit', iCpu: 'CPU', iRss: 'Speicher', iHeap: 'Go-Heap',
  iGoroutines: 'Goroutinen', iSched: 'Sched p99', iRps: 'Anfr./s', iWs: 'Sockets', iReported: 'Gemeldet',
  noInstances: 'Noch keine Instanz hat sich gemeldet.', instancesUnavailable: 'Dieser Server meldet noch keine Instanzen.',
  error: 'Fehler: {msg}', loading: 'Lädt…', notFound: 'Diesen Warteraum gibt es nicht.', back: 'Alle Warteräume',
  // Lasttests
  lt_title: 'Lasttests', lt_intro: 'Ein Lasttest schickt echte Besucheranfragen über die öffentliche URL dieses Servers an einen Testraum, so wird der ganze Weg gemessen. Es läuft immer nur einer; produktive Räume werden nie berührt.',
  lt_start: 'Lasttest starten', lt_startButton: 'Starten', lt_startHint: 'Nur Testräume stehen zur Wahl (Räume mit angehaktem „Testraum“).',
  lt_noTestRooms: 'kein Testraum', lt_noTestRoomsHint: 'Es gibt noch keinen Testraum: zuerst einen Warteraum mit angehaktem „Testraum“ anlegen.',
  lt_siteId: 'Testraum', lt_profile: 'Profil', lt_ratePerSecond: 'Anfragen pro Sekunde', lt_durationSeconds: 'Dauer (Sekunden)',
  lt_p_join: 'Beitritte', lt_p_status: 'Statusabfragen', lt_p_mix: 'Mischung (1 Beitritt : 9 Abfragen)',
  lt_history: 'Verlauf', lt_older: 'Ältere Läufe', lt_noRuns: 'Noch kein Lasttest.', lt_started: 'Gestartet', lt_room: 'Raum',
  lt_rate: 'Rate / s', lt_duration: 'Dauer', lt_achieved: 'Erreicht / s', lt_p95: 'p95', lt_errorRate: 'Fehler', lt_regression: 'Regression',
  lt_noRegression: 'nein', lt_scheduled: 'geplant', lt_f_p99Ms: 'p99', lt_f_achievedRate: 'Rate', lt_f_errorRate: 'Fehler',
  lt_s_running: 'läuft', lt_s_finished: 'beendet', lt_s_stopped: 'gestoppt', lt_s_interrupted: 'unterbrochen', lt_s_failed: 'fehlgeschlagen', lt_s_skipped: 'übersprungen',
  lt_schedules: 'Zeitpläne', lt_noSchedules: 'Kein Zeitplan.', lt_cron: 'Cron (UTC)', lt_addSchedule: 'Zeitplan anlegen',
  lt_cronHint: 'Fünf Felder, in UTC: Minute Stunde Tag Monat Wochentag — „0 3 * * *“ ist jede Nacht um 03:00 UTC. Ein geplanter Lauf, der klar schlechter ist als die vorigen vergleichbaren, wird markiert.',
  lt_confirmDelete: 'Zeitplan „{cron}“ löschen?',
  lt_run: 'Lasttest', lt_stop: 'Stoppen', lt_chart: 'Durchsatz und Latenz pro Sekunde', lt_totals: 'Summen', lt_running: 'Läuft …',
  lt_gRate: 'Erreichte Rate', lt_gLatency: 'Latenz', lt_gErrors: 'Fehlerquote', lt_whole: 'ganzer Lauf', lt_thisSecond: 'letzte Sekunde',
  lt_errors: '{n} fehlgeschlagen', lt_sRate: 'Antworten / s', lt_sMs: 'ms', lt_requests: 'Anfragen', lt_ok: 'Erfolgreich beantwortet',
};

const catalog = { en, de };
const STORE = 'aq.lang';

export function lang() {
  const chosen = sessionStorage.getItem(STORE);
  if (chosen === 'de' || chosen === 'en') return chosen;
  return document.documentElement.lang === 'de' ? 'de' : 'en';
}

export function setLang(l) {
  sessionStorage.setItem(STORE, l);
  document.documentElement.lang = l;
}

// t answers the sentence for key in the current language with {name}
// placeholders filled from vars.
export function t(key, vars) {
  const s = catalog[lang()][key] ?? en[key] ?? key;
  if (!vars) return s;
  return s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
}

// num formats a number for the current language.
export function num(n, digits = 0) {
  if (n === null || n === undefined || Number.isNaN(n)) return t('none');
  return Number(n).toLocaleString(lang() === 'de' ? 'de-DE' : 'en-GB', { maximumFractionDigits: digits });
}

// when formats an RFC 3339 time in local time.
export function when(s) {
  if (!s) return t('none');
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) return t('none');
  return d.toLocaleString(lang() === 'de' ? 'de-DE' : 'en-GB', { dateStyle: 'short', timeStyle: 'medium' });
}

// duration formats seconds for a newcomer's wait.
export function duration(sec) {
  if (sec === null || sec === undefined) return t('none');
  if (sec <= 0) return t('now');
  if (sec < 60) return t('underMinute');
  const m = Math.round(sec / 60);
  if (m < 60) return t('minutes', { n: m });
  return t('hours', { h: Math.floor(m / 60), m: m % 60 });
}
