// End-to-end test of the learner portal's pages (docs/learner.md, "Learner
// portal") in a real Chromium: a video played to the end at 16x completes
// its lesson and a seek to 95% does not; playback resumes after a reload
// within 2 s of where it was; a locked lesson is refused by URL (403) and
// so is its media, and it opens when the server's test clock passes its
// date; the phone width (375 px: no horizontal scroll, targets of 44 px);
// a text lesson completed with the keyboard only; axe-core on the
// dashboard, the course page, the player and the locked page; the pages
// in Arabic (right to left). Run with ./run.sh
// (E2E_TESTS=e2e/learn.test.mjs). The test video is made by ffmpeg here.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { serverForTests, lmsApi, axeCheck, CHROMIUM, CHROME_ARGS, artifact, log, sleep } from './lib.mjs';

const execFileP = promisify(execFile);
const server = serverForTests('learn', { args: ['--test-clock'] });
const api = lmsApi(server);

const VIDEO_S = 40;
const EMAIL = 'ann@example.com';
let browser;
let ctx; // Ann's browser, signed in
let page;
const ids = {};
let unlockAt; // when the locked lesson opens (server time)

const portal = () => `${server.base}/${server.domain.domain_id}/learn`;
const lessonURL = (id) => `${portal()}/courses/${ids.course}/lessons/${id}`;

async function setClock(now) {
  const r = await fetch(`${server.base}/_test/clock`, { method: 'POST', body: JSON.stringify({ now }), headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 200, await r.text());
}

// lessonState is the lesson's state for Ann as the management API reports it.
async function lessonState(lessonId) {
  const p = await api('POST', '/progress/get', { course_id: ids.course, email: EMAIL });
  const l = p.data.lessons.find((x) => x.id === lessonId);
  assert.ok(l, `lesson ${lessonId} in progress/get`);
  return l.state;
}

async function shot(p, name) {
  await p.screenshot({ path: artifact(name), fullPage: true });
}

// The page's video element, with its metadata loaded.
async function video(p) {
  await p.waitForFunction(() => document.querySelector('video')?.readyState >= 1, null, { timeout: 15_000 });
}

// reported waits for learn.js's next answered progress report after since.
async function reportedAfter(p, since, timeout = 15_000) {
  await p.waitForFunction((t) => Number(document.querySelector('[data-learn-media]')?.dataset.reported ?? 0) > t, since, { timeout });
}

before(async () => {
  const file = artifact('learn-video.webm');
  try {
    // Small and fast to encode (a few seconds on a busy machine).
    await execFileP('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=192x108:rate=10:duration=${VIDEO_S}`,
      '-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '60k', '-g', '10', file], { timeout: 60_000 });
  } catch (e) {
    throw new Error(`ffmpeg could not make the test video (apt-get install -y ffmpeg): ${e.message}`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, timeout: 30_000,
    args: [...CHROME_ARGS, '--autoplay-policy=no-user-gesture-required'] });

  await api('POST', '/users/create', { username: EMAIL, email: EMAIL, name: 'Ann Example' });
  ids.course = (await api('POST', '/courses/create', { course_name: 'Astronomy 101', subtitle: 'The night sky for beginners',
    highlight: 'Six short lessons, one evening each', description: 'What you can see with your own eyes.\nNo telescope needed.',
    instructor_description: 'Dr Vega has taught astronomy for twenty years.' })).data.course_id;
  await api('POST', `/courses/publish/${ids.course}`);
  await api('POST', '/courses/enroll', { courseId: ids.course, email: EMAIL });
  const tmpl = (await api('POST', '/certificates/templates/create', { name: 'Default' })).data.id;
  await api('PUT', `/courses/certificate/${ids.course}`, { template_id: tmpl });
  const s1 = (await api('POST', '/sections/create', { course_id: ids.course, title: 'First nights' })).data.id;
  const s2 = (await api('POST', '/sections/create', { course_id: ids.course, title: 'Later' })).data.id;

  const form = new FormData();
  form.append('file', new Blob([fs.readFileSync(file)], { type: 'video/webm' }), 'night-sky.webm');
  const fileId = (await api('POST', '/files/upload', form)).data.file_id;

  ids.text = (await api('POST', '/lessons/create', { section_id: s1, title: 'Welcome', type: 'text',
    body_md: '# Before you start\n\nFind a **dark place** and give your eyes twenty minutes.\n\n- A chair\n- A blanket' })).data.id;
  ids.video = (await api('POST', '/lessons/create', { section_id: s1, title: 'The sky tonight', type: 'video', file_id: fileId, duration_s: VIDEO_S })).data.id;
  ids.locked = (await api('POST', '/lessons/create', { section_id: s2, title: 'Planets', type: 'video', file_id: fileId, duration_s: VIDEO_S })).data.id;
  // Two days from now (whole minutes): the session (7 days idle) outlives the clock's jump.
  unlockAt = new Date(Math.ceil((Date.now() + 2 * 86400_000) / 60_000) * 60_000);
  await api('POST', '/lessons/unlock/set', { lesson_id: ids.locked, at: unlockAt.toISOString().replace(/\.\d+Z$/, 'Z') });

  const link = (await api('POST', '/users/loginLink', { email: EMAIL, return_to: '/' })).data.url;
  ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'Europe/London' });
  page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') log('page error:', m.text()); });
  const r = await page.goto(link);
  assert.equal(r.status(), 200);
  assert.equal(page.url(), portal() + '/');
}, { timeout: 120_000 });

after(async () => {
  await browser?.close();
});

describe('learner portal', () => {
  it('dashboard and course page: content, progress, and no serious axe findings', async () => {
    await page.goto(portal() + '/');
    const card = page.locator(`[data-testid="course"][data-course-id="${ids.course}"]`);
    assert.match(await card.textContent(), /Astronomy 101[\s\S]*0% complete/);
    assert.equal(await card.locator('[data-testid="resume"]').getAttribute('href'), lessonURL(ids.text).slice(server.base.length));
    await shot(page, 'learn-dashboard.png');
    await axeCheck(page, 'dashboard');

    const resp = await page.goto(`${portal()}/courses/${ids.course}`);
    assert.equal(resp.status(), 200);
    const body = await page.locator('main').textContent();
    for (const want of ['The night sky for beginners', 'Six short lessons', 'No telescope needed.', 'Dr Vega', 'First nights', 'Planets']) {
      assert.ok(body.includes(want), `course page shows ${want}`);
    }
    const lockedRow = page.locator(`[data-testid="outline-lesson"][data-lesson-id="${ids.locked}"]`);
    assert.equal(await lockedRow.getAttribute('data-state'), 'locked');
    assert.match(await lockedRow.textContent(), /Opens on/);
    await shot(page, 'learn-course.png');
    await axeCheck(page, 'course');
  });

  it('keyboard only: from the dashboard into a text lesson, completed with Tab and Enter', async () => {
    await page.goto(portal() + '/');
    await page.locator('body').focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.className), 'skip', 'the first Tab stop is "Skip to content"');
    const tabTo = async (selector, max = 40) => {
      for (let i = 0; i < max; i++) {
        if (await page.evaluate((s) => document.activeElement?.matches(s), selector)) {
          const ring = await page.evaluate(() => {
            const cs = getComputedStyle(document.activeElement);
            return { style: cs.outlineStyle, width: parseFloat(cs.outlineWidth) };
          });
          assert.ok(ring.style !== 'none' && ring.width >= 2, `visible focus on ${selector}: ${JSON.stringify(ring)}`);
          return;
        }
        await page.keyboard.press('Tab');
      }
      assert.fail(`Tab never reached ${selector}`);
    };
    await tabTo('[data-testid="resume"]');
    await Promise.all([page.waitForURL(lessonURL(ids.text)), page.keyboard.press('Enter')]);
    assert.match(await page.locator('[data-testid="lesson-body"]').innerHTML(), /<h2>Before you start<\/h2>/);
    await tabTo('[data-testid="complete"]');
    await shot(page, 'learn-text-lesson-keyboard.png');
    await Promise.all([page.waitForURL(lessonURL(ids.video)), page.keyboard.press('Enter')]);
    assert.equal(await page.locator(`[data-testid="outline-lesson"][data-lesson-id="${ids.text}"]`).getAttribute('data-state'), 'done');
    assert.equal(await lessonState(ids.text), 'done');
  });

  it('video: a seek to 95% and the last seconds played do not complete the lesson', async () => {
    await page.goto(lessonURL(ids.video));
    await video(page);
    await axeCheck(page, 'player');
    const since = Date.now();
    await page.evaluate(async (t) => {
      const v = document.querySelector('video');
      v.currentTime = t;
      await new Promise((r) => v.addEventListener('seeked', r, { once: true }));
      await v.play();
      await new Promise((r) => v.addEventListener('ended', r, { once: true }));
    }, VIDEO_S * 0.95);
    await reportedAfter(page, since);
    await sleep(1000);
    const played = await page.evaluate(() => window.lectern.watched());
    log('played after the seek:', JSON.stringify(played));
    assert.ok(played.every(([a]) => a >= VIDEO_S * 0.95 - 1), `only the end was played: ${JSON.stringify(played)}`);
    assert.equal(await page.locator('[data-testid="lesson-done"]').isVisible(), false);
    assert.notEqual(await lessonState(ids.video), 'done');
    assert.match(await page.locator('[data-testid="watched"]').textContent(), /^[0-9]% played$/);
  });

  it('video: after a reload it resumes within 2 s of where it was', async () => {
    const since = Date.now();
    const at = await page.evaluate(async () => {
      const v = document.querySelector('video');
      v.currentTime = 20;
      await new Promise((r) => v.addEventListener('seeked', r, { once: true }));
      await v.play();
      await new Promise((r) => setTimeout(r, 2000));
      v.pause();
      return v.currentTime;
    });
    await reportedAfter(page, since);
    await page.reload();
    await video(page);
    await page.waitForFunction(() => document.querySelector('video').currentTime > 0, null, { timeout: 5000 });
    const resumed = await page.evaluate(() => document.querySelector('video').currentTime);
    log(`paused at ${at.toFixed(2)} s, resumed at ${resumed.toFixed(2)} s`);
    assert.ok(Math.abs(resumed - at) <= 2, `resumed at ${resumed}, paused at ${at}`);
    assert.match(await page.locator('[data-status]').textContent(), /Resumed at 0:2\d/);
  });

  it('video: played to the end at 16x completes the lesson', async () => {
    const since = Date.now();
    const t0 = Date.now();
    await page.evaluate(async () => {
      const v = document.querySelector('video');
      v.currentTime = 0;
      await new Promise((r) => v.addEventListener('seeked', r, { once: true }));
      v.playbackRate = 16;
      await v.play();
      await new Promise((r) => v.addEventListener('ended', r, { once: true }));
    });
    log(`played ${VIDEO_S} s at 16x in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await reportedAfter(page, since);
    await page.locator('[data-testid="lesson-done"]').waitFor({ state: 'visible', timeout: 10_000 });
    // Without a reload, the outline and the course's bar follow.
    assert.equal(await page.locator(`[data-testid="outline-lesson"][data-lesson-id="${ids.video}"]`).getAttribute('data-state'), 'done');
    assert.equal(await page.locator('progress[data-course-progress]').evaluate((p) => p.value), 66);
    const played = await page.evaluate(() => window.lectern.watched());
    const covered = played.reduce((s, [a, b]) => s + b - a, 0);
    assert.ok(covered >= VIDEO_S * 0.9, `covered ${covered} s: ${JSON.stringify(played)}`);
    assert.equal(await lessonState(ids.video), 'done');
    await shot(page, 'learn-player-video-done.png');
  });

  it('a locked lesson: 403 by URL and for its media; open when the server clock passes its date', async () => {
    let resp = await page.goto(lessonURL(ids.locked));
    assert.equal(resp.status(), 403);
    assert.equal(await page.locator('body').getAttribute('data-page'), 'locked');
    const reason = page.locator('[data-testid="lock-reason"]');
    assert.match(await reason.textContent(), /Opens on/);
    assert.equal(await reason.locator('time').getAttribute('datetime'), unlockAt.toISOString().replace(/\.\d+Z$/, 'Z'));
    assert.equal(await page.locator('video').count(), 0, 'no media on the locked page');
    await shot(page, 'learn-locked.png');
    await axeCheck(page, 'locked');

    // The media link: got while the lesson was open (clock past the date),
    // refused once the clock is back before it (the lock is checked on every
    // request, not only when the link is made).
    await setClock(new Date(unlockAt.getTime() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z'));
    resp = await page.goto(lessonURL(ids.locked));
    assert.equal(resp.status(), 200, 'open once the clock passes the date');
    const media = server.base + (await page.locator('video').getAttribute('src'));
    assert.equal((await page.request.get(media)).status(), 200);
    await setClock('');
    assert.equal((await page.request.get(media)).status(), 403, 'media of a locked lesson');
    assert.equal((await page.goto(lessonURL(ids.locked))).status(), 403);

    // Past the date again: open; played to the end it completes the course.
    await setClock(new Date(unlockAt.getTime() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z'));
    try {
      assert.equal((await page.goto(lessonURL(ids.locked))).status(), 200);
      await video(page);
      const since = Date.now();
      await page.evaluate(async () => {
        const v = document.querySelector('video');
        v.playbackRate = 16;
        await v.play();
        await new Promise((r) => v.addEventListener('ended', r, { once: true }));
      });
      await reportedAfter(page, since);
      await page.locator('[data-testid="lesson-done"]').waitFor({ state: 'visible', timeout: 10_000 });
    } finally {
      await setClock('');
    }
    // A finished lesson never locks again.
    assert.equal((await page.goto(lessonURL(ids.locked))).status(), 200, 'done lesson before its date');
    await page.goto(`${portal()}/certificates`);
    assert.equal(await page.locator('[data-testid="certificate"]').count(), 1, 'the course completed: one certificate');
    await shot(page, 'learn-certificates.png');
    await axeCheck(page, 'certificates');
  });

  it('phone width 375: no horizontal scroll, targets of at least 44 px', async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, storageState: await ctx.storageState() });
    const p = await phone.newPage();
    const pages = {
      dashboard: portal() + '/',
      course: `${portal()}/courses/${ids.course}`,
      'text-lesson': lessonURL(ids.text),
      'video-lesson': lessonURL(ids.video),
      certificates: `${portal()}/certificates`,
    };
    for (const [name, url] of Object.entries(pages)) {
      await p.goto(url);
      const m = await p.evaluate(() => {
        const small = [];
        for (const el of document.querySelectorAll('a[href], button, input, select, textarea, video[controls], audio[controls]')) {
          if (el.closest('.prose') || el.classList.contains('skip')) continue;
          const r = el.getBoundingClientRect();
          if (r.width === 0 && r.height === 0) continue;
          if (r.width < 44 || r.height < 44) small.push(`${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 30)}" ${Math.round(r.width)}x${Math.round(r.height)}`);
        }
        return { scroll: document.documentElement.scrollWidth, inner: window.innerWidth, small };
      });
      assert.ok(m.scroll <= m.inner, `${name}: page is ${m.scroll} px wide at ${m.inner}`);
      assert.deepEqual(m.small, [], `${name}: targets under 44 px`);
      await shot(p, `learn-phone-${name}.png`);
    }
    await phone.close();
  });

  it('Arabic: right to left, translated, no serious axe findings', async () => {
    const ar = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'ar', storageState: await ctx.storageState() });
    const p = await ar.newPage();
    await p.goto(portal() + '/');
    assert.equal(await p.evaluate(() => document.documentElement.dir), 'rtl');
    assert.equal(await p.evaluate(() => document.documentElement.lang), 'ar');
    assert.match(await p.locator('h1').textContent(), /تعلّمي/);
    await shot(p, 'learn-arabic-dashboard.png');
    await axeCheck(p, 'arabic-dashboard');
    await p.goto(lessonURL(ids.video));
    await video(p);
    await shot(p, 'learn-arabic-lesson.png');
    await axeCheck(p, 'arabic-lesson');
    await ar.close();
  });
});
