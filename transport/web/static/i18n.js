// i18n.js: the page's words and figures in the visitor's language. The
// sentences themselves come from the server (the page data's i18n, from
// package web's catalogue, so the translations live in one place); this
// module fills in their {placeholders} and formats numbers, waits and
// countdowns.

// fill replaces each {key} in template with values[key]; unknown keys stay.
export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));
}

// words answers the formatters for lang ("de" or "en") over the catalogue t.
export function words(lang, t) {
  const numbers = new Intl.NumberFormat(lang === 'de' ? 'de-DE' : 'en-GB');
  const number = (n) => numbers.format(n);

  // wait says how long seconds is, for a visitor with ahead people before
  // them; "–" when unknown.
  function wait(seconds, ahead, paused) {
    if (paused) return t.waitPaused;
    if (seconds === null || !isFinite(seconds)) return '–';
    if (ahead === 0 || seconds < 60) return t.waitUnderOne;
    const minutes = Math.round(seconds / 60);
    if (minutes <= 1) return t.waitOne;
    if (minutes < 60) return fill(t.waitMinutes, { n: number(minutes) });
    return fill(t.waitHours, { h: number(Math.floor(minutes / 60)), m: number(minutes % 60) });
  }

  // countdown shows ms as hh:mm:ss, with the days in words before it.
  function countdown(ms) {
    let s = Math.max(0, Math.ceil(ms / 1000));
    const days = Math.floor(s / 86400);
    s -= days * 86400;
    const clock = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60]
      .map((n) => (n < 10 ? '0' + n : String(n)))
      .join(':');
    if (days === 0) return clock;
    return (days === 1 ? t.dayOne : fill(t.dayMany, { n: number(days) })) + ' ' + clock;
  }

  return { t, lang, number, wait, countdown };
}
