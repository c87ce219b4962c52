// End-to-end test of the live classroom across browser engines: a teacher
// in headless Chromium (playwright-core) and a student in Debian's
// firefox-esr (puppeteer-core over WebDriver BiDi), in one class, inside a
// loopback-only network namespace. Run with ./run.sh.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  serverForTests, Participant, FirefoxParticipant, click, closeAllBrowsers, assertFlowing, recvStats, selectedPairs, log, sleep,
} from './lib.mjs';

const server = serverForTests('firefox');

const camMic = (userId) => [
  { userId, label: 'camera', kind: 'video' },
  { userId, label: 'mic', kind: 'audio' },
];

const fmt = (grown) => grown.map((g) => `${g.userId}/${g.label} +${g.bytes}B${g.kind === 'video' ? ` +${g.frames}f` : ` +${g.samples} samples`}`).join(', ');

describe('Chromium teacher and Firefox student (isCorporate=1)', () => {
  const teacher = new Participant('x-teacher-chromium', { userId: 'x-t', teacher: true });
  const student = new FirefoxParticipant('x-student-firefox', { userId: 'x-s1' });

  after(async () => {
    await Promise.all([teacher.close(), student.close()]);
  });

  it('both publish camera and microphone and each receives the other\'s video and audio', { timeout: 120_000 }, async () => {
    const classId = await server.schedule('Two engines', { isCorporate: 1 });
    const teacherUrl = await server.launch(classId, { userId: teacher.userId, userName: 'Chris Chromium', teacher: true });
    const studentUrl = await server.launch(classId, { userId: student.userId, userName: 'Fern Firefox', encrypted: false });
    await Promise.all([
      (async () => {
        const r = await teacher.open(teacherUrl);
        assert.equal(r?.status(), 200);
        await teacher.waitState('joined');
      })(),
      (async () => {
        const r = await student.open(studentUrl);
        assert.equal(r?.status(), 200);
        try {
          await student.waitState('joined');
        } catch (e) {
          await student.screenshot(`${student.name}-not-joined.png`).catch(() => {});
          throw e;
        }
      })(),
    ]);
    log('joined: Chromium teacher, Firefox student');

    for (const sel of ['#toggle-cam', '#toggle-mic']) {
      await click(teacher, sel);
      await student.click(sel);
    }
    const [tGrown, sGrown] = await Promise.all([
      assertFlowing(teacher.page, camMic(student.userId)),
      assertFlowing(student.page, camMic(teacher.userId)),
    ]);
    log(`Chromium teacher receives: ${fmt(tGrown)}`);
    log(`Firefox student receives: ${fmt(sGrown)}`);
    log('Firefox student inbound:', JSON.stringify(await recvStats(student.page)));
    const pairs = await selectedPairs(student.page).catch((e) => `(${e.message})`);
    log('Firefox ICE pairs:', JSON.stringify(pairs));

    // The pictures are on screen in both.
    await teacher.page.waitForFunction((uid) => {
      const v = document.querySelector(`video[data-label="camera"][data-user-id="${uid}"]`);
      return v && v.videoWidth > 0 && v.currentTime > 0.5;
    }, student.userId, { timeout: 20_000, polling: 250 });
    const shown = await student.until((uid) => {
      const v = document.querySelector(`video[data-label="camera"][data-user-id="${uid}"]`);
      return v && v.videoWidth > 0 && v.currentTime > 0.5 ? { w: v.videoWidth, h: v.videoHeight, t: v.currentTime } : false;
    }, teacher.userId, 'the teacher\'s camera playing in Firefox');
    log('Firefox shows the teacher\'s camera:', JSON.stringify(shown));
    await sleep(500);
    await teacher.screenshot('firefox-teacher-chromium-view.png');
    await student.screenshot('firefox-student-view.png');
  });
});
