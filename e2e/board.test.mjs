// End-to-end tests of the whiteboard, presentations and shared files
// (docs/classroom-whiteboard.md): one `lectern serve`, headless Chromium
// browsers (one per participant), inside a loopback-only network namespace.
// Run with ./run.sh.
//
// The UI hooks used here are web/classroom/README.md's ("Hooks for browser
// tests"); the board is read through window.lectern.board() and checked in
// screenshots (the pixels where each object must be painted).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  serverForTests, Participant, join, click, closeAllBrowsers, log, sleep, artifact, wsTap, boardGeometry, toCanvas, drawPath, objectSamples,
  pixelsNear, hexRgb, minimalPdf,
} from './lib.mjs';

const server = serverForTests('board');

// pickThick clicks the third line width ("thick") and answers its value.
async function pickThick(p) {
  const btn = p.page.locator('[data-width]').nth(2);
  await btn.click();
  return Number(await btn.getAttribute('data-width'));
}

const board = (p) => p.page.evaluate(() => window.lectern.board());
const presentation = (p) => p.page.evaluate(() => window.lectern.presentation());

// The fields of a board object every browser must agree on.
const essence = (o) => ({ id: o.id, page: o.page, tool: o.tool, color: o.color, width: o.width, points: o.points, by: String(o.by) });
const sortById = (list) => [...list].sort((a, b) => (a.id < b.id ? -1 : 1));

// waitBoard waits until the page's board state satisfies pred (given
// window.lectern.board()) and answers that state.
async function waitBoard(p, pred, what, timeout = 10_000) {
  const deadline = Date.now() + timeout;
  let b;
  for (;;) {
    b = await board(p);
    if (pred(b)) return b;
    if (Date.now() > deadline) throw new Error(`${p.name}: board never ${what}; it is ${JSON.stringify(b)}`);
    await sleep(100);
  }
}

// assertPainted screenshots the page's #board and checks that every object
// given is painted in its colour where it must be (most of its sample
// points have a pixel of about that colour within 3 px), and that the points in
// `blank` (board-page units) are not painted in any of those colours.
async function assertPainted(p, objects, file, blank = []) {
  await sleep(300); // a frame or two for the last paint
  const g = await boardGeometry(p.page);
  const png = await p.page.locator('#board').screenshot({ path: artifact(file) });
  log(`screenshot e2e/artifacts/${file} (#board ${Math.round(g.box.width)}x${Math.round(g.box.height)}, scale ${g.s.toFixed(3)})`);
  const problems = [];
  for (const o of objects) {
    const pts = objectSamples(o).map(([x, y]) => toCanvas(g, x, y));
    assert.ok(pts.length > 0, `no sample points for ${JSON.stringify(o)}`);
    const got = await pixelsNear(p.page, png, pts, hexRgb(o.color), 3);
    const hits = got.filter((x) => x.d <= 60).length;
    log(`${p.name} ${file}: ${o.tool} ${o.color}: ${hits}/${pts.length} sample points painted`);
    if (hits < pts.length * 0.8) problems.push(`${o.tool} ${o.id} (${o.color}) painted at ${hits}/${pts.length} points; nearest colours ${JSON.stringify(got.slice(0, 6))}`);
  }
  if (blank.length) {
    const pts = blank.map(([x, y]) => toCanvas(g, x, y));
    for (const o of objects) {
      const got = await pixelsNear(p.page, png, pts, hexRgb(o.color), 0);
      const painted = got.filter((x) => x.d <= 60).length;
      if (painted) problems.push(`${painted} blank point(s) painted in ${o.color}: ${JSON.stringify(got)}`);
    }
  }
  assert.equal(problems.length, 0, `${p.name}: see e2e/artifacts/${file}: ${problems.join('; ')}`);
}

// The presentation: three 16:9 pages, each with its own colour band and
// "Page N of 3" in large type.
const PDF_PAGES = [
  { text: 'Page 1 of 3', rgb: [0.86, 0.15, 0.15] },
  { text: 'Page 2 of 3', rgb: [0.08, 0.6, 0.2] },
  { text: 'Page 3 of 3', rgb: [0.15, 0.3, 0.9] },
].map((pg) => ({ ...pg, band: [50, 40, 700, 120] }));
const pdfRgb = (n) => PDF_PAGES[n - 1].rgb.map((v) => Math.round(v * 255));
// The band (PDF points, origin bottom left, page 800 x 450) on the 1600 x
// 900 board page: y from 580 to 820; sampled along its middle.
const BAND_SAMPLES = [300, 500, 700, 900, 1100, 1300].map((x) => [x, 700]);

// assertPdfPage screenshots the page's #board (the presentation shows
// through it) and checks that PDF page n's colour band is on screen and
// page 1's (or 2's, for n = 1) is not.
async function assertPdfPage(p, n, file) {
  await sleep(300);
  const g = await boardGeometry(p.page);
  const png = await p.page.locator('#board').screenshot({ path: artifact(file) });
  log(`screenshot e2e/artifacts/${file}`);
  const pts = BAND_SAMPLES.map(([x, y]) => toCanvas(g, x, y));
  const other = n === 1 ? 2 : 1;
  const want = await pixelsNear(p.page, png, pts, pdfRgb(n), 0);
  const not = await pixelsNear(p.page, png, pts, pdfRgb(other), 0);
  log(`${p.name} ${file}: band colour distance to page ${n}'s ${JSON.stringify(want.map((x) => x.d))}, to page ${other}'s ${JSON.stringify(not.map((x) => x.d))}`);
  assert.ok(want.every((x) => x.d <= 40), `${p.name}: page ${n}'s band is not on screen (see e2e/artifacts/${file}): ${JSON.stringify(want)}`);
  assert.ok(not.every((x) => x.d > 40), `${p.name}: page ${other}'s band is on screen (see e2e/artifacts/${file}): ${JSON.stringify(not)}`);
}

describe('whiteboard, presentation and files (isCorporate=0)', () => {
  let classId;
  const teacher = new Participant('w-teacher', { userId: 'w-t', teacher: true });
  const s1 = new Participant('w-student1', { userId: 'w-s1' });
  const late = new Participant('w-late', { userId: 'w-s2' });
  const late2 = new Participant('w-late2', { userId: 'w-s3' });
  const all = [teacher, s1, late, late2];
  const drawn = {}; // tool -> the teacher's object as the server sent it

  before(async () => {
    classId = await server.schedule('Board', { isCorporate: 0 });
    teacher.url = await server.launch(classId, { userId: teacher.userId, userName: 'Wren Teacher', teacher: true });
    s1.url = await server.launch(classId, { userId: s1.userId, userName: 'Will One', encrypted: false });
    s1.init = wsTap;
    late.url = await server.launch(classId, { userId: late.userId, userName: 'Liv Late' });
    late2.url = await server.launch(classId, { userId: late2.userId, userName: 'Lou Later', encrypted: false });
    await join([teacher, s1]);
  }, { timeout: 90_000 });

  after(async () => {
    await Promise.all(all.map((p) => p.close()));
  });

  it('board: the teacher draws a stroke and a shape, and the student sees them', { timeout: 60_000 }, async () => {
    assert.equal(await teacher.page.locator('#board').getAttribute('data-page'), 'p1');
    // A pen stroke (blue, the default colour): a wave across the left half.
    // Thick lines stay a few pixels wide on a small board.
    await click(teacher, '#tool-pen');
    await click(teacher, '[data-color="#1d4ed8"]');
    const width = await pickThick(teacher);
    const wave = [];
    for (let x = 150; x <= 700; x += 25) wave.push([x, 300 + Math.round(90 * Math.sin((x - 150) / 70))]);
    await drawPath(teacher.page, wave);
    // A rectangle in red on the right.
    await click(teacher, '#tool-rect');
    await click(teacher, '[data-color="#dc2626"]');
    await drawPath(teacher.page, [[900, 200], [1150, 400], [1400, 650]]);

    const tb = await waitBoard(teacher, (b) => (b.pages.p1 || []).filter((o) => o.seq).length >= 2, 'has the stroke and the rectangle');
    for (const o of tb.pages.p1) drawn[o.tool] = o;
    log('teacher board p1:', JSON.stringify(tb.pages.p1.map((o) => ({ ...o, points: `${o.points.length / 2} points` }))));
    assert.deepEqual(tb.pages.p1.map((o) => o.tool).sort(), ['pen', 'rect']);
    assert.equal(drawn.pen.color, '#1d4ed8');
    assert.equal(drawn.rect.color, '#dc2626');
    assert.equal(drawn.rect.width, width);
    assert.equal(String(drawn.pen.by), teacher.userId);
    assert.ok(drawn.pen.points.length >= 20, `the stroke has ${drawn.pen.points.length / 2} points`);
    const [rx0, ry0, rx1, ry1] = drawn.rect.points;
    for (const [got, want] of [[rx0, 900], [ry0, 200], [rx1, 1400], [ry1, 650]]) {
      assert.ok(Math.abs(got - want) <= 3, `rectangle corners ${JSON.stringify(drawn.rect.points)}, want about [900,200,1400,650]`);
    }

    const sb = await waitBoard(s1, (b) => (b.pages.p1 || []).length >= 2, 'has the teacher\'s two objects');
    assert.equal(sb.page, 'p1');
    assert.deepEqual(sortById(sb.pages.p1).map(essence), sortById(tb.pages.p1).map(essence));

    await teacher.screenshot('board-teacher-drawing.png');
    const rectInside = [[1150, 425], [1000, 300], [1300, 550]];
    await assertPainted(teacher, [drawn.pen, drawn.rect], 'board-teacher-canvas.png', rectInside);
    await s1.screenshot('board-student-view.png');
    await assertPainted(s1, [drawn.pen, drawn.rect], 'board-student-canvas.png', rectInside);
  });

  it('board: a student without the draw permission cannot draw; the server refuses a board add', { timeout: 60_000 }, async () => {
    const pill = s1.page.locator('[data-can-draw]');
    assert.equal(await pill.getAttribute('data-can-draw'), 'false');
    for (const id of ['tool-pen', 'tool-rect', 'tool-eraser', 'tool-select', 'tool-text', 'board-undo']) {
      assert.equal(await s1.page.locator(`#${id}`).isDisabled(), true, `${s1.name}: #${id} is enabled without the draw permission`);
    }
    assert.equal(await s1.page.locator('#board-clear').count(), 0, 'a student has #board-clear');
    const before = await board(s1);
    // Dragging on the board draws nothing.
    await drawPath(s1.page, [[200, 700], [400, 750], [600, 700]]);
    await sleep(500);
    assert.deepEqual(await board(s1), before, 'dragging on a student\'s board changed it');

    // A modified client sends an add on the page's own socket anyway.
    const forged = { id: 'forged1', page: 'p1', tool: 'pen', color: '#000000', width: 8, points: [100, 100, 500, 500, 900, 100] };
    const ref = 4242;
    await s1.page.evaluate(({ forged, ref }) => {
      if (!window.__e2eSocket || window.__e2eSocket.readyState !== WebSocket.OPEN) throw new Error('no open classroom socket seen');
      window.__e2eSocket.send(JSON.stringify({ type: 'board', op: 'add', object: forged, ref }));
    }, { forged, ref });
    const deadline = Date.now() + 10_000;
    let refusal;
    while (!(refusal = s1.wsErrors.find((m) => m.ref === ref))) {
      if (Date.now() > deadline) throw new Error(`no error answered the forged board add (ref ${ref}); errors seen: ${JSON.stringify(s1.wsErrors)}`);
      await sleep(100);
    }
    log(`${s1.name}: the server answered the forged add with ${JSON.stringify(refusal)}`);
    assert.equal(refusal.code, 'forbidden');
    const err = s1.page.locator('[data-testid="error"][data-code="forbidden"]');
    await err.first().waitFor({ state: 'visible', timeout: 5_000 });
    await s1.screenshot('board-student-refused.png');
    await sleep(500);
    for (const p of [teacher, s1]) {
      const b = await board(p);
      assert.ok(!(b.pages.p1 || []).some((o) => o.id === forged.id), `${p.name} has the forged object`);
    }
  });

  it('board: once the teacher allows it, the student draws and the teacher sees it', { timeout: 60_000 }, async () => {
    await teacher.page.locator(`[data-testid="participant"][data-user-id="${s1.userId}"] [data-action="allow-draw"]`).click();
    await s1.page.waitForSelector('#tool-pen:not([disabled])', { timeout: 10_000 });
    assert.equal(await s1.page.locator('[data-can-draw]').getAttribute('data-can-draw'), 'true');
    await click(s1, '#tool-line');
    await click(s1, '[data-color="#15803d"]');
    await pickThick(s1);
    await drawPath(s1.page, [[200, 780], [500, 800], [800, 820]]);
    const tb = await waitBoard(teacher, (b) => (b.pages.p1 || []).some((o) => String(o.by) === s1.userId), `has ${s1.userId}'s line`);
    const line = tb.pages.p1.find((o) => String(o.by) === s1.userId);
    assert.equal(line.tool, 'line');
    assert.equal(line.color, '#15803d');
    drawn.line = line;
    await assertPainted(teacher, [drawn.pen, drawn.rect, line], 'board-teacher-sees-student-line.png');
  });

  it('board: a late joiner sees the page being shown, with everything on it', { timeout: 60_000 }, async () => {
    // The teacher opens a new page and draws an ellipse on it.
    await click(teacher, '#board-page-add');
    await teacher.page.waitForFunction(() => document.querySelector('#board')?.dataset.page !== 'p1', null, { timeout: 5_000 });
    const newPage = await teacher.page.locator('#board').getAttribute('data-page');
    await click(teacher, '#tool-ellipse');
    await click(teacher, '[data-color="#7c3aed"]');
    await drawPath(teacher.page, [[500, 250], [800, 450], [1100, 650]]);
    const tb = await waitBoard(teacher, (b) => b.page === newPage && (b.pages[newPage] || []).some((o) => o.seq), `shows ${newPage} with the ellipse`);
    const ellipse = tb.pages[newPage].find((o) => o.tool === 'ellipse');
    assert.ok(ellipse, `no ellipse on ${newPage}: ${JSON.stringify(tb.pages[newPage])}`);
    await waitBoard(s1, (b) => b.page === newPage && (b.pages[newPage] || []).length === 1, `follows to ${newPage}`);

    await join([late]);
    const lb = await waitBoard(late, (b) => b.page === newPage, `shows ${newPage}`);
    assert.equal(await late.page.locator('#board').getAttribute('data-page'), newPage);
    assert.equal((await late.page.locator('#board-page').innerText()).trim(), newPage);
    const final = await board(teacher);
    for (const pg of ['p1', newPage]) {
      assert.deepEqual(sortById(lb.pages[pg] || []).map(essence), sortById(final.pages[pg] || []).map(essence), `late joiner's ${pg}`);
    }
    await late.screenshot('board-late-joiner-view.png');
    // The ellipse is painted; the first page's objects are not (not shown).
    await assertPainted(late, [ellipse], 'board-late-joiner-canvas.png', [[800, 450], [1150, 200], [900, 420]]);
  });

  it('presentation: the teacher uploads a 3-page PDF and turns to page 2; the students follow', { timeout: 90_000 }, async () => {
    const pdf = minimalPdf(PDF_PAGES);
    fs.writeFileSync(artifact('slides.pdf'), pdf);
    await teacher.page.locator('#pres-upload').setInputFiles({ name: 'slides.pdf', mimeType: 'application/pdf', buffer: pdf });
    const opened = await teacher.page.waitForFunction(() => {
      const p = window.lectern.presentation();
      return p && p.pages === 3 ? p : false;
    }, null, { timeout: 20_000, polling: 100 }).then((h) => h.jsonValue());
    log('teacher opened presentation', JSON.stringify(opened));
    assert.equal(opened.page, 1);
    for (const p of [teacher, s1, late]) {
      await p.page.waitForSelector('#pres-canvas[data-page="1"]', { state: 'attached', timeout: 20_000 });
    }
    assert.equal((await s1.page.locator('#pres-page').innerText()).replace(/\s+/g, ' ').trim(), '1 / 3');

    await click(teacher, '#pres-next');
    for (const p of [s1, late, teacher]) {
      await p.page.waitForFunction(() => window.lectern.presentation()?.page === 2, null, { timeout: 10_000, polling: 100 });
      await p.page.waitForSelector('#pres-canvas[data-page="2"]', { state: 'attached', timeout: 20_000 });
      const pres = await presentation(p);
      assert.deepEqual({ file: String(pres.file), page: pres.page, pages: pres.pages }, { file: String(opened.file), page: 2, pages: 3 }, p.name);
      assert.equal((await p.page.locator('#pres-page').innerText()).replace(/\s+/g, ' ').trim(), '2 / 3', `${p.name}: #pres-page`);
      assert.equal((await board(p)).page, `pdf:${opened.file}:2`, `${p.name}: board page while presenting`);
    }
    await s1.screenshot('presentation-student-page2.png');
    await assertPdfPage(s1, 2, 'presentation-student-page2-canvas.png');

    // The teacher annotates page 2; a student who joins now gets page 2 with
    // the annotation.
    const annPage = `pdf:${opened.file}:2`;
    await click(teacher, '#tool-arrow');
    await click(teacher, '[data-color="#7c3aed"]');
    await drawPath(teacher.page, [[900, 420], [1150, 420], [1400, 420]]);
    const tb = await waitBoard(teacher, (b) => (b.pages[annPage] || []).some((o) => o.tool === 'arrow' && o.seq), `has the arrow on ${annPage}`);
    const arrow = tb.pages[annPage].find((o) => o.tool === 'arrow');
    await waitBoard(s1, (b) => (b.pages[annPage] || []).some((o) => o.id === arrow.id), `has the arrow on ${annPage}`);
    await join([late2]);
    await late2.page.waitForSelector('#pres-canvas[data-page="2"]', { state: 'attached', timeout: 20_000 });
    const lp = await presentation(late2);
    assert.deepEqual({ file: String(lp.file), page: lp.page, pages: lp.pages }, { file: String(opened.file), page: 2, pages: 3 }, late2.name);
    assert.equal((await late2.page.locator('#pres-page').innerText()).replace(/\s+/g, ' ').trim(), '2 / 3');
    const lb = await board(late2);
    assert.equal(lb.page, annPage);
    assert.deepEqual(sortById(lb.pages[annPage] || []).map(essence), sortById(tb.pages[annPage]).map(essence));
    await late2.screenshot('presentation-late-joiner-page2.png');
    await assertPdfPage(late2, 2, 'presentation-late-joiner-page2-canvas.png');
    await assertPainted(late2, [arrow], 'presentation-late-joiner-page2-canvas.png');
  });

  it('files: a file the teacher shares downloads in the student\'s browser with the same bytes', { timeout: 60_000 }, async () => {
    const bytes = Buffer.concat([Buffer.from('Lectern e2e shared file\n'), crypto.randomBytes(300_000)]);
    const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
    await teacher.page.locator('#file-upload').setInputFiles({ name: 'notes.bin', mimeType: 'application/octet-stream', buffer: bytes });
    const fileRow = s1.page.locator('[data-testid="file"][data-status="ready"]').filter({ hasText: 'notes.bin' });
    await fileRow.waitFor({ state: 'visible', timeout: 20_000 });
    log(`${s1.name} sees file ${await fileRow.getAttribute('data-file-id')}`);
    const [download] = await Promise.all([
      s1.page.waitForEvent('download', { timeout: 20_000 }),
      fileRow.locator('a.download').click(),
    ]);
    const file = await download.path();
    const got = fs.readFileSync(file);
    log(`${s1.name} downloaded ${download.suggestedFilename()} (${got.length} bytes) from ${download.url().replace(/sig=[^&]+/, 'sig=...')}`);
    assert.equal(download.suggestedFilename(), 'notes.bin');
    assert.equal(got.length, bytes.length);
    assert.equal(sha(got), sha(bytes));
  });
});
