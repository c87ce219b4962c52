// End-to-end test of the test gateway's hosted checkout page
// (docs/api/payments.md): apiclasspayment without card fields answers a
// checkout page; in a real Chromium a declined test card shows its reason
// and leaves the order open, 4242 4242 4242 4242 pays and returns the buyer
// to returnUrl, the purchase is listed by listpurchases; Cancel returns the
// buyer to cancelUrl; the card numbers typed are not in the server's log. Run with ./run.sh (E2E_TESTS=e2e/payments.test.mjs).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { serverForTests, CHROMIUM, CHROME_ARGS, BIN, artifact } from './lib.mjs';

const execFileP = promisify(execFile);
const server = serverForTests('payments');

let browser;
let classId;
let priceId;

const b64 = (s) => Buffer.from(s).toString('base64');
const one = (res) => (Array.isArray(res) ? res[0] : res) || {};

async function shot(page, name) {
  await page.screenshot({ path: artifact(name), fullPage: true });
}

async function startCheckout() {
  const res = one(await server.api('apiclasspayment', {
    class_id: classId, price_id: priceId, student_email: 'ann@example.com',
    returnUrl: b64(`${server.base}/healthz?paid=1`), cancelUrl: b64(`${server.base}/healthz?cancelled=1`),
  }));
  assert.equal(res.status, 'ok', JSON.stringify(res));
  assert.ok(res.checkout_url?.startsWith(`${server.base}/payments/test/checkout/`), JSON.stringify(res));
  return res;
}

describe('test gateway checkout page', () => {
  before(async () => {
    await execFileP(BIN, ['domain', 'set-payment', '--domain', String(server.domain.domain_id), '--gateway', 'test',
      '--data-dir', server.dataDir], { timeout: 30_000 });
    classId = await server.schedule('Paid class', { ispaid: 1, currency: 'EUR' });
    const p = one(await server.api('addSchemes', { class_id: classId, price: '19.90', scheme_days: '30', times: '1', numbertimes: '4' }));
    priceId = String(p['Price id'] ?? p.price_id);
    assert.ok(priceId !== 'undefined', JSON.stringify(p));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, timeout: 30_000, args: CHROME_ARGS });
  }, { timeout: 60_000 });
  
  after(async () => {
    await browser?.close();
  });

  it('declines, then pays and returns the buyer', { timeout: 60_000 }, async () => {
    const start = await startCheckout();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    const r = await page.goto(start.checkout_url);
    assert.equal(r.status(), 200);
    assert.match(await page.textContent('h1'), /Order \d+/);
    assert.match(await page.textContent('table'), /Paid class/);
    assert.match(await page.textContent('tr.total'), /19\.90 EUR/);
    await shot(page, 'payments-checkout.png');

    await page.fill('#card_number', '4000 0000 0000 0002');
    await Promise.all([page.waitForNavigation(), page.click('button.pay')]);
    assert.equal(await page.textContent('.error'), 'Your card was declined.');
    await shot(page, 'payments-declined.png');

    await page.fill('#card_number', '4242 4242 4242 4242');
    await Promise.all([page.waitForURL(/healthz\?paid=1/), page.click('button.pay')]);
    assert.equal(new URL(page.url()).searchParams.get('paid'), '1');

    const list = await server.api('listpurchases', { class_id: classId });
    const grant = one(list);
    assert.equal(grant.email, 'ann@example.com', JSON.stringify(list));
    // A write answer carries ids as numbers in the compat style, records as strings.
    assert.equal(String(grant.order_id), String(start.order_id));
    assert.equal(grant.numbertimes, '4');
    assert.equal(grant.valid, '1');

    // The page of a paid order says so and offers no form.
    await page.goto(start.checkout_url);
    assert.match(await page.textContent('main'), /This order is paid/);
    assert.equal(await page.locator('form').count(), 0);
    await shot(page, 'payments-paid.png');
    await page.close();
  });

  it('cancels and returns the buyer to cancelUrl', { timeout: 60_000 }, async () => {
    const start = await startCheckout();
    const page = await browser.newPage();
    await page.goto(start.checkout_url);
    await Promise.all([page.waitForURL(/healthz\?cancelled=1/), page.click('button.cancel')]);
    await page.goto(start.checkout_url);
    assert.match(await page.textContent('main'), /This order is failed\. The buyer cancelled the checkout\./);
    await shot(page, 'payments-cancelled.png');
    await page.close();
    // The card numbers typed on the page are nowhere in the server's log.
    const logText = fs.readFileSync(server.logFile, 'utf8');
    assert.match(logText, /payments\/test\/checkout/);
    assert.doesNotMatch(logText, /4242 ?4242 ?4242 ?4242|4000 ?0000 ?0000 ?0002/);
  });
});
