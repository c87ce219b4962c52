// End-to-end test of the test engine's learner pages (docs/tests.md) in a
// real Chromium: every question type answered by keyboard only, reload and
// a second tab keep the questions and answers, offline shows "not saved"
// and flushes later, a client clock skewed ±10 minutes still ends within
// 2 s of the server's deadline, a closed tab is finished by the server
// with its saved answers, attempt limits and an override, demo attempts
// that do not count, and the pages at phone width and right-to-left.
// Run with ./run.sh (E2E_TESTS=e2e/quiz.test.mjs).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { serverForTests, CHROMIUM, CHROME_ARGS, artifact, lmsApi, sleep } from './lib.mjs';

const server = serverForTests('quiz');
let browser;

const api = lmsApi(server);

const portal = () => `${server.base}/${server.domain.domain_id}/learn`;

let users = 0;
// learner creates a user, enrolls them in testId and returns their email.
async function learner(testId) {
  const email = `l${++users}@example.com`;
  await api('POST', '/users/create', { username: email, email, name: `Learner ${users}` });
  await api('POST', '/tests/enroll', { testId, email });
  return email;
}

// makeTest creates a test with the given questions and settings.
async function makeTest(name, times, questions, settings = {}) {
  const t = await api('POST', '/tests/create', { tests_name: name, test_instructions: 'Answer every question. No notes.',
    tests_alloted_time_test_mode: times.test, tests_alloted_time_demo_mode: times.demo || '00:05:00' });
  const id = t.data.id;
  for (const q of questions) {
    const c = await api('POST', '/questions/create', q);
    await api('POST', '/tests/addQuestion', { testId: id, questionId: c.data.id });
  }
  await api('PUT', `/tests/settings/${id}`, settings);
  return id;
}

const pickA = { type: 'single_choice', text_md: 'Pick **A**', data: { choices: [{ text: 'A', correct: true }, { text: 'B' }, { text: 'C' }] } };

// open signs email in (a login link landing on return_to) in a new context.
async function open(email, returnTo, ctxOpts = {}) {
  const r = await api('POST', '/users/loginLink', { email, return_to: returnTo });
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...ctxOpts });
  const page = await ctx.newPage();
  page.on('dialog', (d) => d.accept());
  await page.goto(r.data.url);
  return { ctx, page };
}

// startTest starts an attempt from the start page by keyboard and returns
// the attempt id.
async function startTest(page, mode = 'test') {
  await page.locator(`input[name=mode][value=${mode}]`).focus();
  await page.keyboard.press('Space');
  await page.locator('form button[type=submit]').focus();
  await Promise.all([page.waitForURL(/\/attempts\/\d+$/), page.keyboard.press('Enter')]);
  await page.waitForFunction(() => document.getElementById('attempt'));
  return Number(page.url().match(/\/attempts\/(\d+)$/)[1]);
}

async function saved(page) {
  await page.waitForFunction(() => {
    const s = document.getElementById('save-status');
    return s && s.textContent === 'All answers saved' && document.getElementById('not-saved').hidden;
  }, null, { timeout: 15_000 });
}

async function attempt(id) {
  return (await api('GET', `/tests/attempts/get/${id}`)).data;
}

async function shot(page, name) {
  await page.screenshot({ path: artifact(name), fullPage: true });
}

before(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, timeout: 30_000, args: CHROME_ARGS });
}, { timeout: 60_000 });

after(async () => { await browser?.close(); });

describe('test engine', () => {
  it('every question type by keyboard only; reload and a second tab keep questions and answers; result and review', async () => {
    const testId = await makeTest('All types', { test: '00:30:00' }, [
      pickA,
      { type: 'true_false', text_md: 'The sky is blue.', data: { correct: true } },
      { type: 'multiple_choice', text_md: 'Pick the primes', data: { choices: [{ text: '2', correct: true }, { text: '3', correct: true }, { text: '4' }] } },
      { type: 'short_answer', text_md: 'Capital of France?', data: { answers: ['Paris'] } },
      { type: 'numerical', text_md: 'Pi to two decimals?', data: { value: '3.14', tolerance: '0.005' } },
      { type: 'fill_in_blanks', text_md: 'Water boils at [[1]] degrees and is [[2]].', data: { blanks: [{ answers: ['100'] }, { answers: ['wet'], options: ['dry', 'wet'] }] } },
      { type: 'matching', text_md: 'Match the animals', data: { pairs: [{ left: 'cat', right: 'meow' }, { left: 'dog', right: 'woof' }, { left: 'cow', right: 'moo' }] } },
      { type: 'ordering', text_md: 'Order the numbers', data: { items: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] } },
      { type: 'essay', text_md: 'Describe your day.' },
      { type: 'description', text_md: 'Thank you for taking part.' },
    ], { pass_percent: 50 });
    const email = await learner(testId);
    const { ctx, page } = await open(email, `/tests/${testId}`);
    await shot(page, 'quiz-start.png');
    assert.match(await page.locator('body').textContent(), /Answer every question\. No notes\./);
    const id = await startTest(page);
    const q = (n) => page.locator(`#q${n}`);
    // 1 single choice: focus the first radio, arrow to "A", which checks it.
    const radios = q(1).locator('input[type=radio]');
    const texts = await q(1).locator('label.opt span').allTextContents();
    await radios.first().focus();
    for (let i = 0; i < texts.indexOf('A'); i++) await page.keyboard.press('ArrowDown');
    if (!(await radios.nth(texts.indexOf('A')).isChecked())) await page.keyboard.press('Space');
    // 2 true/false
    await q(2).locator('input[value=true]').focus();
    await page.keyboard.press('Space');
    // 3 multiple choice: Space on "2" and "3"
    for (const label of ['2', '3']) {
      await q(3).locator('label.opt', { hasText: new RegExp(`^\\s*${label}\\s*$`) }).locator('input').focus();
      await page.keyboard.press('Space');
    }
    // 4 short answer, 5 numerical
    await q(4).locator('input').focus();
    await page.keyboard.type('  paris ');
    await q(5).locator('input').focus();
    await page.keyboard.type('3.141');
    // 6 blanks: type, then choose "wet" in the dropdown by keyboard
    await q(6).locator('input[data-blank]').focus();
    await page.keyboard.type('100');
    await q(6).locator('select[data-blank]').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    // 7 matching: each select by typing the first letters
    for (const [left, right] of [['cat', 'meow'], ['dog', 'woof'], ['cow', 'moo']]) {
      const sel = q(7).locator(`select[id="${await q(7).locator('label', { hasText: left }).getAttribute('for')}"]`);
      await sel.focus();
      await page.keyboard.type(right);
    }
    // 8 ordering: move items with the up/down buttons until one, two, three
    for (let round = 0; round < 4; round++) {
      const order = await q(8).locator('li span').allTextContents();
      if (order.join() === 'one,two,three') break;
      const want = ['one', 'two', 'three'];
      const i = order.findIndex((t, k) => t !== want[k]);
      const j = order.indexOf(want[i]);
      for (let k = j; k > i; k--) {
        await q(8).locator('li', { hasText: want[i] }).locator('button[data-move="-1"]').focus();
        await page.keyboard.press('Enter');
      }
    }
    assert.deepEqual(await q(8).locator('li span').allTextContents(), ['one', 'two', 'three']);
    // 9 essay
    await q(9).locator('textarea').focus();
    await page.keyboard.type('I wrote tests.');
    await saved(page);
    await shot(page, 'quiz-answered.png');

    // Reload: same questions in the same order, same answers.
    const before = await page.locator('section.q h2, section.q .text, label.opt span, ol.order li span').allTextContents();
    await page.reload();
    assert.deepEqual(await page.locator('section.q h2, section.q .text, label.opt span, ol.order li span').allTextContents(), before);
    assert.equal(await q(4).locator('input').inputValue(), '  paris ');
    assert.equal(await q(9).locator('textarea').inputValue(), 'I wrote tests.');
    assert.equal(await q(6).locator('select').inputValue(), 'wet');
    // A second tab lands on the same attempt.
    const tab2 = await ctx.newPage();
    tab2.on('dialog', (d) => d.accept());
    await tab2.goto(`${portal()}/tests/${testId}`);
    const id2 = await startTest(tab2);
    assert.equal(id2, id, 'the second tab resumed the attempt');
    assert.equal(await tab2.locator('#q4 input').inputValue(), '  paris ');
    await tab2.close();

    // Submit by keyboard.
    await page.locator('#submit-button').focus();
    await Promise.all([page.waitForURL(/\/attempts\/\d+$/), page.waitForSelector('#res'), page.keyboard.press('Enter')]);
    await page.waitForSelector('#res');
    const a = await attempt(id);
    assert.equal(a.state, 'needs_grading');
    assert.equal(a.score, 8, `score ${a.score}: ${JSON.stringify(a.slots.map((s) => [s.question.type, s.correct, s.mark]))}`);
    assert.match(await page.locator('#result').textContent(), /8 \/ 9/);
    await shot(page, 'quiz-review.png');
    await ctx.close();
  });

  it('offline mid-attempt shows "not saved" and flushes when back online', async () => {
    const testId = await makeTest('Offline', { test: '00:30:00' }, [
      { type: 'short_answer', text_md: 'Say hello', data: { answers: ['hello'] } }]);
    const email = await learner(testId);
    const { ctx, page } = await open(email, `/tests/${testId}`);
    const id = await startTest(page);
    await ctx.setOffline(true);
    await page.locator('#q1 input').focus();
    await page.keyboard.type('hello');
    await page.waitForSelector('#not-saved:not([hidden])', { timeout: 15_000 });
    await shot(page, 'quiz-offline.png');
    assert.equal((await attempt(id)).slots[0].seq, 0, 'nothing reached the server while offline');
    await ctx.setOffline(false);
    await page.evaluate(() => window.dispatchEvent(new Event('online')));
    await saved(page);
    const a = await attempt(id);
    assert.equal(a.slots[0].response.text, 'hello');
    await ctx.close();
  });

  it('a client clock skewed ±10 minutes ends within 2 s of the deadline; a closed tab is finished by the server with its answers', async () => {
    const skewTest = await makeTest('Skewed clock', { test: '00:00:15' }, [pickA]);
    const closedTest = await makeTest('Closed tab', { test: '00:00:05' }, [
      { type: 'short_answer', text_md: 'Say hello', data: { answers: ['hello'] } }]);
    const runSkew = async (skewMs) => {
      const email = await learner(skewTest);
      const { ctx, page } = await open(email, `/tests/${skewTest}`);
      await ctx.addInitScript((skew) => { const now = Date.now; Date.now = () => now() + skew; }, skewMs);
      await page.reload();
      const id = await startTest(page);
      await page.waitForSelector('#res', { timeout: 40_000 });
      const a = await attempt(id);
      const late = (Date.parse(a.finished_at) - Date.parse(a.deadline)) / 1000;
      assert.ok(late >= -2 && late <= 2, `skew ${skewMs}: finished ${a.finished_at}, deadline ${a.deadline}`);
      await ctx.close();
      return late;
    };
    const runClosed = async () => {
      const email = await learner(closedTest);
      const { ctx, page } = await open(email, `/tests/${closedTest}`);
      const id = await startTest(page);
      await page.locator('#q1 input').focus();
      await page.keyboard.type('hello');
      await saved(page);
      await ctx.close();
      const deadline = Date.parse((await attempt(id)).deadline);
      // Deadline + 10 s network grace + the sweeper's 2 s tick.
      await sleep(Math.max(0, deadline - Date.now()) + 14_000);
      const a = await attempt(id);
      assert.equal(a.state, 'finished');
      assert.equal(a.slots[0].response.text, 'hello');
      assert.equal(a.score, 1);
    };
    const [plus, minus] = await Promise.all([runSkew(600_000), runSkew(-600_000), runClosed()]);
    console.log(`skewed clocks ended ${plus} s and ${minus} s after the deadline`);
  });

  it('an attempt limit of 1 refuses a second start with the reason; an override grants one more; demo does not count', async () => {
    const testId = await makeTest('Once', { test: '00:10:00', demo: '00:02:00' }, [pickA], { attempts_allowed: 1 });
    const email = await learner(testId);
    const { ctx, page } = await open(email, `/tests/${testId}`);
    assert.equal(await page.locator('#attempts-left').textContent(), '1');
    // A demo attempt first: it does not use the attempt.
    await startTest(page, 'demo');
    await page.locator('#submit-button').focus();
    await Promise.all([page.waitForSelector('#res'), page.keyboard.press('Enter')]);
    await page.goto(`${portal()}/tests/${testId}`);
    assert.equal(await page.locator('#attempts-left').textContent(), '1', 'demo used no attempt');
    await startTest(page);
    await page.locator('#submit-button').focus();
    await Promise.all([page.waitForSelector('#res'), page.keyboard.press('Enter')]);
    await page.goto(`${portal()}/tests/${testId}`);
    assert.equal(await page.locator('#attempts-left').textContent(), '0');
    assert.match(await page.locator('form').textContent(), /No attempts left: 1 of 1 used\./);
    assert.ok(await page.locator('form button[type=submit]').isDisabled() || await page.locator('input[value=test]').isDisabled());
    await shot(page, 'quiz-no-attempts-left.png');
    await api('POST', '/tests/overrides/set', { testId, email, extra_attempts: 1, time_multiplier: '1.5' });
    await page.reload();
    assert.equal(await page.locator('#attempts-left').textContent(), '1');
    assert.match(await page.locator('form').textContent(), /15 min/);
    const id = await startTest(page);
    const a = await attempt(id);
    const minutes = (Date.parse(a.deadline) - Date.parse(a.started_at)) / 60000;
    assert.equal(minutes, 15, 'the ×1.5 accommodation applies');
    await ctx.close();
  });

  it('one question per page with sequential navigation', async () => {
    const testId = await makeTest('Paged', { test: '00:30:00' }, [pickA, pickA, pickA], { per_page: 1, navigation: 'sequential' });
    const email = await learner(testId);
    const { ctx, page } = await open(email, `/tests/${testId}`);
    await startTest(page);
    // The server sends the learner's page only; Next moves the attempt on
    // on the server and loads the next page.
    const shown = () => page.locator('section.q').evaluateAll((s) => s.filter((x) => !x.hidden).map((x) => x.id));
    assert.deepEqual(await shown(), ['q1']);
    assert.ok(await page.locator('#prev').isHidden(), 'no way back in sequential navigation');
    assert.ok(await page.locator('#submit-button').isHidden(), 'submit only on the last page');
    await page.locator('#q1 input').first().focus();
    await page.keyboard.press('Space');
    await page.locator('#next').focus();
    await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
    await page.waitForSelector('#q2');
    assert.deepEqual(await shown(), ['q2']);
    assert.match(await page.locator('#page-no').textContent(), /Page 2 of 3/);
    assert.equal(await page.evaluate(() => document.activeElement.id), 'q2-t', 'focus moves to the new page\'s question');
    // The page left is closed on the server too.
    const left = await page.evaluate(async () => {
      const d = document.getElementById('attempt').dataset;
      const r = await fetch(`${d.base}/attempts/${d.id}/answers`, { method: 'PUT', headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': d.csrf }, body: JSON.stringify({ slot: 1, response: {}, seq: 99 }) });
      return r.status;
    });
    assert.equal(left, 409, 'a save to the page left is refused');
    await page.locator('#next').focus();
    await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
    await page.waitForSelector('#q3');
    assert.deepEqual(await shown(), ['q3']);
    assert.ok(await page.locator('#next').isHidden());
    assert.ok(await page.locator('#submit-button').isVisible());
    await shot(page, 'quiz-paged.png');
    await ctx.close();
  });

  it('phone width and right-to-left', async () => {
    const close = new Date(Date.now() + 20 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const testId = await makeTest('Phone', { test: '01:00:00' }, [pickA,
      { type: 'matching', text_md: 'Match', data: { pairs: [{ left: 'cat', right: 'meow' }, { left: 'dog', right: 'woof' }] } },
      { type: 'ordering', text_md: 'Order', data: { items: [{ text: 'one' }, { text: 'two' }, { text: 'three' }] } }],
    { close_at: close });
    const email = await learner(testId);
    const { ctx, page } = await open(email, `/tests/${testId}`, { viewport: { width: 375, height: 812 }, locale: 'ar', extraHTTPHeaders: { 'Accept-Language': 'ar' } });
    assert.match(await page.locator('[data-ends]').textContent(), /لأن الاختبار يُغلق/);
    await shot(page, 'quiz-start-375-rtl.png');
    await startTest(page);
    assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `horizontal scroll of ${overflow}px at 375px`);
    const small = await page.evaluate(() => [...document.querySelectorAll('button, select, input[type=text]')]
      .filter((el) => el.getClientRects().length > 0 && el.getBoundingClientRect().height < 44).length);
    assert.equal(small, 0, 'targets under 44px');
    await shot(page, 'quiz-attempt-375-rtl.png');
    await ctx.close();
  });
});
