/* nomodule.js: the waiting page's word to a browser too old for its ES
   modules. The page loads it with nomodule, so a browser that runs the
   modules never fetches it; where it runs, the page cannot keep a place,
   and says so instead of showing "Getting your waiting number…" for ever.
   ES5 only. */
(function () {
  'use strict';

  function show() {
    var card = document.getElementById('aq-card');
    var data = document.getElementById('aq-room');
    // A browser that ran room.js anyway (some ran both) keeps its page.
    if (!card || !data || card.getAttribute('data-script')) return;
    var text;
    try {
      text = JSON.parse(data.textContent).i18n.oldBrowser;
    } catch (e) {
      return;
    }
    document.getElementById('aq-banner-text').textContent = text;
    document.getElementById('aq-banner').hidden = false;
    card.setAttribute('data-state', 'unsupported');
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', show);
  else show();
})();
