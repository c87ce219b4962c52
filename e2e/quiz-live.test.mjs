// End-to-end test of in-class quizzes (docs/tests.md, in-class quizzes) in
// real Chromium browsers: a teacher and two portal learners in a live
// class; the teacher launches a test attached to the class, the students
// answer by keyboard only (one on a 375 px wide page in Arabic, right to
// left; a reload keeps the answers), the teacher follows the anonymous tally and closes the quiz, and
// everyone sees the aggregate; a second quiz closes itself at its deadline
// (the server's test clock moved past it). The answers are graded live
// attempts of the class in /api/v1/tests/attempts/list, and right answers
// gave live_quiz_correct points.
// Run with ./run.sh (E2E_TESTS=e2e/quiz-live.test.mjs).

import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForTests, Participant, join, lmsApi, log } from './lib.mjs';

const server = serverForTests('quiz-live', { args: ['--test-clock'] });

const api = lmsApi(server);

async function makeTest(name, questions) {
  const t = await api('POST', '/tests/create', { tests_name: name, tests_alloted_time_test_mode: '00:30:00', tests_alloted_time_demo_mode: '00:05:00' });
  for (const q of questions) {
    const c = await api('POST', '/questions/create', q);
    await api('POST', '/tests/addQuestion', { testId: t.data.id, questionId: c.data.id });
  }
  return t.data.id;
}

async function learner(name, email) {
  const r = await api('POST', '/users/create', { username: email, email, name });
  return String(r.data?.id ?? r.id);
}

const capital = { type: 'single_choice', text_md: 'Capital of France?', data: { choices: [{ text: 'Paris', correct: true }, { text: 'Rome' }, { text: 'Oslo' }] } };
const sky = { type: 'true_false', text_md: 'The sky is blue.', data: { correct: true } };
const tallest = { type: 'single_choice', text_md: 'Tallest mountain?', data: { choices: [{ text: 'Everest', correct: true }, { text: 'Fuji' }] } };

// choose answers a choice question by keyboard only: Tab into the radio
// group from the question's first control, arrow to the option, Space.
async function choose(p, slot, text) {
  const q = p.page.locator(`[data-testid=quiz-question][data-slot="${slot}"]`);
  const labels = await q.locator('label.quiz-opt span').allTextContents();
  const want = labels.indexOf(text);
  assert.ok(want >= 0, `${p.name}: no option ${text} in ${labels}`);
  await q.locator('input').first().focus();
  // In a radio group the arrows move and check; Space checks the first.
  await p.page.keyboard.press('Space');
  for (let i = 0; i < want; i++) await p.page.keyboard.press('ArrowDown');
  assert.ok(await q.locator('input').nth(want).isChecked(), `${p.name}: ${text} is not checked`);
}

async function savedAll(p, count) {
  await p.page.waitForFunction((n) => {
    const s = [...document.querySelectorAll('[data-testid=quiz-save]')];
    return s.length === n && s.every((x) => x.dataset.status === 'saved');
  }, count, { timeout: 15_000 });
}

async function results(p) {
  await p.page.waitForSelector('[data-testid=quiz][data-open=false] [data-testid=quiz-results]', { timeout: 15_000 });
  return p.page.$$eval('[data-testid=quiz-results] [data-testid=quiz-counts]', (els) =>
    els.map((e) => ({
      answered: Number(e.dataset.answered),
      right: Number(e.dataset.right),
      bars: Object.fromEntries([...e.querySelectorAll('.quiz-bar')].map((b) => [b.dataset.choice, Number(b.dataset.count)])),
    })));
}

// fits reports horizontal overflow of the page (a 375 px phone must not scroll sideways).
const overflow = (p) => p.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('in-class quiz', () => {
  const teacher = new Participant('quiz-teacher', { userId: 'qt', teacher: true });
  const ann = new Participant('quiz-ann');
  const bob = new Participant('quiz-bob-375-ar');
  let classId, capitals, quick;

  before(async () => {
    capitals = await makeTest('Capitals', [capital, sky]);
    quick = await makeTest('Quick one', [tallest]);
    await api('PUT', '/gamification/rules', { event: 'live_quiz_correct', points: 5 });
    ann.userId = await learner('Ann Able', 'ann@example.com');
    bob.userId = await learner('Bob Baker', 'bob@example.com');
    classId = await server.schedule('Quiz class', { isCorporate: 0 });
    for (const testId of [capitals, quick]) await api('POST', '/liveClasses/quiz/attach', { classId: Number(classId), testId });
    teacher.url = await server.launch(classId, { userId: teacher.userId, userName: 'Tess Teacher', teacher: true });
    ann.url = await server.launch(classId, { userId: ann.userId, userName: 'Ann Able' });
    bob.url = await server.launch(classId, { userId: bob.userId, userName: 'Bob Baker' });
    // Bob reads Arabic (right to left) on a phone.
    bob.init = () => localStorage.setItem('lectern.lang', 'ar');
    await join([teacher, ann, bob]);
    await bob.page.setViewportSize({ width: 375, height: 800 });
  }, { timeout: 120_000 });

  it('teacher launches an attached test; students answer by keyboard; tally, close, aggregate for all', { timeout: 120_000 }, async () => {
    // The Arabic catalogue loads after the page has joined (a separate
    // chunk); until then the page is in English, left to right.
    await bob.page.waitForFunction(() => document.documentElement.dir === 'rtl', null, { timeout: 10_000 });
    // Students see no launch form; the teacher sees both attached tests.
    assert.equal(await ann.page.locator('#quiz-launch').count(), 0);
    const tests = await teacher.page.locator('#quiz-test option').allTextContents();
    assert.deepEqual(tests, ['Capitals', 'Quick one']);
    await teacher.page.selectOption('#quiz-test', String(capitals));
    await teacher.screenshot('quiz-live-teacher-launch.png', { fullPage: true });
    await teacher.page.click('#quiz-launch');

    for (const p of [ann, bob]) {
      await p.page.waitForSelector('[data-testid=quiz][data-open=true] [data-testid=quiz-question]');
      // The start is announced in a live region.
      await p.page.waitForFunction(() => document.querySelector('[data-testid=quiz-announce]')?.textContent.trim() !== '');
    }
    assert.match(await ann.page.locator('[data-testid=quiz-announce]').textContent(), /A quiz has started: 2 questions/);
    // Ann: Paris and True (right, right). Bob: Rome and False (wrong, wrong).
    await choose(ann, 1, 'Paris');
    await ann.page.locator('[data-slot="2"] input[value=true]').focus();
    await ann.page.keyboard.press('Space');
    const trueFalse = await bob.page.locator('[data-slot="2"] label.quiz-opt span').allTextContents();
    await choose(bob, 1, 'Rome');
    await choose(bob, 2, trueFalse[1]);
    await savedAll(ann, 2);
    await savedAll(bob, 2);
    // A reload shows Ann's saved answers again (from her room snapshot).
    await ann.page.reload();
    await ann.waitState('joined');
    await savedAll(ann, 2);
    const checked = await ann.page.$$eval('[data-testid=quiz-question] input:checked', (els) => els.map((e) => e.closest('label').textContent.trim()));
    assert.deepEqual(checked, ['Paris', 'True'], 'answers after a reload');
    assert.equal(await overflow(bob), 0, 'the 375 px page scrolls sideways');
    await ann.screenshot('quiz-live-ann-answered.png', { fullPage: true });
    await bob.screenshot('quiz-live-bob-375-ar-answered.png', { fullPage: true });

    // The teacher's live tally: 2 answered each question, 1 right.
    await teacher.page.waitForFunction(() => {
      const c = [...document.querySelectorAll('[data-testid=quiz-counts]')];
      return c.length === 2 && c.every((x) => x.dataset.answered === '2' && x.dataset.right === '1');
    }, null, { timeout: 10_000 });
    await teacher.screenshot('quiz-live-teacher-tally.png', { fullPage: true });
    await teacher.page.click('#quiz-close');

    for (const p of [teacher, ann, bob]) {
      const r = await results(p);
      assert.deepEqual(r.map((x) => [x.answered, x.right]), [[2, 1], [2, 1]], `${p.name}: ${JSON.stringify(r)}`);
      assert.deepEqual(r[0].bars, { Paris: 1, Rome: 1, Oslo: 0 }, `${p.name}: ${JSON.stringify(r[0].bars)}`);
    }
    assert.equal(await overflow(bob), 0, 'the 375 px results scroll sideways');
    await ann.screenshot('quiz-live-ann-results.png', { fullPage: true });
    await bob.screenshot('quiz-live-bob-375-ar-results.png', { fullPage: true });
  });

  it('a quiz with a time limit closes itself at its deadline', { timeout: 90_000 }, async () => {
    await teacher.page.selectOption('#quiz-test', String(quick));
    await teacher.page.selectOption('#quiz-seconds', '30');
    await teacher.page.click('#quiz-launch');
    await ann.page.waitForSelector('[data-testid=quiz][data-open=true] [data-testid=quiz-countdown]');
    await choose(ann, 1, 'Everest');
    await savedAll(ann, 1);
    await ann.screenshot('quiz-live-ann-timed.png', { fullPage: true });
    // Move the server's clock 40 s on: the room closes the quiz by itself.
    const r = await fetch(`${server.base}/_test/clock`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ now: new Date(Date.now() + 40_000).toISOString().replace(/\.\d+Z$/, 'Z') }),
    });
    assert.equal(r.status, 200, await r.text());
    for (const p of [teacher, ann, bob]) {
      const res = await results(p);
      assert.deepEqual(res.map((x) => [x.answered, x.right]), [[1, 1]], `${p.name}: ${JSON.stringify(res)}`);
    }
    await teacher.screenshot('quiz-live-teacher-deadline-results.png', { fullPage: true });
  });

  it('the answers are graded live attempts of the class, and right answers gave points', async () => {
    const list = await api('POST', '/tests/attempts/list', { classId: Number(classId) });
    const rows = list.data.map((a) => [a.email, a.testId, a.mode, a.state, a.classId, a.sitting, a.score, a.max]);
    log('class attempts', JSON.stringify(rows));
    rows.sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));
    assert.deepEqual(rows, [
      ['ann@example.com', capitals, 'live', 'finished', Number(classId), 1, 2, 2],
      ['ann@example.com', quick, 'live', 'finished', Number(classId), 1, 1, 1],
      ['bob@example.com', capitals, 'live', 'finished', Number(classId), 1, 0, 2],
    ].sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`)));
    const pts = async (email) => (await api('POST', '/gamification/user-points', { email })).data.gamification_points;
    assert.equal(await pts('ann@example.com'), 15, 'ann: three right answers at 5 points');
    assert.equal(await pts('bob@example.com'), 0);
  });
});
