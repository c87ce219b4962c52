// End-to-end test of learner sign-in (docs/learner.md): login links from
// POST /api/v1/users/loginLink in a real Chromium, reuse and expiry (the
// server's test clock), open redirects refused, the session across a
// reload, logout through the API and from the portal, and the portal
// inside iframes: on a same-site host (the domain's own host name) it keeps
// its session; in a cross-site iframe it offers a new tab instead of
// looping. Run with ./run.sh (E2E_TESTS=e2e/signin.test.mjs).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { serverForTests, CHROMIUM, CHROME_ARGS, BIN, artifact, freePort } from './lib.mjs';

const execFileP = promisify(execFile);
const server = serverForTests('signin', { args: ['--test-clock'] });

let browser;
let courseId;

// lms calls the management API as the test domain.
async function lms(path, body) {
  const r = await fetch(`${server.base}/api/v1${path}`, {
    method: 'POST',
    headers: { Authorization: server.domain.api_key, 'x-domain-id': String(server.domain.domain_id), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: r.status, body: await r.json() };
}

async function loginLink(body) {
  const r = await lms('/users/loginLink', body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data.url;
}

async function setClock(now) {
  const r = await fetch(`${server.base}/_test/clock`, { method: 'POST', body: JSON.stringify({ now }), headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 200, await r.text());
}

const portal = () => `${server.base}/${server.domain.domain_id}/learn`;

// signedOutPage reports whether the page is the portal's sign-in page
// (HTTP 401, by reloading it; it never redirects).
async function signedOutPage(page) {
  const r = await page.reload();
  if (r.status() === 401) {
    assert.equal(r.request().redirectedFrom(), null, 'the sign-in page came from a redirect');
    return true;
  }
  assert.ok(r.status() < 400, `page status ${r.status()}`);
  return false;
}

async function shot(page, name) {
  await page.screenshot({ path: artifact(name), fullPage: true });
}

before(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true, timeout: 30_000,
    // school.test names resolve to this machine: www.school.test is the
    // school's site, learn.school.test the domain's own portal host.
    args: [...CHROME_ARGS, '--host-resolver-rules=MAP *.school.test 127.0.0.1'],
  });
  for (const email of ['ann@example.com', 'bob@example.com', 'cat@example.com']) {
    const r = await lms('/users/create', { username: email, email, name: `${email[0].toUpperCase()}${email.slice(1, 3)} Example` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const c = await lms('/courses/create', { course_name: 'Algebra 1', description: 'Numbers and letters' });
  assert.equal(c.status, 200, JSON.stringify(c.body));
  courseId = c.body.data.course_id;
  for (const email of ['ann@example.com', 'bob@example.com', 'cat@example.com']) {
    const e = await lms('/courses/enroll', { courseId, email });
    assert.equal(e.status, 200, JSON.stringify(e.body));
  }
}, { timeout: 60_000 });

after(async () => {
  await browser?.close();
});

describe('sign-in', () => {
  it('a login link signs in, lands on return_to on a clean URL, and survives a reload', async () => {
    const returnTo = `/courses/${courseId}`;
    const url = await loginLink({ email: 'ann@example.com', return_to: returnTo });
    assert.match(url, new RegExp(`^${portal()}/sso/consume\\?t=[A-Za-z0-9_-]{43}$`));
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    const consume = [];
    page.on('response', (r) => { if (r.url().includes('/sso/consume')) consume.push(r); });
    const resp = await page.goto(url);
    assert.equal(consume[0].status(), 303);
    assert.equal(consume[0].headers()['referrer-policy'], 'no-referrer');
    assert.equal(consume[0].headers()['cache-control'], 'no-store');
    assert.equal(page.url(), portal() + returnTo, 'lands on return_to without the token');
    assert.ok(resp.status() < 400, `landing page status ${resp.status()}`);
    assert.ok(!(await signedOutPage(page)), 'signed in');
    const cookie = (await ctx.cookies()).find((c) => c.name === `lectern-learn-${server.domain.domain_id}`);
    assert.ok(cookie, 'session cookie set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.ok(cookie.expires * 1000 > Date.now() + 29 * 86400_000, 'cookie lives 30 days');
    await shot(page, 'signin-landed.png');
    assert.ok(!(await signedOutPage(page)), 'still signed in after a reload');

    // The same link again, in another browser: refused.
    const ctx2 = await browser.newContext({ viewport: { width: 375, height: 812 } });
    const page2 = await ctx2.newPage();
    const reuse = await page2.goto(url);
    assert.equal(reuse.status(), 410);
    assert.match(await page2.locator('h1').textContent(), /used or has expired/);
    assert.equal(page2.url(), url);
    await shot(page2, 'signin-link-reused-375.png');
    assert.equal((await ctx2.cookies()).length, 0, 'no cookie from a used link');
    // The same page in Arabic, right to left.
    const ctx3 = await browser.newContext({ viewport: { width: 375, height: 812 }, locale: 'ar' });
    const page3 = await ctx3.newPage();
    assert.equal((await page3.goto(url)).status(), 410);
    assert.equal(await page3.getAttribute('html', 'dir'), 'rtl');
    assert.equal(await page3.getAttribute('html', 'lang'), 'ar');
    assert.match(await page3.locator('h1').textContent(), /رابط تسجيل الدخول/);
    await shot(page3, 'signin-link-reused-ar.png');
    await ctx3.close();
    await ctx.close();
    await ctx2.close();
  });

  it('a link expires on the server clock', async () => {
    const url = await loginLink({ email: 'ann@example.com', ttl: 30 });
    await setClock(new Date(Date.now() + 31_000).toISOString().replace(/\.\d+Z$/, 'Z'));
    try {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      const resp = await page.goto(url);
      assert.equal(resp.status(), 410);
      assert.match(await page.locator('h1').textContent(), /used or has expired/);
      await shot(page, 'signin-link-expired.png');
      await ctx.close();
    } finally {
      await setClock('');
    }
  });

  it('open redirects are refused', async () => {
    for (const bad of ['https://evil.example/', '//evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const r = await lms('/users/loginLink', { email: 'ann@example.com', return_to: bad });
      assert.equal(r.status, 400, `${bad}: ${JSON.stringify(r.body)}`);
      assert.ok(r.body.fields.some((f) => f.field === 'return_to'), JSON.stringify(r.body));
    }
    // The JWT entry checks return_to the same way, before anything else.
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const resp = await page.goto(`${portal()}/sso/jwt?jwt=x&return_to=${encodeURIComponent('https://evil.example/')}`);
    assert.equal(resp.status(), 400);
    assert.ok(page.url().startsWith(server.base), 'stayed on the server');
    assert.match(await page.locator('main').textContent(), /return_to/);
    await shot(page, 'signin-open-redirect-refused.png');
    await ctx.close();
  });

  it('logout through the API ends the session', async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(await loginLink({ email: 'bob@example.com' }));
    assert.ok(!(await signedOutPage(page)));
    const r = await lms('/users/logout', { email: 'bob@example.com' });
    assert.equal(r.status, 200);
    assert.equal(r.body.data.sessions_ended, 1);
    assert.ok(await signedOutPage(page), 'the sign-in page after logout');
    await shot(page, 'signin-after-api-logout.png');
    await ctx.close();
  });

  it('portal logout ends the session', async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(await loginLink({ email: 'cat@example.com' }));
    const form = page.locator('form[action$="/logout"]').first();
    await form.locator('button, [type="submit"]').first().click();
    await page.waitForLoadState();
    assert.match(await page.locator('h1').textContent(), /signed out/i);
    await shot(page, 'signin-portal-logout.png');
    await page.goto(portal() + '/');
    assert.ok(await signedOutPage(page));
    await ctx.close();
  });
});

// school starts the school's site: a page that embeds src in an iframe.
async function school(src) {
  const port = await freePort();
  const srv = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>School</title><h1>Our school</h1><iframe id="portal" src="${src}" style="width:900px;height:600px;border:1px solid #888"></iframe>`);
  });
  srv.listen(port, '127.0.0.1');
  await once(srv, 'listening');
  return { port, close: () => srv.close() };
}

describe('embedded portal', () => {
  it('in a cross-site iframe: a new-tab link that works, never a loop', async () => {
    const url = await loginLink({ email: 'ann@example.com', return_to: '/' });
    // localhost and 127.0.0.1 are different sites.
    const site = await school(url);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    let navigations = 0;
    page.on('framenavigated', (f) => { if (f !== page.mainFrame()) navigations++; });
    await page.goto(`http://localhost:${site.port}/`);
    const frame = page.frameLocator('#portal');
    const link = frame.locator('a', { hasText: 'Open in a new tab' });
    await link.waitFor();
    assert.equal(await link.getAttribute('target'), '_blank');
    await shot(page, 'signin-cross-site-iframe.png');
    await page.waitForTimeout(1000);
    assert.equal(navigations, 1, 'the iframe navigated once: no loop');
    const [tab] = await Promise.all([ctx.waitForEvent('page'), link.click()]);
    await tab.waitForLoadState();
    assert.equal(tab.url(), portal() + '/', 'the new tab signed in with the unspent link');
    assert.ok(!(await signedOutPage(tab)));
    await shot(tab, 'signin-cross-site-new-tab.png');
    await ctx.close();
    site.close();
  });

  it('on the domain\'s own host, same-site with the school: signed in inside the iframe', async () => {
    await execFileP(BIN, ['domain', 'set-host', '--domain', String(server.domain.domain_id), '--host', 'learn.school.test', '--data-dir', server.dataDir]);
    try {
      const url = await loginLink({ email: 'ann@example.com', return_to: '/' });
      const port = new URL(server.base).port;
      assert.ok(url.startsWith(`http://learn.school.test:${port}/sso/consume?t=`), url);
      const site = await school(url);
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await ctx.newPage();
      await page.goto(`http://www.school.test:${site.port}/`);
      const inner = page.frameLocator('#portal');
      await inner.locator('h1').first().waitFor();
      const body = await inner.locator('body').textContent();
      assert.ok(body.includes('Ann Example'), `iframe shows: ${body.slice(0, 300)}`);
      assert.ok(!body.includes('Open in a new tab'), `iframe shows: ${body.slice(0, 300)}`);
      await shot(page, 'signin-same-site-iframe.png');
      // The portal host set its cookie from inside the iframe.
      const cookies = await ctx.cookies(`http://learn.school.test:${port}/`);
      assert.ok(cookies.some((c) => c.name === `lectern-learn-${server.domain.domain_id}`), JSON.stringify(cookies));
      await ctx.close();
      site.close();
    } finally {
      await execFileP(BIN, ['domain', 'set-host', '--domain', String(server.domain.domain_id), '--host', '', '--data-dir', server.dataDir]);
    }
  });
});
