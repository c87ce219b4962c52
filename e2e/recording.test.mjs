// End-to-end test of class recording (docs/classroom-recording.md): a
// 20-second class with record=2, a teacher publishing Chromium's fake
// camera and microphone, a chat message and a board stroke; then
// getclassrecording lists it, its WebM files pass ffprobe and ffmpeg (codec,
// duration, audio/video alignment on the recording clock), and the playback
// page (record_path) shows the chat and the stroke at their times.
// Run with ./run.sh (needs ffprobe and ffmpeg on PATH).

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CHROME_ARGS, serverForTests, Participant, join, click, closeAllBrowsers, log, sleep, artifact, drawPath, boardGeometry, toCanvas, objectSamples,
  pixelsNear, hexRgb,
} from './lib.mjs';

const execFileP = promisify(execFile);
// isRecordingLayout 1: the teacher's getDisplayMedia({preferCurrentTab})
// is accepted without a prompt, capturing the tab itself.
CHROME_ARGS.push('--auto-accept-this-tab-capture');
const server = serverForTests('recording');

const CHAT = 'Recorded hello at five seconds';
const PEN = '#1d4ed8';
const CLASS_MS = 20_000;

// until polls fn until it answers something truthy.
async function until(fn, what, timeout = 10_000, every = 100) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeout / 1000} s`);
    await sleep(every);
  }
}

// firstPackets, run in the teacher's page, answers the page's clock
// (Date.now()) when each kind of outbound RTP first had a packet sent: the
// poll that first saw one (audio, video), and when the poll before it
// began (audioBefore, videoBefore), which saw none; the first packet left
// between the two. Polls are ~10 ms apart on an idle machine and can be
// much further apart on a loaded one.
function firstPackets() {
  return new Promise((resolve) => {
    const seen = {};
    const deadline = Date.now() + 20_000;
    let before = Date.now();
    const tick = async () => {
      const began = Date.now();
      for (const { direction, pc } of window.lectern?.pcs?.() || []) {
        if (direction !== 'send') continue;
        const st = await pc.getStats();
        st.forEach((r) => {
          if (r.type === 'outbound-rtp' && r.packetsSent > 0 && !seen[r.kind]) {
            seen[r.kind] = Date.now();
            seen[r.kind + 'Before'] = before;
          }
        });
      }
      before = began;
      if ((seen.audio && seen.video) || Date.now() > deadline) resolve(seen);
      else setTimeout(tick, 10);
    };
    tick();
  });
}

async function ffprobe(file) {
  const { stdout } = await execFileP('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_name,codec_type,start_time,width,height',
    '-of', 'json', file], { timeout: 20_000 });
  return JSON.parse(stdout);
}

// decodeErrors decodes the whole file and answers what ffmpeg printed
// (nothing for a clean file). -enc_time_base:v -1 keeps the file's own
// time base (1 ms) for the null output: ffmpeg 5.1 otherwise uses 1/(its
// guessed frame rate), and two frames 49 ms apart in a ~20 fps WebRTC
// stream can round to one tick ("non monotonically increasing dts to
// muxer ... 122 >= 122") though the file's timestamps do increase.
async function decodeErrors(file) {
  const { stdout, stderr } = await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-i', file, '-enc_time_base:v', '-1', '-f', 'null', '-'], { timeout: 30_000 });
  return `${stdout}${stderr}`.trim();
}

// frameSizes decodes a video file and answers its runs of one picture
// size: [{w, h, from: frame index}].
async function frameSizes(file) {
  const { stdout } = await execFileP('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'frame=width,height', '-of', 'csv=p=0', file],
    { timeout: 30_000, maxBuffer: 16 << 20 });
  const runs = [];
  stdout.trim().split('\n').filter(Boolean).forEach((l, i) => {
    const [w, h] = l.split(',').map(Number);
    if (!runs.length || runs.at(-1).w !== w || runs.at(-1).h !== h) runs.push({ w, h, from: i });
  });
  return runs;
}

// packets answers the file's packets (pts in ms, keyframe flag) in file
// order, and where a pts does not increase.
async function packets(file) {
  const { stdout } = await execFileP('ffprobe', ['-v', 'error', '-select_streams', '0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', file],
    { timeout: 20_000, maxBuffer: 16 << 20 });
  const list = stdout.trim().split('\n').filter(Boolean).map((l) => {
    const [pts, flags] = l.split(',');
    return { pts: Math.round(Number(pts) * 1000), key: String(flags).includes('K') };
  });
  const bad = [];
  for (let i = 1; i < list.length; i++) if (list[i].pts <= list[i - 1].pts) bad.push({ i, pts: list[i].pts, prev: list[i - 1].pts });
  return { list, bad };
}

function walk(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

const replay = (p) => p.page.evaluate(() => window.lectern.replay());

// seekTo moves the playback page's #seek range to ms (a user drags it: the
// range has a step of 1000 ms) and answers the replay state.
async function seekTo(p, ms) {
  await p.page.locator('#seek').evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, ms);
  await sleep(150);
  return replay(p);
}

const pens = (r) => Object.values(r.board.pages).flat().filter((o) => o.tool === 'pen');
const hasChat = (r) => r.chat.some((m) => m.text === CHAT);

describe('recorded class (record=2)', () => {
  const teacher = new Participant('r-teacher', { userId: 'r-t', teacher: true });
  const student = new Participant('r-student', { userId: 'r-s1' });
  const viewer = new Participant('r-playback', { userId: 'viewer' });
  let classId;
  const wall = {}; // node's clock (ms) at what the test did

  after(async () => {
    await Promise.all([teacher, student, viewer].map((p) => p.close()));
  });

  it('a 20-second class with camera, microphone, chat and a stroke is recorded and plays back', { timeout: 120_000 }, async () => {
    classId = await server.schedule('Recorded', { record: 2, isCorporate: 1 });
    teacher.url = await server.launch(classId, { userId: teacher.userId, userName: 'Rita Teacher', teacher: true });
    student.url = await server.launch(classId, { userId: student.userId, userName: 'Ross Student', encrypted: false });

    // ---- the live class ----
    wall.join = Date.now();
    await join([teacher, student]);
    await Promise.all([teacher, student].map((p) => p.page.locator('#recording-indicator').waitFor({ state: 'visible', timeout: 10_000 })));
    wall.indicator = Date.now();
    log(`both see #recording-indicator ${wall.indicator - wall.join} ms after the joins began`);
    assert.equal(await teacher.page.locator('#record-toggle').getAttribute('data-recording'), 'true', 'the teacher\'s #record-toggle does not show recording');
    assert.match(await teacher.page.locator('#record-toggle').innerText(), /stop recording/i, 'the teacher\'s #record-toggle does not offer to stop');
    assert.equal(await student.page.locator('#record-toggle').count(), 0, 'the student has a #record-toggle');

    // The teacher publishes camera and microphone; the page notes when the
    // first packet of each left.
    const firstSent = teacher.page.evaluate(firstPackets);
    await click(teacher, '#toggle-cam');
    await click(teacher, '#toggle-mic');
    const sent = await firstSent;
    assert.ok(sent.audio && sent.video, `the teacher sent no ${sent.audio ? 'video' : 'audio'} within 20 s`);
    log(`teacher's first packets: video ${sent.video - wall.join} ms, audio ${sent.audio - wall.join} ms after the joins began (audio - video ${sent.audio - sent.video} ms)`);
    // The fake microphone beeps: the student sees the teacher speaking.
    await student.page.locator('[data-testid="participant"][data-user-id="r-t"][data-speaking="true"]').waitFor({ state: 'attached', timeout: 10_000 });
    wall.speaking = Date.now();
    log(`the student sees the teacher speaking ${wall.speaking - sent.audio} ms after the first audio packet`);

    const at = (ms) => sleep(Math.max(0, wall.indicator + ms - Date.now()));
    await at(5_000);
    await teacher.page.locator('#chat-input').fill(CHAT);
    wall.chat = Date.now();
    await teacher.page.locator('#chat-send').click();
    await student.page.locator('[data-testid="chat-message"] .text').filter({ hasText: CHAT }).first().waitFor({ state: 'attached', timeout: 5_000 });

    await at(10_000);
    await click(teacher, '#tool-pen');
    await click(teacher, `[data-color="${PEN}"]`);
    await teacher.page.locator('[data-width]').nth(2).click();
    const wave = [];
    for (let x = 200; x <= 1400; x += 60) wave.push([x, 450 + Math.round(150 * Math.sin((x - 200) / 130))]);
    wall.stroke = Date.now();
    await drawPath(teacher.page, wave);
    wall.strokeUp = Date.now();
    const stroke = await until(async () => pens(await student.page.evaluate(() => ({ board: window.lectern.board() })))[0], 'the student has the stroke', 5_000);
    log(`stroke: ${stroke.points.length / 2} points, ${stroke.color}, width ${stroke.width}`);

    await at(CLASS_MS - 1_000);
    await teacher.screenshot('recording-teacher-live.png');
    await at(CLASS_MS);
    wall.end = Date.now();
    await click(teacher, '#end-class');
    // (Participant.waitState counts joined as final, so wait for the attribute.)
    await Promise.all([teacher, student].map((p) => p.page.waitForSelector('#app[data-state="ended"]', { state: 'attached', timeout: 10_000 })));
    log(`class ended ${wall.end - wall.indicator} ms after the indicator showed`);

    // ---- the API ----
    const rec = await until(async () => {
      const res = await server.api('getclassrecording', { class_id: classId });
      return Array.isArray(res) && res[0]?.state === 'ready' ? res[0] : null;
    }, 'getclassrecording state ready', 15_000, 250);
    log('getclassrecording:', JSON.stringify({ ...rec, record_url: rec.record_url && '(signed)', record_path: rec.record_path && '(signed)' }));
    assert.equal(String(rec.classroom_id), String(classId));
    assert.equal(String(rec.status), '1');
    // duration: the media's, from the first packet to the end (the camera
    // and microphone start a moment after recording does).
    const [, hh, mm, ss] = /^(\d\d):(\d\d):(\d\d)$/.exec(rec.duration) ?? [];
    const mediaMs = wall.end - Math.min(sent.audio, sent.video);
    assert.ok(Math.abs((Number(hh) * 3600 + Number(mm) * 60 + Number(ss)) * 1000 - mediaMs) <= 1_500,
      `duration ${rec.duration}, the media ran ${mediaMs} ms (first packet to the end)`);
    assert.ok(rec.record_url && rec.record_path, 'record_url and record_path');

    // The playback page's boot data: every file and the event log.
    const html = await (await fetch(rec.record_path)).text();
    const bootJson = /<script id="lectern-boot" type="application\/json">([\s\S]*?)<\/script>/.exec(html)?.[1];
    assert.ok(bootJson, 'the playback page has no #lectern-boot');
    const boot = JSON.parse(bootJson);
    assert.ok(boot.events, 'boot data has no events link');
    const lines = (await (await fetch(new URL(boot.events, rec.record_path))).text()).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    fs.writeFileSync(artifact('recording-events.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const recStart = lines.find((l) => l.type === 'recording' && l.action === 'start');
    const recStop = lines.find((l) => l.type === 'recording' && l.action === 'stop');
    assert.ok(recStart && recStop, `the event log has no recording start/stop: ${lines.filter((l) => l.type === 'recording').map((l) => JSON.stringify(l))}`);
    assert.equal(lines[0].type === 'snapshot' || lines[1]?.type === 'snapshot', true, 'the event log does not begin with a snapshot');
    const t0 = Date.parse(recStart.at);
    const chatLine = lines.find((l) => l.type === 'chat' && l.message?.text === CHAT);
    const strokeLine = lines.find((l) => l.type === 'board' && l.op === 'add' && l.object?.tool === 'pen');
    assert.ok(chatLine, 'the event log has no chat line with the message');
    assert.ok(strokeLine, 'the event log has no board add of the pen stroke');
    const onMs = recStop.t - recStart.t;
    log(`event log: ${lines.length} lines; recording start at ${recStart.at} (${t0 - wall.join} ms after the joins began), stop t=${recStop.t}; chat t=${chatLine.t} (sent ${wall.chat - t0} ms), stroke t=${strokeLine.t} (drawn ${wall.stroke - t0}-${wall.strokeUp - t0} ms), end clicked ${wall.end - t0} ms`);
    // The recording's clock agrees with the browser side.
    assert.ok(t0 >= wall.join - 50 && t0 <= wall.indicator + 50, `recording started at ${t0 - wall.join} ms, not between the joins and the indicator (${wall.indicator - wall.join} ms)`);
    assert.ok(Math.abs(onMs - (wall.end - t0)) < 1_000, `recording on for ${onMs} ms by the log, the class was ended ${wall.end - t0} ms after it started`);
    assert.ok(chatLine.t >= wall.chat - t0 - 50 && chatLine.t < wall.chat - t0 + 1_000, `chat logged at ${chatLine.t}, sent at ${wall.chat - t0}`);
    assert.ok(strokeLine.t >= wall.stroke - t0 && strokeLine.t < wall.strokeUp - t0 + 1_000, `stroke logged at ${strokeLine.t}, drawn from ${wall.stroke - t0} to ${wall.strokeUp - t0} (mouse up)`);
    // Who is speaking: the fake microphone's beeps make the teacher speak
    // from about 300 ms after the first sound.
    const speakLines = lines.filter((l) => l.type === 'speaking');
    log(`speaking lines: ${speakLines.map((l) => `${l.t} ${l.userId} ${l.speaking}`).join('; ') || 'none'}`);
    const spoke = speakLines.find((l) => l.userId === teacher.userId && l.speaking === true);
    assert.ok(spoke, 'the event log has no speaking line for the teacher while the fake microphone played');
    assert.ok(spoke.t >= sent.audio - t0 && spoke.t <= sent.audio - t0 + 3_000, `the teacher speaks from ${spoke.t} ms, the microphone's first packet was at ${sent.audio - t0} ms`);

    // ---- the files ----
    const media = boot.files.filter((f) => f.role === 'media');
    log('boot files:', JSON.stringify(media.map((f) => ({ ...f, url: '(signed)' }))));
    // The camera: Chromium raises its camera's resolution step by step
    // while the bandwidth estimate grows (320x180, 480x270, ...), and the
    // recorder keeps writing the one file of the segment.
    const cam = media.filter((f) => f.userId === teacher.userId && f.label === 'camera').sort((a, b) => a.startMs - b.startMs);
    const mic = media.filter((f) => f.userId === teacher.userId && f.label === 'mic');
    assert.equal(cam.length, 1, `want one camera file for the one segment, got ${cam.length}`);
    assert.equal(mic.length, 1, `want one mic file, got ${mic.length}`);
    assert.equal(media.length, cam.length + mic.length, 'files of someone else (the student published nothing)');
    const opens = lines.filter((l) => l.type === 'file' && l.action === 'open');
    const closes = lines.filter((l) => l.type === 'file' && l.action === 'close');

    const recRoot = path.join(server.dataDir, 'blobs', 'recordings');
    const onDisk = walk(recRoot);
    log(`on disk: ${onDisk.map((f) => `${path.relative(recRoot, f)} ${fs.statSync(f).size}B`).join(', ')}`);
    assert.ok(onDisk.every((f) => path.relative(recRoot, f).startsWith(`${server.domain.domain_id}/`)), 'a recording file outside blobs/recordings/<domain>/');
    const probe = async (label, i, f) => {
      // The file as the player gets it, and the same bytes on disk.
      const r = await fetch(new URL(f.url, rec.record_path));
      assert.equal(r.status, 200, `${label} file link: HTTP ${r.status}`);
      const bytes = Buffer.from(await r.arrayBuffer());
      const disk = onDisk.filter((d) => d.endsWith('.webm') && fs.statSync(d).size === bytes.length && fs.readFileSync(d).equals(bytes));
      assert.equal(disk.length, 1, `${label}: no file under blobs/recordings has the served bytes`);
      const name = path.basename(disk[0]);
      fs.copyFileSync(disk[0], artifact(`recording-${label}-${i + 1}.webm`));
      const open = opens.find((l) => l.name === name);
      const close = closes.find((l) => l.name === name);
      assert.ok(open && close, `${label}: ${name} has no open and close lines in the event log`);
      const info = await ffprobe(disk[0]);
      const errors = await decodeErrors(disk[0]);
      const pk = await packets(disk[0]);
      const st = info.streams || [];
      const start = Number(st[0]?.start_time) * 1000;
      // A file of one frame has no duration (its one frame has no end);
      // ffprobe then shows none, and it counts as 0.
      const single = pk.list.length === 1;
      const dur = info.format?.duration === undefined && single ? 0 : Number(info.format?.duration) * 1000;
      log(`${label} ${i + 1}: ${path.relative(recRoot, disk[0])} ${bytes.length}B; ffprobe ${JSON.stringify(info)}; ${pk.list.length} packets (${pk.list.filter((x) => x.key).length} key), pts ${pk.list[0]?.pts}..${pk.list.at(-1)?.pts} ms; boot startMs ${f.startMs} durationMs ${f.durationMs} ${f.width}x${f.height}; log start ${open.start} end ${close.end}; decode errors: ${errors ? JSON.stringify(errors.slice(0, 500)) : 'none'}`);
      if (single) log(`WARNING: ${label} ${name} holds one frame (${bytes.length}B), the ${f.width}x${f.height} picture before the next size; it has no duration`);
      assert.equal(st.length, 1, `${label} ${name}: want one stream, got ${JSON.stringify(st)}`);
      assert.equal(st[0].codec_name, label === 'camera' ? 'vp8' : 'opus', `${label} ${name} codec`);
      if (label === 'camera') {
        // One file across the camera's size changes: the header has the
        // first picture's size, the frames their own, the boot data the
        // largest.
        const sizes = await frameSizes(disk[0]);
        log(`${label} ${i + 1}: decoded frame sizes ${sizes.map((x) => `${x.w}x${x.h} from frame ${x.from}`).join(', ')}`);
        assert.deepEqual([st[0].width, st[0].height], [open.width, open.height], `${name}: ffprobe size, the log's open size`);
        assert.deepEqual([sizes[0].w, sizes[0].h], [open.width, open.height], `${name}: first frame's size, the log's open size`);
        const largest = sizes.reduce((a, b) => (b.w * b.h > a.w * a.h ? b : a));
        assert.deepEqual([largest.w, largest.h], [f.width, f.height], `${name}: largest decoded frame, boot size`);
      }
      if (label === 'camera') assert.ok(pk.list[0]?.key, `${name} does not begin with a keyframe`);
      assert.deepEqual(pk.bad.slice(0, 10), [], `${label} ${name} (kept as e2e/artifacts/recording-${label}-${i + 1}.webm): ${pk.bad.length} packet(s) whose pts does not increase (of ${pk.list.length}): ${JSON.stringify(pk.bad.slice(0, 10))}`);
      assert.equal(errors, '', `${label} ${name} (kept as e2e/artifacts/recording-${label}-${i + 1}.webm): ffmpeg decode errors: ${errors.slice(0, 1000)}`);
      assert.equal(open.start, f.startMs, `${name}: log start, boot startMs`);
      // The file's duration: what it covers on the recording clock.
      const want = close.end - open.start;
      assert.ok(Number.isFinite(dur) && Math.abs(dur - want) <= 1_000, `${label} ${name}: ffprobe duration ${dur} ms, it covers ${open.start}-${close.end} (${want} ms) of the recording`);
      assert.ok(Math.abs(dur - f.durationMs) <= 1_000, `${label} ${name}: ffprobe duration ${dur} ms, boot durationMs ${f.durationMs}`);
      return { f, name, dur, start, first: f.startMs + start, last: f.startMs + dur };
    };
    const camP = [];
    for (const [i, f] of cam.entries()) camP.push(await probe('camera', i, f));
    const micP = await probe('mic', 0, mic[0]);
    // The camera's files follow each other without a hole.
    for (let i = 1; i < camP.length; i++) {
      const gap = camP[i].first - camP[i - 1].last;
      assert.ok(gap >= -50 && gap <= 250, `camera ${camP[i - 1].name} ends at ${camP[i - 1].last} ms, ${camP[i].name} begins at ${camP[i].first} ms (gap ${gap} ms)`);
    }
    // Against the browser: each stream is recorded from its first packet to
    // the end of the class (within a second).
    const endAt = wall.end - t0;
    for (const [label, first, last, sentAt] of [['camera', camP[0].first, camP.at(-1).last, sent.video - t0], ['mic', micP.first, micP.last, sent.audio - t0]]) {
      log(`${label}: recorded ${first.toFixed(0)}-${last.toFixed(0)} ms (${(last - first).toFixed(0)} ms); first packet sent at ${sentAt} ms, class ended at ${endAt} ms (${endAt - sentAt} ms)`);
      assert.ok(Math.abs(first - sentAt) <= 1_000, `${label}: recorded from ${first} ms, its first packet was sent at ${sentAt} ms`);
      assert.ok(Math.abs(last - endAt) <= 1_000, `${label}: recorded until ${last} ms, the class was ended at ${endAt} ms`);
      assert.ok(Math.abs(last - first - (endAt - sentAt)) <= 1_000, `${label}: recorded for ${last - first} ms, it was on for ${endAt - sentAt} ms`);
    }
    // Audio and video on one clock. Both streams are cut at the same moment
    // (the class ends), so their last frames must sit together on the
    // recording clock: a video/audio offset in the recorder's anchoring
    // shows there (within 100 ms; a frame is 33 ms). The first frames are
    // compared with when the browser's stats first counted a packet sent,
    // which is coarser: each first packet left between two polls of the
    // stats (firstPackets), and a first keyframe's encoding time lies
    // between capture and send. So the recording's offset must lie within
    // 150 ms of the offsets the polls allow.
    const beginOff = camP[0].first - micP.first;
    const sentOff = sent.video - sent.audio;
    const sentLo = sent.videoBefore - sent.audio, sentHi = sent.video - sent.audioBefore;
    const endOff = camP.at(-1).last - micP.last;
    log(`A/V: last video - last audio on the recording clock ${endOff.toFixed(0)} ms; first video - first audio ${beginOff.toFixed(0)} ms (first packets sent ${sentOff} ms apart, between ${sentLo} and ${sentHi} ms by the polls: error ${(beginOff - sentOff).toFixed(0)} ms)`);
    assert.ok(Math.abs(endOff) <= 100, `camera and mic end ${endOff.toFixed(0)} ms apart on the recording clock (both stopped together); want within 100 ms`);
    assert.ok(beginOff >= sentLo - 150 && beginOff <= sentHi + 150, `camera and mic begin ${beginOff.toFixed(0)} ms apart on the recording clock, their first packets were sent ${sentLo} to ${sentHi} ms apart (polls of the stats); want within 150 ms of that`);
    const oneFrame = camP.filter((c) => c.dur === 0);
    if (oneFrame.length) log(`WARNING: ${oneFrame.length} camera file(s) of a single frame: ${oneFrame.map((c) => c.name).join(', ')}`);
    // record_url: the main file (the teacher's camera).
    const main = await fetch(rec.record_url);
    const mainBytes = Buffer.from(await main.arrayBuffer());
    log(`record_url: HTTP ${main.status} ${main.headers.get('content-type')} ${mainBytes.length}B (${rec.name}); the camera's files: ${camP.map((c) => `${c.name} ${(c.dur / 1000).toFixed(1)}s`).join(', ')}`);
    assert.equal(main.status, 200);
    if (mainBytes.length < camP.reduce((n, c) => Math.max(n, fs.statSync(artifact(`recording-camera-${camP.indexOf(c) + 1}.webm`)).size), 0)) {
      log(`WARNING: record_url gives ${rec.name} (${mainBytes.length}B), not the camera's longest file`);
    }

    // ---- the playback page ----
    await viewer.open(rec.record_path);
    await until(async () => (await viewer.page.locator('#app').getAttribute('data-state')) === 'ready', 'playback #app ready', 15_000);
    const r0 = await replay(viewer);
    // The controls sit under the board, in the window, covering nothing.
    const rects = await viewer.page.evaluate(() => {
      const r = (sel) => {
        const b = document.querySelector(sel)?.getBoundingClientRect();
        return b && { top: Math.round(b.top), bottom: Math.round(b.bottom) };
      };
      return { board: r('.pb-board'), controls: r('.pb-controls'), h: window.innerHeight };
    });
    log(`playback layout at 1280x800: board ${JSON.stringify(rects.board)}, controls ${JSON.stringify(rects.controls)}, window ${rects.h}`);
    assert.ok(rects.controls.top >= rects.board.bottom, `the controls (top ${rects.controls.top}) cover the board (bottom ${rects.board.bottom})`);
    assert.ok(rects.controls.bottom <= rects.h, `the controls end at ${rects.controls.bottom}, below the window (${rects.h})`);
    assert.ok(r0.speech.some((x) => x.userId === teacher.userId), `the playback has no speech of the teacher: ${JSON.stringify(r0.speech)}`);
    log(`playback: duration ${r0.duration} ms, chapters ${JSON.stringify(r0.chapters)}, files ${await viewer.page.locator('video[data-label], audio[data-label]').count()} media elements`);
    assert.ok(Math.abs(r0.duration - onMs) <= 1_000, `playback duration ${r0.duration} ms, recording on for ${onMs} ms`);

    // Seeking (#seek steps by 1 s): just before and after the chat and the stroke.
    const before = (t) => (Math.floor(t / 1000) * 1000 < t ? Math.floor(t / 1000) * 1000 : t - 1000);
    const afterT = (t) => Math.ceil((t + 1) / 1000) * 1000;
    let s = await seekTo(viewer, before(chatLine.t));
    assert.ok(!hasChat(s), `at ${s.t} ms (chat at ${chatLine.t}) the chat already has the message`);
    s = await seekTo(viewer, afterT(chatLine.t));
    assert.ok(hasChat(s), `at ${s.t} ms (chat at ${chatLine.t}) the chat lacks the message: ${JSON.stringify(s.chat)}`);
    assert.equal(pens(s).length, 0, `at ${s.t} ms (stroke at ${strokeLine.t}) the board already has the stroke`);
    await viewer.page.locator('[data-testid="chat-message"] .text').filter({ hasText: CHAT }).first().waitFor({ state: 'visible', timeout: 5_000 });
    await viewer.screenshot('recording-playback-after-chat.png');
    s = await seekTo(viewer, before(strokeLine.t));
    assert.equal(pens(s).length, 0, `at ${s.t} ms (stroke at ${strokeLine.t}) the board already has the stroke`);
    s = await seekTo(viewer, afterT(strokeLine.t));
    assert.equal(pens(s).length, 1, `at ${s.t} ms (stroke at ${strokeLine.t}) the board lacks the stroke: ${JSON.stringify(s.board)}`);
    assert.deepEqual(pens(s)[0].points, stroke.points, 'the replayed stroke is not the one drawn');

    // Playing: from 2 s before the stroke, at 2x; the stroke appears when
    // the clock passes its time, and the camera plays.
    await seekTo(viewer, before(strokeLine.t) - 1000);
    await viewer.page.locator('#speed').selectOption('2');
    await click(viewer, '#play-toggle');
    // While it plays, sample the clock and the camera tile shown: the
    // stroke appears when the clock passes its time, and the camera's file
    // plays in step with the clock (the replay corrects it past 200 ms).
    const samples = [];
    let seenAt = 0;
    let end = null;
    const deadline = Date.now() + 20_000;
    while (!end) {
      const x = await viewer.page.evaluate(() => {
        const r = window.lectern.replay();
        const vids = [...document.querySelectorAll('video[data-label="camera"]')].map((v) => ({
          start: Number(v.dataset.start), shown: !v.closest('li')?.hidden, ct: Math.round(v.currentTime * 1000), w: v.videoWidth,
          rs: v.readyState, paused: v.paused, err: v.error ? v.error.code : 0,
        }));
        return { r, vids };
      });
      if (!seenAt && pens(x.r).length) seenAt = x.r.t;
      if (x.r.playing) samples.push({ t: x.r.t, shown: x.vids.filter((v) => v.shown) });
      if (!x.r.playing && x.r.t >= x.r.duration - 50) end = x.r;
      if (Date.now() > deadline) throw new Error(`playback did not reach the end in 20 s: ${JSON.stringify(x)}`);
      await sleep(50);
    }
    log(`playing: the stroke appeared at clock ${seenAt} ms (logged at ${strokeLine.t})`);
    assert.ok(seenAt >= strokeLine.t && seenAt <= strokeLine.t + 500, `while playing the stroke appeared at ${seenAt} ms, logged at ${strokeLine.t}`);
    // Samples past the first 500 ms of a file (a new file takes a moment to
    // start): one camera tile is shown, it has a picture, plays, and is
    // within 500 ms of the clock.
    const settled = samples.filter((x) => x.shown.length && x.t - x.shown[0].start > 500);
    const good = settled.filter((x) => x.shown.length === 1 && x.shown[0].w > 0 && !x.shown[0].paused && Math.abs(x.shown[0].ct - (x.t - x.shown[0].start)) <= 500);
    const drifts = settled.filter((x) => x.shown[0].w > 0).map((x) => x.shown[0].ct - (x.t - x.shown[0].start));
    log(`playing: ${samples.length} samples, ${settled.length} settled in a file, ${good.length} with the shown camera playing within 500 ms of the clock; media - clock ${drifts.length ? `${Math.min(...drifts)}..${Math.max(...drifts)}` : '-'} ms`);
    const badSamples = settled.filter((x) => !good.includes(x));
    // At a switch from one file of the chain to the next the player shows
    // both for up to 100 ms (it keeps a file 100 ms past its end); longer is
    // a tile that should be gone.
    const twice = samples.filter((x) => x.shown.length > 1);
    const stuck = twice.filter((x) => x.t - Math.max(...x.shown.map((v) => v.start)) > 200);
    if (twice.length) log(`playing: ${twice.length} sample(s) with two camera tiles shown, ${stuck.length} of them more than 200 ms after the later file began`);
    assert.equal(stuck.length, 0, `the playback page shows ${stuck[0]?.shown.length} camera tiles of one stream at once in ${stuck.length} of ${samples.length} samples (see e2e/artifacts/recording-playback-after-chat.png), e.g. ${JSON.stringify(stuck[0])}`);
    assert.ok(settled.length >= 5 && good.length >= settled.length * 0.8, `the shown camera tile did not play with the clock: ${JSON.stringify(badSamples.slice(0, 8))}`);
    assert.ok(hasChat(end) && pens(end).length === 1, 'at the end the chat and the stroke are there');
    // At the end the seek thumb is at the end of its track.
    const seekEnd = await viewer.page.locator('#seek').evaluate((el) => ({ value: Number(el.value), max: Number(el.max) }));
    assert.ok(seekEnd.max - seekEnd.value < 1, `at the end #seek is at ${seekEnd.value} of ${seekEnd.max}`);
    await sleep(300);
    await viewer.screenshot('recording-playback-end.png');
    await viewer.screenshot('recording-playback-end-full-page.png', { fullPage: true });
    // The stroke is painted on the replayed board.
    const g = await boardGeometry(viewer.page);
    const png = await viewer.page.locator('#board').screenshot({ path: artifact('recording-playback-board.png') });
    const pts = objectSamples(stroke).map(([x, y]) => toCanvas(g, x, y));
    const got = await pixelsNear(viewer.page, png, pts, hexRgb(PEN), 3);
    const hits = got.filter((x) => x.d <= 60).length;
    log(`playback board: stroke painted at ${hits}/${pts.length} sample points`);
    assert.ok(hits >= pts.length * 0.8, `the replayed stroke is painted at ${hits}/${pts.length} points (see e2e/artifacts/recording-playback-board.png)`);
    const pageErrors = fs.readFileSync(artifact(`${viewer.name}.console.log`), 'utf8').split('\n').filter((l) => / (pageerror|error):/.test(l));
    assert.deepEqual(pageErrors, [], 'the playback page logged errors');
  });
});

describe('recorded as the whole tab (isRecordingLayout=1)', () => {
  const teacher = new Participant('r1-teacher', { userId: 'r1-t', teacher: true });
  const viewer = new Participant('r1-playback', { userId: 'viewer' });

  after(async () => {
    await Promise.all([teacher, viewer].map((p) => p.close()));
  });

  it('the teacher\'s tab is captured and is the recording\'s main file', { timeout: 90_000 }, async () => {
    const classId = await server.schedule('Tab recorded', { record: 2, isRecordingLayout: 1, isCorporate: 1 });
    teacher.url = await server.launch(classId, { userId: teacher.userId, userName: 'Tia Teacher', teacher: true });
    await join([teacher]);
    // Recording starts by itself (record=2): the page captures its own tab
    // and publishes it as the "recording" stream, no click. The page notes
    // (on its clock, polling every 10 ms) when the tab's first packet left.
    const tabSent = await teacher.page.evaluate(() => new Promise((resolve) => {
      const deadline = Date.now() + 20_000;
      const tick = async () => {
        for (const { direction, label, pc } of window.lectern?.pcs?.() || []) {
          if (direction !== 'send' || label !== 'recording') continue;
          let sent = 0;
          (await pc.getStats()).forEach((r) => {
            if (r.type === 'outbound-rtp' && r.kind === 'video') sent += r.packetsSent;
          });
          if (sent > 0) return resolve(Date.now());
        }
        if (Date.now() > deadline) resolve(0);
        else setTimeout(tick, 10);
      };
      tick();
    }));
    assert.ok(tabSent > 0, 'the teacher\'s tab capture sent no video within 20 s');
    await teacher.page.locator('#recording-indicator').waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await teacher.page.locator('[data-testid="tab-capture-off"]').count(), 0, 'the teacher is told the tab is not captured');
    await click(teacher, '#toggle-cam');
    await teacher.page.locator('#chat-input').fill('On the tab recording');
    await teacher.page.locator('#chat-send').click();
    // The camera goes off for 2 s and on again: a new stream, the same file.
    await sleep(3_000);
    await click(teacher, '#toggle-cam');
    const camOff = Date.now();
    await sleep(2_000);
    await click(teacher, '#toggle-cam');
    const camOn = Date.now();
    await sleep(3_000);
    await teacher.screenshot('recording-tab-teacher-live.png');
    const endAt = Date.now();
    await click(teacher, '#end-class');
    await teacher.page.waitForSelector('#app[data-state="ended"]', { state: 'attached', timeout: 10_000 });

    const rec = await until(async () => {
      const res = await server.api('getclassrecording', { class_id: classId });
      return Array.isArray(res) && res[0]?.state === 'ready' ? res[0] : null;
    }, 'getclassrecording state ready', 15_000, 250);
    log('getclassrecording (tab):', JSON.stringify({ ...rec, record_url: '(signed)', record_path: '(signed)', export_url: rec.export_url && '(signed)' }));
    assert.match(rec.name, /-recording-/, `the recording's main file is ${rec.name}, not the tab`);
    const main = await fetch(rec.record_url);
    assert.equal(main.status, 200);
    const file = artifact('recording-tab.webm');
    fs.writeFileSync(file, Buffer.from(await main.arrayBuffer()));
    const info = await ffprobe(file);
    const dur = Number(info.format?.duration) * 1000;
    const want = endAt - tabSent;
    log(`tab file: ffprobe ${JSON.stringify(info)}; on for ${want} ms (first packet to the end click)`);
    assert.equal(info.streams?.[0]?.codec_name, 'vp8');
    assert.ok(Math.abs(dur - want) <= 1_000, `the tab file lasts ${dur} ms, the tab was sent for ${want} ms`);
    assert.equal(await decodeErrors(file), '', 'the tab file decodes with errors');
    // What was recorded: a frame of the tab, to look at.
    await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-ss', String(Math.max(0, dur / 1000 - 1.5)), '-i', file, '-frames:v', '1', artifact('recording-tab-frame.png')], { timeout: 20_000 });
    log('tab frame: e2e/artifacts/recording-tab-frame.png');

    // The camera, off for 2 s: one file of two spans, the time off cut out.
    const html = await (await fetch(rec.record_path)).text();
    const boot = JSON.parse(/<script id="lectern-boot" type="application\/json">([\s\S]*?)<\/script>/.exec(html)[1]);
    const cams = boot.files.filter((f) => f.label === 'camera');
    assert.equal(cams.length, 1, `want one camera file for a camera turned off and on, got ${JSON.stringify(cams.map((f) => f.name))}`);
    const lines = (await (await fetch(new URL(boot.events, rec.record_path))).text()).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const t0 = Date.parse(lines.find((l) => l.type === 'recording' && l.action === 'start').at);
    const close = lines.find((l) => l.type === 'file' && l.action === 'close' && l.name === cams[0].name);
    log(`camera file ${cams[0].name}: spans ${JSON.stringify(close?.spans)}; camera off at ${camOff - t0} ms, on at ${camOn - t0} ms`);
    assert.equal(close?.spans?.length, 2, 'the camera file has not two spans');
    const [[, end1], [start2, end2]] = close.spans;
    assert.ok(Math.abs(end1 - (camOff - t0)) <= 700, `the first span ends at ${end1} ms, the camera went off at ${camOff - t0} ms`);
    assert.ok(start2 >= camOn - t0 && start2 <= camOn - t0 + 1_500, `the second span starts at ${start2} ms, the camera came on at ${camOn - t0} ms`);
    const camFile = artifact('recording-tab-camera.webm');
    fs.writeFileSync(camFile, Buffer.from(await (await fetch(new URL(cams[0].url, rec.record_path))).arrayBuffer()));
    const camInfo = await ffprobe(camFile);
    const held = close.spans.reduce((n, [a, b]) => n + b - a, 0);
    const camDur = Number(camInfo.format?.duration) * 1000;
    log(`camera file: ffprobe ${JSON.stringify(camInfo)}; the spans hold ${held} ms (to ${end2} ms)`);
    assert.ok(Math.abs(camDur - held) <= 100, `the camera file lasts ${camDur} ms, its spans hold ${held} ms`);
    assert.equal(await decodeErrors(camFile), '', 'the camera file decodes with errors');

    // The playback page places both stretches of the camera file: hidden
    // while the camera was off, and after it, the file's second stretch.
    await viewer.open(rec.record_path);
    await until(async () => (await viewer.page.locator('#app').getAttribute('data-state')) === 'ready', 'playback #app ready', 15_000);
    const camAt = async (ms) => {
      await seekTo(viewer, ms);
      await sleep(400);
      return viewer.page.evaluate(() => {
        const v = document.querySelector('video[data-label="camera"]');
        return { shown: !v.closest('li').hidden, ct: Math.round(v.currentTime * 1000) };
      });
    };
    const len1 = close.spans[0][1] - close.spans[0][0];
    const mid = Math.round((end1 + start2) / 2);
    // (The first stretch may be short: a loaded machine starts the camera
    // late; its middle is in it whatever its length.)
    const in1 = Math.round((close.spans[0][0] + end1) / 2);
    const inCut = await camAt(mid);
    const after2 = await camAt(start2 + 1_000);
    const before1 = await camAt(in1);
    log(`playback of the camera file: at ${in1} ms ${JSON.stringify(before1)}, in the cut at ${mid} ms ${JSON.stringify(inCut)}, at ${start2 + 1_000} ms ${JSON.stringify(after2)} (want file time ${len1 + 1_000} ms)`);
    assert.ok(before1.shown && Math.abs(before1.ct - (in1 - close.spans[0][0])) <= 150, `in the first stretch the camera plays at ${before1.ct} ms, want ${in1 - close.spans[0][0]}`);
    assert.ok(!inCut.shown, 'the camera tile shows while the camera was off');
    assert.ok(after2.shown && Math.abs(after2.ct - (len1 + 1_000)) <= 150, `after the cut the camera plays at ${after2.ct} ms, want ${len1 + 1_000}`);
    await viewer.screenshot('recording-tab-playback.png');
  });
});
