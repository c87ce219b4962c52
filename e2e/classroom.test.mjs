// End-to-end tests of the live classroom: one `lectern serve`, real
// headless Chromium browsers (one per participant) with fake camera,
// microphone and screen, all inside a loopback-only network namespace.
// Run with ./run.sh (it builds the binary and makes the namespace).
//
// The UI contract used here (ids, data-testid, window.lectern) is the
// front-end's; the wire protocol is docs/classroom-protocol.md.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  serverForTests, Participant, join, click, closeAllBrowsers, assertFlowing, waitVideosPlaying, durationSeconds, selectedPairs, chatRewriter, coveredVideos, log, sleep,
} from './lib.mjs';

const server = serverForTests('classroom');

async function sendChat(p, text, to = '') {
  await p.page.locator('#chat-to').selectOption(to);
  await p.page.locator('#chat-input').fill(text);
  await p.page.locator('#chat-send').click();
}

const chatText = (p, text) => p.page.locator('[data-testid="chat-message"] .text').filter({ hasText: text });

async function waitChat(p, text, timeout = 10_000) {
  await chatText(p, text).first().waitFor({ state: 'attached', timeout });
}

async function assertNoChat(p, text) {
  assert.equal(await chatText(p, text).count(), 0, `${p.name} sees "${text}" but should not`);
}

const row = (p, userId) => p.page.locator(`[data-testid="participant"][data-user-id="${userId}"]`);

const camMic = (userId) => [
  { userId, label: 'camera', kind: 'video' },
  { userId, label: 'mic', kind: 'audio' },
];

describe('launch', () => {
  it('a scheduled class answers both launch URLs with the classroom page', { timeout: 60_000 }, async () => {
    const id = await server.schedule('Smoke');
    for (const encrypted of [true, false]) {
      const url = await server.launch(id, { userId: 'smoke-1', userName: 'Smoke', encrypted });
      assert.ok(url.startsWith(server.base + '/classroom/'), url);
      const r = await fetch(url);
      assert.equal(r.status, 200, `${url}: ${r.status}`);
      assert.match(r.headers.get('content-type') || '', /text\/html/);
    }
    const tampered = (await server.launch(id, { userId: 'smoke-1', userName: 'Smoke', encrypted: false })).replace('userName=Smoke', 'userName=Evil');
    assert.equal((await fetch(tampered)).status, 403);
  });
});

describe('class with media (isCorporate=1, isScreenshare=1, isPrivateChat=0)', () => {
  let classId;
  const teacher = new Participant('a-teacher', { userId: 'a-t', teacher: true });
  const s1 = new Participant('a-student1', { userId: 'a-s1' });
  const s2 = new Participant('a-student2', { userId: 'a-s2' });
  const all = [teacher, s1, s2];

  before(async () => {
    classId = await server.schedule('Media', { isCorporate: 1, isScreenshare: 1, isPrivateChat: 0 });
    teacher.url = await server.launch(classId, { userId: teacher.userId, userName: 'Tess Teacher', teacher: true });
    s1.url = await server.launch(classId, { userId: s1.userId, userName: 'Sam One', encrypted: false });
    s2.url = await server.launch(classId, { userId: s2.userId, userName: 'Sue Two' });
    await join(all);
  }, { timeout: 90_000 });

  after(async () => {
    await Promise.all(all.map((p) => p.close()));
  });

  it('a: teacher and two students publish camera and microphone and receive each other', { timeout: 120_000 }, async () => {
    for (const p of all) {
      await click(p, '#toggle-cam');
      await click(p, '#toggle-mic');
    }
    const results = await Promise.all(all.map(async (p) => {
      const others = all.filter((o) => o !== p).flatMap((o) => camMic(o.userId));
      const grown = await assertFlowing(p.page, others);
      log(`${p.name} receives:`, grown.map((g) => `${g.userId}/${g.label} +${g.bytes}B${g.kind === 'video' ? ` +${g.frames}f` : ` +${g.samples} samples`}`).join(', '));
      return grown;
    }));
    assert.equal(results.length, 3);
    // Every candidate pair in use is on loopback (the namespace has nothing else).
    const pairs = await selectedPairs(teacher.page);
    log('teacher ICE pairs:', pairs.map((x) => `${x.direction} ${x.label}: ${x.local} <-> ${x.remote}`).join('; '));
    for (const x of pairs) assert.match(`${x.local} ${x.remote}`, /^\S+ udp 127\.0\.0\.1:\d+ \S+ udp 127\.0\.0\.1:\d+$/, JSON.stringify(x));
    // Screenshots once the remote pictures are on screen.
    await waitVideosPlaying(teacher.page, 'video[data-stream-id][data-label="camera"]', 2);
    await waitVideosPlaying(s1.page, 'video[data-stream-id][data-label="camera"]', 2);
    await teacher.screenshot('teacher-view.png');
    await teacher.screenshot('teacher-full-page.png', { fullPage: true });
    await s1.screenshot('student-view.png');
  });

  it('timer: the time left shown is the time to the scheduled end', { timeout: 30_000 }, async () => {
    // The class was scheduled to end 55 minutes (rounded down to the minute)
    // after it was made, a few seconds ago.
    for (const p of [teacher, s1]) {
      const text = (await p.page.locator('#timer').innerText()).trim();
      const m = /^(?:(\d+):)?(\d{1,2}):(\d{2})$/.exec(text);
      assert.ok(m, `${p.name}: #timer reads ${JSON.stringify(text)}`);
      const minutes = (Number(m[1] || 0) * 3600 + Number(m[2]) * 60 + Number(m[3])) / 60;
      assert.ok(minutes >= 45 && minutes <= 56, `${p.name}: #timer reads ${text} (${Math.round(minutes)} minutes), want 45-56 minutes left; see teacher-view.png`);
    }
  });

  it('b: the teacher shares a screen and the students receive it', { timeout: 60_000 }, async () => {
    await click(teacher, '#toggle-screen');
    await Promise.all([s1, s2].map(async (p) => {
      await p.page.waitForSelector(`video[data-label="screen"][data-user-id="${teacher.userId}"]`, { state: 'attached', timeout: 20_000 });
      const grown = await assertFlowing(p.page, [{ userId: teacher.userId, label: 'screen', kind: 'video' }]);
      log(`${p.name} receives screen: +${grown[0].bytes}B +${grown[0].frames}f`);
      // The element itself shows new frames too.
      const frames = () => p.page.$eval('video[data-label="screen"]', (v) => v.getVideoPlaybackQuality().totalVideoFrames);
      const f0 = await frames();
      await sleep(1_500);
      const f1 = await frames();
      assert.ok(f1 > f0, `${p.name}: screen <video> frames did not grow (${f0} -> ${f1})`);
    }));
    await waitVideosPlaying(s2.page, 'video[data-label="screen"]', 1);
    await s2.screenshot('student-screen-share.png');
    await s2.screenshot('student-screen-share-full-page.png', { fullPage: true });
  });

  it('layout: at 1280x800 nothing is drawn over the remote videos (teacher view, student view with a shared screen)', { timeout: 30_000 }, async () => {
    const problems = [];
    for (const p of [teacher, s1]) {
      const covered = await coveredVideos(p.page);
      if (covered.length) problems.push(`${p.name}: ${JSON.stringify(covered)}`);
    }
    assert.equal(problems.length, 0, `remote videos covered by other elements (see teacher-view.png, student-screen-share.png): ${problems.join('; ')}`);
  });

  it('c: group chat reaches everyone; student-to-student private chat reaches only the recipient (isPrivateChat=0)', { timeout: 60_000 }, async () => {
    const group = `hello everyone ${Date.now()}`;
    await sendChat(teacher, group);
    await Promise.all(all.map((p) => waitChat(p, group)));
    const msg = teacher.page.locator('[data-testid="chat-message"]').filter({ hasText: group }).first();
    assert.equal(await msg.getAttribute('data-from'), teacher.userId);
    assert.equal((await msg.getAttribute('data-to')) || '', '');

    const secret = `psst s2 ${Date.now()}`;
    await sendChat(s1, secret, s2.userId);
    await waitChat(s2, secret);
    const got = s2.page.locator('[data-testid="chat-message"]').filter({ hasText: secret }).first();
    assert.equal(await got.getAttribute('data-from'), s1.userId);
    assert.equal(await got.getAttribute('data-to'), s2.userId);
    await sleep(1_500); // time for a wrongly broadcast message to arrive
    await assertNoChat(teacher, secret);
    assert.equal(await s1.page.locator('[data-testid="error"]').count(), 0, 'sender got an error');
  });

  it('g: attendance lists every participant with closed sessions after they leave', { timeout: 60_000 }, async () => {
    await Promise.all(all.map((p) => p.close()));
    log('media class: everyone left');
    const want = all.map((p) => p.userId).sort();
    let report;
    let previous = '';
    const deadline = Date.now() + 20_000;
    // Sessions still open are reported as closed "now", so a report whose
    // times stay put across two reads is one where every leave was recorded.
    for (;;) {
      report = await server.api('getclassreport', { class_id: classId });
      const snapshot = JSON.stringify(report);
      if (Array.isArray(report) && report.length >= want.length && snapshot === previous) break;
      if (Date.now() > deadline) {
        throw new Error(`attendance report not settled after 20 s (open sessions?): ${snapshot}`);
      }
      previous = snapshot;
      await sleep(2_000);
    }
    log('getclassreport:', JSON.stringify(report));
    assert.deepEqual(report.map((r) => r.userId).sort(), want);
    for (const r of report) {
      assert.ok(durationSeconds(r.duration) > 0, `${r.userId}: duration ${r.duration}`);
      assert.ok(Array.isArray(r.session) && r.session.length >= 1, `${r.userId}: no session`);
      for (const s of r.session) {
        assert.ok(s.time_in, `${r.userId}: session without time_in`);
        assert.ok(s.time_out, `${r.userId}: session without time_out`);
        assert.ok(Date.parse(s.time_out) >= Date.parse(s.time_in), `${r.userId}: ${s.time_in} > ${s.time_out}`);
      }
      assert.equal(r.attendance, 'Yes', `${r.userId}: attendance ${r.attendance}`);
    }
  });
});

describe('class without student media (isCorporate=0, isPrivateChat=1)', () => {
  let classId;
  const teacher = new Participant('d-teacher', { userId: 'd-t', teacher: true });
  const s1 = new Participant('d-student1', { userId: 'd-s1' });
  const s2 = new Participant('d-student2', { userId: 'd-s2' });
  const all = [teacher, s1, s2];

  before(async () => {
    classId = await server.schedule('Moderated', { isCorporate: 0, isPrivateChat: 1 });
    teacher.url = await server.launch(classId, { userId: teacher.userId, userName: 'Dora Teacher', teacher: true, encrypted: false });
    s1.url = await server.launch(classId, { userId: s1.userId, userName: 'Dan One' });
    s1.init = chatRewriter;
    s2.url = await server.launch(classId, { userId: s2.userId, userName: 'Dee Two', encrypted: false });
    await join(all);
  }, { timeout: 90_000 });

  after(async () => {
    await Promise.all(all.map((p) => p.close()));
  });

  it('c: with isPrivateChat=1 a student-to-student private message is refused', { timeout: 60_000 }, async () => {
    const refused = `s1 to s2 ${Date.now()}`;
    const offered = await s1.page.locator(`#chat-to option[value="${s2.userId}"]`).count();
    if (offered) {
      // The UI offers the other student: the server must refuse.
      await sendChat(s1, refused, s2.userId);
    } else {
      // The UI does not offer the other student (as it should not). Check
      // the server all the same: the page's own chat message, with its
      // recipient changed on the WebSocket to the other student.
      log(`${s1.name}: the chat offers no way to write to ${s2.userId}; sending one with the recipient changed on the WebSocket`);
      await s1.page.evaluate(([marker, to]) => { window.__e2eRewriteChat = { marker, to }; }, [refused, s2.userId]);
      await s1.page.locator('#chat-input').fill(refused);
      await s1.page.locator('#chat-send').click();
    }
    const err = s1.page.locator('[data-testid="error"]');
    await err.first().waitFor({ state: 'visible', timeout: 10_000 });
    log(`${s1.name} error: code=${await err.first().getAttribute('data-code')} "${(await err.first().innerText()).trim()}"`);
    assert.equal(await err.first().getAttribute('data-code'), 'forbidden');
    await s1.screenshot('student-private-chat-refused.png');
    await sleep(1_000);
    await assertNoChat(s2, refused);
    await assertNoChat(teacher, refused);
  });

  it('c: with isPrivateChat=1 a student may write privately to the teacher only', { timeout: 60_000 }, async () => {
    const to = s1.page.locator('#chat-to');
    if (await to.count() === 0) {
      await s1.screenshot('student-private-chat-no-recipient.png');
      const perms = await s1.page.evaluate(() => window.lectern.state().permissions);
      assert.fail(`${s1.name} has no #chat-to (recipient picker), so cannot write to the teacher privately; permissions ${JSON.stringify(perms)}`);
    }
    const options = await to.locator('option').evaluateAll((os) => os.map((o) => o.value));
    assert.ok(options.includes(teacher.userId), `#chat-to does not offer the teacher: ${JSON.stringify(options)}`);
    assert.ok(!options.includes(s2.userId), `#chat-to offers another student: ${JSON.stringify(options)}`);
    const toTeacher = `s1 to teacher ${Date.now()}`;
    await sendChat(s1, toTeacher, teacher.userId);
    await waitChat(teacher, toTeacher);
    const got = teacher.page.locator('[data-testid="chat-message"]').filter({ hasText: toTeacher }).first();
    assert.equal(await got.getAttribute('data-from'), s1.userId);
    assert.equal(await got.getAttribute('data-to'), teacher.userId);
    await sleep(1_000);
    await assertNoChat(s2, toTeacher);
  });

  it('d: a student raises a hand, the teacher allows media, and the student publishes', { timeout: 90_000 }, async () => {
    const cam = s1.page.locator('#toggle-cam');
    await cam.waitFor({ state: 'visible' });
    assert.equal(await cam.isDisabled(), true, 'student camera button should be disabled before the teacher allows media');
    assert.equal(await s1.page.locator('#toggle-mic').isDisabled(), true, 'student mic button should be disabled before the teacher allows media');

    await click(s1, '#raise-hand');
    await teacher.page.waitForFunction((uid) => {
      const r = document.querySelector(`[data-testid="participant"][data-user-id="${uid}"]`);
      return r && r.dataset.hand && r.dataset.hand !== 'false' && r.dataset.hand !== '0';
    }, s1.userId, { timeout: 10_000 });
    log(`teacher sees ${s1.userId}'s hand: data-hand=${await row(teacher, s1.userId).getAttribute('data-hand')}`);
    await teacher.screenshot('teacher-hand-raised.png');

    await row(teacher, s1.userId).locator('[data-action="allow-media"]').click();
    await s1.page.waitForSelector('#toggle-cam:not([disabled])', { timeout: 10_000 });
    await click(s1, '#toggle-cam');
    const grown = await assertFlowing(teacher.page, [{ userId: s1.userId, label: 'camera', kind: 'video' }]);
    log(`teacher receives ${s1.userId}/camera: +${grown[0].bytes}B +${grown[0].frames}f`);
  });

  it('f: the teacher removes a student, who cannot come back', { timeout: 60_000 }, async () => {
    await row(teacher, s2.userId).locator('[data-action="remove"]').click();
    await s2.page.waitForSelector('#app[data-state="failed"][data-fail-code="removed"]', { state: 'attached', timeout: 10_000 });
    await s2.screenshot('student-removed.png');
    await row(teacher, s2.userId).waitFor({ state: 'detached', timeout: 10_000 });
    await s2.close();

    const again = new Participant('d-student2-again', { userId: s2.userId });
    try {
      await again.open(s2.url);
      await again.page.waitForSelector('#app[data-state="failed"]', { state: 'attached', timeout: 15_000 });
      assert.deepEqual(await again.state(), { state: 'failed', failCode: 'removed' });
      await again.screenshot('student-removed-reopen.png');
    } finally {
      await again.close();
    }
  });
});

describe('seat limit (seat_attendees=1)', () => {
  const s1 = new Participant('e-student1', { userId: 'e-s1' });
  const s2 = new Participant('e-student2', { userId: 'e-s2' });

  after(async () => {
    await Promise.all([s1, s2].map((p) => p.close()));
  });

  it('e: the second student finds the class full', { timeout: 60_000 }, async () => {
    const classId = await server.schedule('Full', { seat_attendees: 1 });
    s1.url = await server.launch(classId, { userId: s1.userId, userName: 'Eve One' });
    s2.url = await server.launch(classId, { userId: s2.userId, userName: 'Eli Two', encrypted: false });
    await join([s1]);
    await s2.open(s2.url);
    await s2.page.waitForSelector('#app[data-state="failed"]', { state: 'attached', timeout: 15_000 });
    assert.deepEqual(await s2.state(), { state: 'failed', failCode: 'full' });
    const text = await s2.page.locator('#app').innerText();
    assert.match(text, /full/i, `no visible "full" message: ${JSON.stringify(text)}`);
    await s2.screenshot('student-class-full.png');
    // The first student is still in.
    assert.equal((await s1.state())?.state, 'joined');
  });
});

describe('pre-class check page', () => {
  const p = new Participant('h-check', { userId: 'check' });
  after(() => p.close());

  it('h: camera, microphone, direct and relayed connectivity are ok', { timeout: 90_000 }, async () => {
    const r = await p.open(`${server.base}/classroom/check`);
    assert.equal(r?.status(), 200, `/classroom/check answered ${r?.status()}`);
    const ids = ['check-camera', 'check-mic', 'check-direct', 'check-relay'];
    try {
      await p.page.waitForFunction((ids) => ids.every((id) => {
        const el = document.getElementById(id);
        return el && el.dataset.result && el.dataset.result !== 'running';
      }), ids, { timeout: 45_000, polling: 250 });
    } finally {
      await p.screenshot('check-page.png', { fullPage: true }).catch(() => {});
    }
    const results = await p.page.evaluate((ids) => Object.fromEntries(ids.map((id) => [id, document.getElementById(id).dataset.result])), ids);
    log('check page:', JSON.stringify(results));
    assert.deepEqual(results, Object.fromEntries(ids.map((id) => [id, 'ok'])));
  });
});
