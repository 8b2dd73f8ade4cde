// i18n.js: the page's words and figures in the visitor's language. The
// sentences themselves come from the server (the page data's i18n, from
// package web's catalogue, so the translations live in one place); this
// module fills in their {placeholders} and formats numbers, waits and
// countdowns.

// fill replaces each {key} in template with values[key]; unknown keys stay.
export function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));
}

// words answers the formatters for lang (a language of the catalogue, as
// the server chose it) over the catalogue t. Numbers, units of time and
// dates are Intl's, in lang's own digits and words.
export function words(lang, t) {
  const numbers = new Intl.NumberFormat(lang);
  const number = (n) => numbers.format(n);
  const units = {};
  // unit says n minutes, hours or days ("5 minutes", "5 Minuten", "5分").
  const unit = (n, name, display) => {
    const key = name + display;
    if (!units[key]) units[key] = new Intl.NumberFormat(lang, { style: 'unit', unit: name, unitDisplay: display });
    return units[key].format(n);
  };
  const dates = new Intl.DateTimeFormat(lang, { dateStyle: 'full', timeStyle: 'short' });

  // wait says how long seconds is, for a visitor with ahead people before
  // them; "–" when unknown.
  function wait(seconds, ahead, paused) {
    if (paused) return t.waitPaused;
    if (seconds === null || !isFinite(seconds)) return '–';
    if (ahead === 0 || seconds < 60) return t.waitUnderOne;
    const minutes = Math.max(1, Math.round(seconds / 60));
    if (minutes < 60) return fill(t.waitMinutes, { n: unit(minutes, 'minute', 'long') });
    return fill(t.waitHours, { h: unit(Math.floor(minutes / 60), 'hour', 'short'), m: unit(minutes % 60, 'minute', 'short') });
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
    return unit(days, 'day', 'long') + ' ' + clock;
  }

  // date says when ms (a time on the server's clock) is, in the
  // visitor's time zone.
  const date = (ms) => dates.format(new Date(ms));

  return { t, lang, number, wait, countdown, date };
}
