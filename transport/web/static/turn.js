// turn.js: tells a visitor whose page is in the background (another tab
// or window in front) that their turn has come: the page title changes and,
// where the visitor allowed it, a system notification appears. Permission
// is asked for once, and only when the visitor clicks the offer.

import { fill } from './i18n.js';

const ASKED_KEY = 'aq-notify-asked';

export function turnNotice(t, name) {
  const title = document.title;
  let told = false;

  // background reports whether the visitor is looking elsewhere.
  function background() {
    return document.hidden || !document.hasFocus();
  }

  // tell changes the title and shows the notification, once per turn.
  function tell(card) {
    if (told) return;
    told = true;
    document.title = fill(t.turnTitle, { name: name });
    if (!('Notification' in window) || Notification.permission !== 'granted') return;
    try {
      const n = new Notification(t.admitted, { body: name, tag: 'aq-turn', requireInteraction: true });
      n.onshow = () => card.setAttribute('data-notified', 'shown');
      n.onclick = () => {
        window.focus();
        n.close();
      };
      card.setAttribute('data-notified', 'created');
    } catch (e) {
      /* a browser that only notifies from a service worker: the title tells */
    }
  }

  function reset() {
    told = false;
    document.title = title;
  }

  // offerable reports whether the page may offer to notify: the browser
  // can, and the visitor has been asked neither by us nor by the browser.
  function offerable() {
    if (!('Notification' in window) || Notification.permission !== 'default') return false;
    try {
      return localStorage.getItem(ASKED_KEY) === null;
    } catch (e) {
      return true;
    }
  }

  // ask asks for the permission; it must run in the visitor's click.
  function ask(done) {
    try {
      localStorage.setItem(ASKED_KEY, '1');
    } catch (e) {
      /* without storage the browser's own answer keeps it from asking twice */
    }
    Promise.resolve(Notification.requestPermission()).then(done, done);
  }

  return { background, tell, reset, offerable, ask };
}
