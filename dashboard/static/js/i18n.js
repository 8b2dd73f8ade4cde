// i18n.js holds every sentence of the console in German and English. The
// server picks the first language from Accept-Language (as the waiting page
// does) and writes it into <html lang>; the switch in the header overrides
// it for this browser session.

// words holds each sentence once, in English and in German side by side,
// so a key cannot miss its translation.
const words = {
  title: ['aditus-queue console', 'aditus-queue Konsole'],
  signIn: ['Sign in', 'Anmelden'],
  signInHelp: ['Sign in with the admin token that `aditus-queue serve` printed on its first start, or with a room’s API key (qak_…). It is kept only in this browser tab and sent as a bearer header.', 'Mit dem Admin-Token anmelden, den `aditus-queue serve` beim ersten Start ausgegeben hat, oder mit dem API-Key eines Warteraums (qak_…). Er bleibt nur in diesem Browser-Tab und wird als Bearer-Header gesendet.'],
  tokenLabel: ['Admin token or API key', 'Admin-Token oder API-Key'],
  signInFailed: ['This token or key was not accepted.', 'Dieser Token oder Key wurde nicht angenommen.'],
  signOut: ['Sign out', 'Abmelden'],
  langSwitch: ['Deutsch', 'English'],
  asAdmin: ['Operator', 'Betreiber'],
  asKey: ['API key', 'API-Key'],
  rooms: ['Waiting rooms', 'Warteräume'],
  instances: ['Instances', 'Instanzen'],
  newRoom: ['New waiting room', 'Neuer Warteraum'],
  noRooms: ['No waiting room yet.', 'Noch kein Warteraum.'],
  name: ['Name', 'Name'],
  slug: ['Slug', 'Slug'],
  state: ['State', 'Zustand'],
  waiting: ['Waiting', 'Wartend'],
  serving: ['Serving', 'Aufgerufen'],
  rate: ['Rate / min', 'Rate / min'],
  open: ['Open', 'Öffnen'],
  st_not_queueing: ['not queueing', 'keine Warteschlange'],
  st_queueing: ['queueing', 'Warteschlange'],
  st_paused: ['paused', 'pausiert'],
  st_prequeue: ['pre-queue', 'Vorab-Warteschlange'],
  st_drawn: ['draw made', 'ausgelost'],
  tabLive: ['Live', 'Live'],
  tabSettings: ['Settings', 'Einstellungen'],
  tabAccess: ['Keys & codes', 'Keys & Codes'],
  tabAudit: ['Audit log', 'Protokoll'],
  tabIntegration: ['Integration', 'Einbindung'],
  pause: ['Pause', 'Pausieren'],
  resume: ['Resume', 'Fortsetzen'],
  setRate: ['Set rate', 'Rate setzen'],
  rateNow: ['Admission rate per minute', 'Weiterleitungsrate pro Minute'],
  rateSet: ['Rate set to {n}/min.', 'Rate auf {n}/min gesetzt.'],
  paused: ['Paused: no numbers are issued, nobody is admitted.', 'Pausiert: keine neuen Nummern, keine Weiterleitung.'],
  resumed: ['Admission resumed.', 'Weiterleitung fortgesetzt.'],
  save: ['Save', 'Speichern'],
  create: ['Create', 'Anlegen'],
  cancel: ['Cancel', 'Abbrechen'],
  delete: ['Delete', 'Löschen'],
  saved: ['Saved.', 'Gespeichert.'],
  deleteRoom: ['Delete this waiting room', 'Diesen Warteraum löschen'],
  confirmDelete: ['Delete “{name}” for good? Waiting visitors lose their place.', '„{name}“ endgültig löschen? Wartende verlieren ihren Platz.'],
  // form
  fGeneral: ['Room', 'Warteraum'],
  fLook: ['Waiting page', 'Warteseite'],
  fAdmission: ['Admission', 'Weiterleitung'],
  fProtection: ['Protection', 'Schutz'],
  fAutoRate: ['Self-regulating rate', 'Selbstregelnde Rate'],
  f_slug: ['Slug (in every visitor URL, fixed once created)', 'Slug (in jeder Besucher-URL, nach dem Anlegen fest)'],
  f_name: ['Name shown to visitors', 'Name für Besucher'],
  f_targetUrl: ['Target URL (the shop)', 'Ziel-URL (der Shop)'],
  f_domains: ['Shop domains (host names, one per line)', 'Shop-Domains (Hostnamen, eine pro Zeile)'],
  f_ratePerMinute: ['Admission rate per minute', 'Weiterleitungsrate pro Minute'],
  f_active: ['Active (unticked: paused)', 'Aktiv (ohne Haken: pausiert)'],
  f_message: ['Message under the title', 'Hinweis unter dem Titel'],
  f_headerImageUrl: ['Header image URL', 'URL des Kopfbilds'],
  f_accentColor: ['Accent colour (#rrggbb)', 'Akzentfarbe (#rrggbb)'],
  f_tokenTtlSeconds: ['Admission token lifetime (seconds)', 'Gültigkeit des Zugriffs-Tokens (Sekunden)'],
  f_burstSeconds: ['Burst (seconds of the rate kept while quiet)', 'Burst (Sekunden der Rate, die ruhig aufgespart werden)'],
  f_opensAt: ['Opens at (local time; empty: open now)', 'Öffnet um (Ortszeit; leer: sofort offen)'],
  f_allowBareNumber: ['Allow bare waiting numbers (seed integrations)', 'Reine Wartenummern erlauben (Seed-Integrationen)'],
  f_test: ['Test room (load tests allowed)', 'Testraum (Lasttests erlaubt)'],
  f_pow_enabled: ['Proof of work before a number', 'Proof of Work vor der Nummer'],
  f_pow_bits: ['Difficulty (bits, 8–24)', 'Schwierigkeit (Bits, 8–24)'],
  f_abandon_enabled: ['Detect abandoned numbers', 'Verlassene Nummern erkennen'],
  f_abandon_graceSeconds: ['Grace (seconds, 60–3600)', 'Karenz (Sekunden, 60–3600)'],
  f_autoRate_enabled: ['Regulate the rate by the shop’s health', 'Rate nach der Gesundheit des Shops regeln'],
  f_autoRate_healthUrl: ['Health URL', 'Health-URL'],
  f_autoRate_minRate: ['Minimum rate / min', 'Mindestrate / min'],
  f_autoRate_maxRate: ['Maximum rate / min (ceiling)', 'Höchstrate / min (Obergrenze)'],
  f_autoRate_intervalSeconds: ['Check every (seconds, 5–600)', 'Prüfen alle (Sekunden, 5–600)'],
  f_autoRate_raisePercent: ['Raise per healthy check (%)', 'Anheben je gesunder Prüfung (%)'],
  f_autoRate_cutPercent: ['Cut on a violated rule (%)', 'Senken bei verletzter Regel (%)'],
  f_autoRate_maxFailures: ['Failed checks before falling to the minimum', 'Fehlschläge bis zur Mindestrate'],
  f_autoRate_rules: ['Rules (the response time is the metric responseMs)', 'Regeln (die Antwortzeit ist die Metrik responseMs)'],
  addRule: ['Add rule', 'Regel hinzufügen'],
  removeRule: ['Remove', 'Entfernen'],
  ruleMetric: ['Metric', 'Metrik'],
  ruleOp: ['Op', 'Op'],
  ruleValue: ['Value', 'Wert'],
  healthTest: ['Test the health URL', 'Health-URL testen'],
  healthHint: ['Save the health URL first, test it, then enable the regulation: the server requires a passing test.', 'Erst die Health-URL speichern, dann testen, dann die Regelung einschalten: der Server verlangt einen bestandenen Test.'],
  healthOk: ['Healthy: HTTP {status} in {ms} ms.', 'Gesund: HTTP {status} in {ms} ms.'],
  healthBad: ['Not healthy: {why}', 'Nicht gesund: {why}'],
  healthUnavailable: ['This server cannot test health URLs yet.', 'Dieser Server kann Health-URLs noch nicht testen.'],
  observed: ['observed', 'gemessen'],
  passed: ['passed', 'erfüllt'],
  failed: ['failed', 'verletzt'],
  fixField: ['Please correct the marked field.', 'Bitte das markierte Feld korrigieren.'],
  // secrets
  onceTitle: ['Shown this once', 'Nur jetzt sichtbar'],
  onceHelp: ['Copy it now: the server keeps only a hash or a sealed copy and cannot show it again.', 'Jetzt kopieren: der Server behält nur einen Hash oder eine versiegelte Kopie und kann den Wert nicht erneut zeigen.'],
  copy: ['Copy', 'Kopieren'],
  copied: ['Copied', 'Kopiert'],
  done: ['I have copied it', 'Ich habe ihn kopiert'],
  secretTitle: ['Room secret', 'Secret des Warteraums'],
  secretHelp: ['Shops and proxies verify admission tokens with it (HS256).', 'Shops und Proxys prüfen damit die Zugriffs-Tokens (HS256).'],
  rotate: ['Rotate secret', 'Secret erneuern'],
  confirmRotate: ['Rotate the secret? Tokens signed with the old secret stop verifying at the shop as soon as it uses the new one.', 'Secret erneuern? Mit dem alten Secret signierte Tokens gelten beim Shop nicht mehr, sobald er das neue verwendet.'],
  keys: ['API keys', 'API-Keys'],
  keyName: ['Key name', 'Name des Keys'],
  createKey: ['Create key', 'Key anlegen'],
  revoke: ['Revoke', 'Widerrufen'],
  noKeys: ['No keys.', 'Keine Keys.'],
  keyHelp: ['A key reaches only this room: read and change its configuration (e.g. from CI at the on-sale).', 'Ein Key erreicht nur diesen Warteraum: Konfiguration lesen und ändern (z. B. aus der CI zum Vorverkaufsstart).'],
  confirmRevoke: ['Revoke the key “{name}”?', 'Den Key „{name}“ widerrufen?'],
  created: ['Created', 'Angelegt'],
  codes: ['Bypass codes', 'Bypass-Codes'],
  codeLabel: ['Label', 'Bezeichnung'],
  usageLimit: ['Usage limit (empty: unlimited)', 'Nutzungslimit (leer: unbegrenzt)'],
  expiresAt: ['Expires at (empty: never)', 'Gültig bis (leer: unbegrenzt)'],
  createCode: ['Create code', 'Code anlegen'],
  noCodes: ['No codes.', 'Keine Codes.'],
  uses: ['Uses', 'Nutzungen'],
  expires: ['Expires', 'Gültig bis'],
  disabled: ['disabled', 'gesperrt'],
  enabled: ['enabled', 'aktiv'],
  disable: ['Disable', 'Sperren'],
  enable: ['Enable', 'Entsperren'],
  codeLink: ['Link for this code', 'Link für diesen Code'],
  never: ['never', 'nie'],
  unlimited: ['unlimited', 'unbegrenzt'],
  confirmDeleteCode: ['Delete the code “{label}”?', 'Den Code „{label}“ löschen?'],
  audit: ['Audit log', 'Protokoll'],
  at: ['When', 'Wann'],
  actor: ['Who', 'Wer'],
  action: ['What', 'Was'],
  detail: ['Detail', 'Details'],
  noAudit: ['Nothing recorded yet.', 'Noch nichts protokolliert.'],
  // integration
  intGateway: ['Gateway link (publish it instead of the shop link)', 'Gateway-Link (statt des Shop-Links veröffentlichen)'],
  intPage: ['Hosted waiting page', 'Gehostete Warteseite'],
  intScript: ['Script tag for every shop page', 'Script-Tag für jede Shop-Seite'],
  intEdge: ['Edge enforcement (offline token check at the proxy or CDN)', 'Absicherung am Edge (Token-Prüfung offline im Proxy oder CDN)'],
  intBackend: ['Verification in the shop’s backend', 'Prüfung im Backend des Shops'],
  intSecretNote: ['Set ADITUS_QUEUE_SECRET to the room’s secret (shown once at creation or rotation).', 'ADITUS_QUEUE_SECRET auf das Secret des Warteraums setzen (einmalig beim Anlegen oder Erneuern angezeigt).'],
  // live
  live: ['live', 'live'],
  connecting: ['connecting…', 'verbinde…'],
  reconnecting: ['reconnecting…', 'verbinde neu…'],
  polling: ['live socket unavailable: polling', 'Live-Socket nicht verfügbar: frage ab'],
  socketRefused: ['The live socket refused this session: {why}', 'Der Live-Socket hat diese Sitzung abgelehnt: {why}'],
  gWaiting: ['Waiting', 'Wartend'],
  gInflow: ['Inflow vs admission', 'Zulauf vs. Weiterleitung'],
  gRate: ['Admission rate', 'Weiterleitungsrate'],
  gWait: ['Wait for a newcomer', 'Wartezeit für Neue'],
  perMin: ['/min', '/min'],
  ceiling: ['ceiling {n}/min', 'Obergrenze {n}/min'],
  range: ['auto {min}–{max}/min', 'automatisch {min}–{max}/min'],
  fixed: ['fixed rate', 'feste Rate'],
  inflowOver: ['arriving faster than admitted', 'Zulauf schneller als Weiterleitung'],
  inflowUnder: ['admission keeps up', 'Weiterleitung hält Schritt'],
  served: ['serving #{n} · issued {i}', 'aufgerufen Nr. {n} · ausgegeben {i}'],
  chartTitle: ['Waiting vs inflow, last 30 minutes', 'Wartende vs. Zulauf, letzte 30 Minuten'],
  sWaiting: ['waiting', 'wartend'],
  sInflow: ['inflow/min', 'Zulauf/min'],
  sRate: ['rate/min', 'Rate/min'],
  adjustments: ['Rate adjustments', 'Anpassungen der Rate'],
  noAdjustments: ['No automatic adjustments.', 'Keine automatischen Anpassungen.'],
  rule: ['Rule', 'Regel'],
  reason: ['Reason', 'Grund'],
  change: ['Change', 'Änderung'],
  none: ['—', '—'],
  now: ['no wait', 'keine Wartezeit'],
  underMinute: ['under a minute', 'unter einer Minute'],
  minutes: ['{n} min', '{n} Min.'],
  hours: ['{h} h {m} min', '{h} Std. {m} Min.'],
  // instances
  iId: ['Node', 'Knoten'],
  iRoles: ['Roles', 'Rollen'],
  iVersion: ['Version', 'Version'],
  iUptime: ['Uptime', 'Laufzeit'],
  iCpu: ['CPU', 'CPU'],
  iRss: ['Memory', 'Speicher'],
  iHeap: ['Go heap', 'Go-Heap'],
  iGoroutines: ['Goroutines', 'Goroutinen'],
  iSched: ['Sched p99', 'Sched p99'],
  iRps: ['Req/s', 'Anfr./s'],
  iWs: ['Sockets', 'Sockets'],
  iReported: ['Reported', 'Gemeldet'],
  noInstances: ['No instance has reported yet.', 'Noch keine Instanz hat sich gemeldet.'],
  instancesUnavailable: ['This server does not report instances yet.', 'Dieser Server meldet noch keine Instanzen.'],
  error: ['Error: {msg}', 'Fehler: {msg}'],
  loading: ['Loading…', 'Lädt…'],
  notFound: ['No such waiting room.', 'Diesen Warteraum gibt es nicht.'],
  back: ['All rooms', 'Alle Warteräume'],
  // load tests
  lt_title: ['Load tests', 'Lasttests'],
  lt_intro: ['A load test sends real visitor requests to a test room through this server’s public URL, so the whole path is measured. One runs at a time; production rooms are never touched.', 'Ein Lasttest schickt echte Besucheranfragen über die öffentliche URL dieses Servers an einen Testraum, so wird der ganze Weg gemessen. Es läuft immer nur einer; produktive Räume werden nie berührt.'],
  lt_start: ['Start a load test', 'Lasttest starten'],
  lt_startButton: ['Start', 'Starten'],
  lt_startHint: ['Only test rooms are listed (rooms created with “Test room” ticked).', 'Nur Testräume stehen zur Wahl (Räume mit angehaktem „Testraum“).'],
  lt_noTestRooms: ['no test room', 'kein Testraum'],
  lt_noTestRoomsHint: ['There is no test room yet: create a waiting room with “Test room” ticked first.', 'Es gibt noch keinen Testraum: zuerst einen Warteraum mit angehaktem „Testraum“ anlegen.'],
  lt_siteId: ['Test room', 'Testraum'],
  lt_profile: ['Profile', 'Profil'],
  lt_ratePerSecond: ['Requests per second', 'Anfragen pro Sekunde'],
  lt_durationSeconds: ['Duration (seconds)', 'Dauer (Sekunden)'],
  lt_p_join: ['joins', 'Beitritte'],
  lt_p_status: ['status polls', 'Statusabfragen'],
  lt_p_mix: ['mix (1 join : 9 polls)', 'Mischung (1 Beitritt : 9 Abfragen)'],
  lt_history: ['History', 'Verlauf'],
  lt_older: ['Older runs', 'Ältere Läufe'],
  lt_noRuns: ['No load test yet.', 'Noch kein Lasttest.'],
  lt_started: ['Started', 'Gestartet'],
  lt_room: ['Room', 'Raum'],
  lt_rate: ['Rate / s', 'Rate / s'],
  lt_duration: ['Duration', 'Dauer'],
  lt_achieved: ['Achieved / s', 'Erreicht / s'],
  lt_p95: ['p95', 'p95'],
  lt_errorRate: ['Errors', 'Fehler'],
  lt_regression: ['Regression', 'Regression'],
  lt_noRegression: ['no', 'nein'],
  lt_scheduled: ['scheduled', 'geplant'],
  lt_f_p99Ms: ['p99', 'p99'],
  lt_f_achievedRate: ['rate', 'Rate'],
  lt_f_errorRate: ['errors', 'Fehler'],
  lt_s_running: ['running', 'läuft'],
  lt_s_finished: ['finished', 'beendet'],
  lt_s_stopped: ['stopped', 'gestoppt'],
  lt_s_interrupted: ['interrupted', 'unterbrochen'],
  lt_s_failed: ['failed', 'fehlgeschlagen'],
  lt_s_skipped: ['skipped', 'übersprungen'],
  lt_schedules: ['Schedules', 'Zeitpläne'],
  lt_noSchedules: ['No schedule.', 'Kein Zeitplan.'],
  lt_cron: ['Cron (UTC)', 'Cron (UTC)'],
  lt_addSchedule: ['Add schedule', 'Zeitplan anlegen'],
  lt_cronHint: ['Five fields, in UTC: minute hour day month weekday — “0 3 * * *” is every night at 03:00 UTC. A scheduled run clearly worse than the previous comparable runs is flagged.', 'Fünf Felder, in UTC: Minute Stunde Tag Monat Wochentag — „0 3 * * *“ ist jede Nacht um 03:00 UTC. Ein geplanter Lauf, der klar schlechter ist als die vorigen vergleichbaren, wird markiert.'],
  lt_confirmDelete: ['Delete the schedule “{cron}”?', 'Zeitplan „{cron}“ löschen?'],
  lt_run: ['Load test', 'Lasttest'],
  lt_stop: ['Stop', 'Stoppen'],
  lt_chart: ['Throughput and latency, per second', 'Durchsatz und Latenz pro Sekunde'],
  lt_totals: ['Totals', 'Summen'],
  lt_running: ['Running…', 'Läuft …'],
  lt_gRate: ['Achieved rate', 'Erreichte Rate'],
  lt_gLatency: ['Latency', 'Latenz'],
  lt_gErrors: ['Error rate', 'Fehlerquote'],
  lt_whole: ['whole run', 'ganzer Lauf'],
  lt_thisSecond: ['last second', 'letzte Sekunde'],
  lt_errors: ['{n} failed', '{n} fehlgeschlagen'],
  lt_sRate: ['answers / s', 'Antworten / s'],
  lt_sMs: ['ms', 'ms'],
  lt_requests: ['Requests', 'Anfragen'],
  lt_ok: ['Answered OK', 'Erfolgreich beantwortet'],
};

const column = { en: 0, de: 1 };
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
  const s = words[key]?.[column[lang()]] ?? key;
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
