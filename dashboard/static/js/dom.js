// dom.js builds elements. Text is always set with textContent and attributes
// with setAttribute, so no value from the server or the operator is ever
// parsed as markup.

// h creates an element: h('a', {href: '#/', class: 'x', onclick: fn}, 'text', child…).
// Attributes named on… become listeners; null, undefined and false are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// clear empties el and appends children.
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// setText sets el's text when it changed (cheap for once-a-second frames).
export function setText(el, text) {
  const s = String(text);
  if (el.textContent !== s) el.textContent = s;
}

// copyButton copies value to the clipboard; where the clipboard is not
// allowed it selects the shown value so the operator can copy it by hand.
export function copyButton(label, doneLabel, value, target) {
  const b = h('button', { type: 'button', class: 'small', 'data-copy': '' }, label);
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      b.textContent = doneLabel;
    } catch {
      if (target) {
        const r = document.createRange();
        r.selectNodeContents(target);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(r);
      }
    }
  });
  return b;
}
