// The operator console's browser steps, shared by its tests and the
// README's picture: open /admin/ in a fresh context, and sign in.

import assert from 'node:assert/strict';

// desktop is the console's usual window.
export const desktop = { viewport: { width: 1280, height: 900 }, locale: 'en-GB' };

// openConsole opens base's console in a new context of browser, with
// opts for the context. The page collects its errors in problems (socket
// failures and failed loads aside: tests provoke them), and accepts the
// confirm() dialogs.
export async function openConsole(browser, base, opts = desktop) {
  const ctx = await browser.newContext(opts);
  const page = await ctx.newPage();
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/WebSocket|Failed to load resource/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('dialog', (d) => d.accept());
  const res = await page.goto(`${base}/admin/`);
  assert.equal(res.status(), 200);
  return { ctx, page, problems };
}

// signIn submits tok on the sign-in form.
export async function signIn(page, tok) {
  await page.fill('#token', tok);
  await page.click('#sign-in button[type=submit]');
}

// signedIn signs in with tok and waits for the list of rooms.
export async function signedIn(page, tok) {
  await signIn(page, tok);
  await page.waitForSelector('#rooms');
}
