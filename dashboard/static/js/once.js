// once.js shows a value the server reveals only once (a room secret, an
// API key, a bypass code) with a copy button. The value lives only in this
// box: dismissing it removes it from the page for good.

import { h } from './dom.js';
import { t } from './i18n.js';
import { copyButton } from './dom.js';

// onceBox answers the box; extra lines (label, value) are shown below the
// value, each with its own copy button (e.g. a bypass code's link).
export function onceBox(title, value, extra = []) {
  const v = h('code', { class: 'once-value', 'data-once': '' }, value);
  const box = h('div', { class: 'once', role: 'alert' },
    h('h3', {}, `${title} — ${t('onceTitle')}`),
    h('p', { class: 'hint' }, t('onceHelp')),
    h('div', { class: 'once-row' }, v, copyButton(t('copy'), t('copied'), value, v)),
    extra.map(([label, text]) => {
      const c = h('code', { class: 'once-value' }, text);
      return h('div', { class: 'once-row' }, h('span', { class: 'once-label' }, label), c, copyButton(t('copy'), t('copied'), text, c));
    }),
    h('button', { type: 'button', class: 'small', onclick: () => box.remove() }, t('done')));
  return box;
}
