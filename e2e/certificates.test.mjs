// End-to-end tests of the public certificate pages (docs/api/learning.md,
// Certificates): certificates issued through the management API, checked
// in headless Chromium on /verify/{code} (valid, then revoked after the
// API revokes), names in Arabic, Chinese, Japanese and Cyrillic shown as
// they are, the phone width, and the PDF read back with pdftotext and its
// QR code with zbarimg. The full "last lesson → certificate" flow through
// the portal is the portal's test (learn.test.mjs).
// Run with ./run.sh.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { serverForTests, lmsApi, axeCheck, log, artifact, CHROMIUM, CHROME_ARGS, pdfText, pdfQRCodes } from './lib.mjs';

const server = serverForTests('certificates');
const lms = lmsApi(server);

// The learners: one name per script the page must show as it is.
const learners = [
  { key: 'latin', name: 'Ann Example', email: 'ann@example.com' },
  { key: 'arabic', name: 'فاطمة الزهراء', email: 'fatima@example.com', rtl: true },
  { key: 'chinese', name: '王小明', email: 'wang@example.com' },
  { key: 'japanese', name: '山田 花子', email: 'hanako@example.com' },
  { key: 'cyrillic', name: 'Анна Каренина', email: 'anna@example.com' },
];

let browser;
const certs = {}; // by learner key: the API's certificate

async function openPage(url, viewport = { width: 1024, height: 768 }) {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  page.setDefaultTimeout(15_000);
  const resp = await page.goto(url);
  return { ctx, page, resp };
}

describe('certificates', () => {
  before(async () => {
    const course = await lms('POST', '/courses/create', { course_name: 'Astronomy 101' });
    const courseId = course.data.course_id;
    const tpl = await lms('POST', '/certificates/templates/create', {
      name: 'E2E', signer_name: 'Dr. Ada Lovelace', signer_title: 'Director of Studies', primary_color: '#1f3a5f',
    });
    await lms('PUT', `/courses/certificate/${courseId}`, { template_id: tpl.data.id });
    for (const l of learners) {
      await lms('POST', '/users/create', { username: l.email, email: l.email, name: l.name });
      const c = await lms('POST', '/certificates/issue', { courseId, email: l.email });
      certs[l.key] = c.data;
      log(`issued ${c.data.code} to ${l.key}`);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROME_ARGS, timeout: 30_000 });
  }, { timeout: 60_000 });

  after(async () => {
    await browser?.close().catch(() => {});
  });

  it('the verify page shows every name as it is, right-to-left where it should be', async () => {
    for (const l of learners) {
      const c = certs[l.key];
      const { ctx, page, resp } = await openPage(c.verify_url);
      assert.equal(resp.status(), 200);
      assert.equal(await page.locator('#status').getAttribute('data-status'), 'valid', `${l.key}: status`);
      assert.equal((await page.locator('#learner').textContent()).trim(), l.name, `${l.key}: name`);
      assert.equal((await page.locator('#course').textContent()).trim(), 'Astronomy 101');
      const dir = await page.locator('#learner bdi').evaluate((el) => getComputedStyle(el).direction);
      assert.equal(dir, l.rtl ? 'rtl' : 'ltr', `${l.key}: direction`);
      // The name is drawn (the screenshots show its glyphs; look at them).
      const widths = await page.locator('#learner').evaluate((el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        return { name: range.getBoundingClientRect().width, height: range.getBoundingClientRect().height };
      });
      assert.ok(widths.name > 10 && widths.height > 10, `${l.key}: name not drawn (${JSON.stringify(widths)})`);
      await page.screenshot({ path: artifact(`certificate-verify-${l.key}.png`), fullPage: true });
      if (l.key === 'arabic') await axeCheck(page, 'certificate-verify');
      await ctx.close();
    }
  });

  it('the verify page in Arabic is laid out right to left', async () => {
    const { ctx, page } = await openPage(`${certs.arabic.verify_url}?lang=ar`);
    assert.equal(await page.locator('html').getAttribute('dir'), 'rtl');
    assert.equal(await page.locator('html').getAttribute('lang'), 'ar');
    assert.equal((await page.locator('#status').textContent()).trim(), '✓ شهادة صالحة');
    // The labels column is on the right: the first <dt> starts right of
    // the middle of the card.
    const card = await page.locator('.card').boundingBox();
    const dt = await page.locator('dt').first().boundingBox();
    assert.ok(dt.x > card.x + card.width / 2, `first label at x=${dt.x}, card ${card.x}+${card.width}`);
    await page.screenshot({ path: artifact('certificate-verify-ar.png'), fullPage: true });
    await axeCheck(page, 'certificate-verify-ar');
    await ctx.close();
  });

  it('the verify page fits a phone (375 px, no horizontal scroll)', async () => {
    const { ctx, page } = await openPage(certs.arabic.verify_url, { width: 375, height: 812 });
    const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    assert.ok(scroll <= client, `horizontal scroll at 375 px: ${scroll} > ${client}`);
    for (const link of await page.locator('.links a').all()) {
      const box = await link.boundingBox();
      assert.ok(box.height >= 44, `link ${await link.textContent()} is ${box.height} px high`);
    }
    await page.screenshot({ path: artifact('certificate-verify-phone.png'), fullPage: true });
    await ctx.close();
  });

  it('the PDF names the learner and its QR code opens the verify page', async () => {
    const c = certs.latin;
    const r = await fetch(c.pdf_url);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/pdf');
    const file = artifact('certificate-latin.pdf');
    fs.writeFileSync(file, Buffer.from(await r.arrayBuffer()));
    const text = await pdfText(file);
    assert.match(text, /Ann Example/);
    assert.match(text, /Astronomy 101/);
    assert.deepEqual(await pdfQRCodes(file), [c.verify_url]);
  });

  it('after the API revokes it, the page says revoked with the date, and the PDF is gone', async () => {
    const c = certs.cyrillic;
    const { ctx, page } = await openPage(c.verify_url);
    assert.equal(await page.locator('#status').getAttribute('data-status'), 'valid');
    const res = await lms('POST', `/certificates/revoke/${c.id}`, { reason: 'Issued to the wrong person' });
    assert.equal(res.data.status, 'revoked');
    await page.reload();
    assert.equal(await page.locator('#status').getAttribute('data-status'), 'revoked');
    const status = await page.locator('#status').textContent();
    const today = new Date().toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
    assert.ok(status.includes(`Revoked on ${today}`), `status text: ${status}`);
    assert.ok(!(await page.content()).includes('wrong person'), 'the public page shows the revocation reason');
    assert.equal(await page.locator('.links a').count(), 0, 'download links still offered');
    await page.screenshot({ path: artifact('certificate-verify-revoked.png'), fullPage: true });
    await axeCheck(page, 'certificate-verify-revoked');
    await ctx.close();
    assert.equal((await fetch(c.pdf_url)).status, 410);
    assert.equal((await fetch(c.credential_url)).status, 410);
  });
});
