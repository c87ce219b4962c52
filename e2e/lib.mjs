// Helpers for the classroom end-to-end tests: the server process, the
// classroom API, one headless Chromium per participant, and WebRTC stats.
// Everything here expects to run inside a loopback-only network namespace
// (see run.sh): every address used is 127.0.0.1.

import { spawn, execFile } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import dgram from 'node:dgram';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

export const E2E_DIR = path.dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.LECTERN_BIN || path.join(E2E_DIR, '.bin', 'lectern');
export const ARTIFACTS = process.env.E2E_ARTIFACTS || path.join(E2E_DIR, 'artifacts');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

const t0 = Date.now();
export function log(...args) {
  const s = ((Date.now() - t0) / 1000).toFixed(2).padStart(7);
  console.log(`[${s}s]`, ...args);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Chromium flags. The media ones give a fake camera, microphone and screen
// (getDisplayMedia answers a 1280x720 fake "monitor" source without a
// prompt or a user gesture: --use-fake-device-for-media-stream together with
// --use-fake-ui-for-media-stream is what makes it work headless; the
// --auto-select-* flags were tried and do not, see README.md).
export const CHROME_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--allow-loopback-in-peer-connection',
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
];

export function artifact(name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}

// A free TCP (or UDP) port on 127.0.0.1. There is a small window between
// closing the probe and the server binding it; nothing else runs in the
// namespace, so nothing takes it.
export async function freePort(udp = false) {
  if (udp) {
    const s = dgram.createSocket('udp4');
    s.bind(0, '127.0.0.1');
    await once(s, 'listening');
    const { port } = s.address();
    s.close();
    return port;
  }
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

// freePortBoth answers a port free for TCP and for UDP (TURN listens on both).
export async function freePortBoth() {
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    const s = dgram.createSocket('udp4');
    const ok = await new Promise((resolve) => {
      s.once('error', () => resolve(false));
      s.bind(port, '127.0.0.1', () => resolve(true));
    });
    s.close();
    if (ok) return port;
  }
  throw new Error('no port free for both TCP and UDP');
}

const execFileP = promisify(execFile);

// Server is one `lectern serve` in a fresh data dir, with one domain. Its
// output goes to e2e/artifacts/server-<name>.log (one server per test file).
export class Server {
  // opts.args are extra `lectern serve` flags (such as --test-clock).
  constructor(name, opts = {}) {
    this.name = name;
    this.extraArgs = opts.args || [];
    this.proc = null;
    this.base = '';
    this.dataDir = '';
    this.domain = null;
    this.flags = {};
  }

  async start() {
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lectern-e2e-'));
    // The domain first: `domain create` migrates the fresh store itself.
    const { stdout } = await execFileP(BIN, ['domain', 'create', '--name', 'E2E', '--json', '--data-dir', this.dataDir], { timeout: 30_000 });
    this.domain = JSON.parse(stdout);
    if (!this.domain.classroom_api_key) throw new Error(`domain create printed no classroom_api_key: ${stdout}`);

    const help = await execFileP(BIN, ['serve', '--help'], { timeout: 10_000 }).catch((e) => ({ stdout: e.stdout || '', stderr: e.stderr || '' }));
    this.helpText = `${help.stdout}${help.stderr}`;
    this.logFile = artifact(`server-${this.name}.log`);
    // A port picked free can be taken again before the server binds it
    // (by a browser's socket, or by another pick). Only that failure is
    // retried, with new ports; any other early exit fails at once, and the
    // log's end is printed either way.
    for (let attempt = 1; ; attempt++) {
      const err = await this.spawnOnce();
      if (!err) break;
      const tail = fs.readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-5).join('\n');
      if (attempt < 5 && /address already in use/.test(tail)) {
        log(`server: a port was taken before the server bound it; starting again with new ports (${tail})`);
        continue;
      }
      throw new Error(`${err}; see ${this.logFile}; it ends:\n${tail}`);
    }
    log(`server: ready at ${this.base}`, JSON.stringify(this.flags));
  }

  // spawnOnce starts the server on newly picked ports, all different, and
  // waits for /readyz. It answers null when ready, or why it is not.
  async spawnOnce() {
    const taken = new Set();
    const distinct = async (pick) => {
      for (;;) {
        const p = await pick();
        if (!taken.has(p)) {
          taken.add(p);
          return p;
        }
      }
    };
    const port = await distinct(() => freePort());
    const args = ['serve', '--addr', `127.0.0.1:${port}`, '--data-dir', this.dataDir];
    this.flags = {};
    for (const [flag, pick] of [['rtc-udp-port', () => freePort(true)], ['turn-port', freePortBoth]]) {
      if (this.helpText.includes(`-${flag}`)) {
        this.flags[flag] = await distinct(pick);
        args.push(`--${flag}`, String(this.flags[flag]));
      } else {
        log(`server: lectern serve has no --${flag} flag (yet); started without it`);
      }
    }
    args.push(...this.extraArgs);
    this.base = `http://127.0.0.1:${port}`;
    const out = fs.openSync(this.logFile, 'w');
    log('server: start', BIN, args.join(' '));
    this.proc = spawn(BIN, args, { stdio: ['ignore', out, out] });
    fs.closeSync(out);
    this.exited = once(this.proc, 'exit');
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (this.proc.exitCode !== null) return `server exited with ${this.proc.exitCode}`;
      try {
        const r = await fetch(`${this.base}/readyz`);
        // Ready only if this server answered: another process on the
        // port must not pass for it.
        if (r.ok && this.proc.exitCode === null) return null;
      } catch {}
      if (Date.now() > deadline) {
        this.proc.kill('SIGKILL');
        await this.exited;
        return 'server not ready within 20 s';
      }
      await sleep(100);
    }
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode) return;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(timer);
    log('server: stopped');
  }

  // api calls a classroom API method with the domain's key.
  async api(method, params) {
    const body = new URLSearchParams({ apikey: this.domain.classroom_api_key, ...params });
    const r = await fetch(`${this.base}/v2/${method}`, { method: 'POST', body, signal: AbortSignal.timeout(10_000) });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method}: HTTP ${r.status}: ${text}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`${method}: not JSON: ${text}`);
    }
  }

  // schedule makes a class that is live now (it began 5 minutes ago and
  // lasts an hour), in Europe/London (timezone id 28), with the settings
  // given (isCorporate, isScreenshare, isPrivateChat, isBoard,
  // seat_attendees, ...). It answers the class id.
  async schedule(title, settings = {}) {
    const start = londonWallClock(new Date(Date.now() - 5 * 60_000));
    const end = londonWallClock(new Date(Date.now() + 55 * 60_000));
    const params = { title, timezone: '28', date: start.date, start_time: start.time12, end_time: end.time12 };
    for (const [k, v] of Object.entries(settings)) params[k] = String(v);
    const res = await this.api('schedule', params);
    const id = String((Array.isArray(res) ? res[0] : res)?.class_id ?? ''); // either JSON style
    if (!id) throw new Error(`schedule ${JSON.stringify(params)}: ${JSON.stringify(res)}`);
    log(`class ${id} "${title}" ${start.date} ${start.time12}-${end.time12} London ${JSON.stringify(settings)}`);
    return id;
  }

  // launch answers the launch URL of a user: the encrypted one unless
  // encrypted is false.
  async launch(classId, { userId, userName, teacher = false, encrypted = true }) {
    const res = await this.api('getclasslaunch', {
      class_id: classId, userId, userName, isTeacher: teacher ? '1' : '0', lessonName: 'E2E lesson', courseName: 'E2E course',
    });
    const item = (Array.isArray(res) ? res[0] : res) || {}; // either JSON style
    const url = encrypted ? item.encryptedlaunchurl : item.launchurl;
    if (!url) throw new Error(`getclasslaunch ${classId} ${userId}: ${JSON.stringify(res)}`);
    return url;
  }
}

// londonWallClock answers the date (YYYY-MM-DD) and the 12-hour time
// (`09:05 AM`) of instant d in Europe/London.
export function londonWallClock(d) {
  const f = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/London', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  });
  const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
  const h = Number(p.hour);
  const h12 = h % 12 === 0 ? 12 : h % 12;
  return { date: `${p.year}-${p.month}-${p.day}`, time12: `${String(h12).padStart(2, '0')}:${p.minute} ${h < 12 ? 'AM' : 'PM'}` };
}

const browsers = new Set();

// Participant is one user in one browser instance of its own.
export class Participant {
  constructor(name, { userId, teacher = false } = {}) {
    this.name = name;
    this.userId = userId;
    this.teacher = teacher;
    this.browser = null;
    this.page = null;
    this.console = [];
  }

  // open launches this participant's browser and loads url. init, when
  // given, is a function run in the page before any of its scripts.
  async open(url, { init } = {}) {
    this.browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROME_ARGS, timeout: 30_000 });
    browsers.add(this.browser);
    const ctx = await this.browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    this.page = await ctx.newPage();
    if (init) await this.page.addInitScript(init);
    this.page.setDefaultTimeout(20_000);
    const logFile = artifact(`${this.name}.console.log`);
    fs.writeFileSync(logFile, '');
    const write = (line) => fs.appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
    this.page.on('console', (m) => write(`${m.type()}: ${m.text()}`));
    this.page.on('pageerror', (e) => write(`pageerror: ${e.stack || e}`));
    // The server's error messages on the page's WebSocket, as received
    // (what a test checks when it sends something the server must refuse).
    this.wsErrors = [];
    this.page.on('websocket', (ws) => ws.on('framereceived', ({ payload }) => {
      if (typeof payload !== 'string' || !payload.includes('"error"')) return;
      try {
        const m = JSON.parse(payload);
        if (m.type === 'error') {
          this.wsErrors.push(m);
          write(`ws error: ${payload}`);
        }
      } catch {}
    }));
    // Moderation asks for confirmation (remove); the test accepts.
    this.page.on('dialog', (d) => {
      write(`dialog ${d.type()}: ${d.message()} (accepted)`);
      d.accept().catch(() => {});
    });
    const resp = await this.page.goto(url, { waitUntil: 'load', timeout: 20_000 });
    this.status = resp?.status();
    return resp;
  }

  // waitState waits until #app says state, and fails at once when it
  // settles on another final state (failed, ended), or when the page has no
  // #app at all after a few seconds (no classroom client served).
  async waitState(state, timeout = 20_000) {
    const final = ['joined', 'failed', 'ended'];
    const got = await this.page.waitForFunction(({ state, final, noAppBy }) => {
      const app = document.querySelector('#app');
      if (!app) return Date.now() > noAppBy ? { state: null } : false;
      const s = app.dataset.state;
      return s === state || final.includes(s) ? { state: s, failCode: app.dataset.failCode } : false;
    }, { state, final, noAppBy: Date.now() + 5_000 }, { timeout, polling: 100 }).then((h) => h.jsonValue());
    if (got.state === null) throw new Error(`${this.name}: the page has no #app (is the classroom client served?)`);
    if (got.state !== state) throw new Error(`${this.name}: #app is ${got.state}${got.failCode ? ` (${got.failCode})` : ''}, want ${state}`);
  }

  async state() {
    return this.page.evaluate(() => {
      const app = document.querySelector('#app');
      return app ? { state: app.dataset.state, failCode: app.dataset.failCode } : null;
    });
  }

  async screenshot(name, opts = {}) {
    const file = artifact(name);
    await this.page.screenshot({ path: file, ...opts });
    log(`screenshot ${path.relative(process.cwd(), file)}`);
    return file;
  }

  async close() {
    if (this.browser) {
      const b = this.browser;
      this.browser = null;
      browsers.delete(b);
      await b.close().catch(() => {});
    }
  }
}

// join opens the participants' launch URLs (p.url, with p.init run before
// the page's scripts), each in its own browser, and waits until every page
// says joined.
export async function join(participants) {
  await Promise.all(participants.map(async (p) => {
    const resp = await p.open(p.url, { init: p.init });
    if (resp?.status() !== 200) throw new Error(`${p.name}: launch page answered ${resp?.status()}`);
    try {
      await p.waitState('joined');
    } catch (e) {
      await p.screenshot(`${p.name}-not-joined.png`).catch(() => {});
      throw new Error(`${p.name} did not join: ${e.message}`);
    }
  }));
  log('joined:', participants.map((p) => p.name).join(', '));
}

// click clicks a visible button, failing if it is disabled.
export async function click(p, selector) {
  const btn = p.page.locator(selector);
  await btn.waitFor({ state: 'visible' });
  if (await btn.isDisabled()) throw new Error(`${p.name}: ${selector} is disabled`);
  await btn.click();
}

export async function closeAllBrowsers() {
  await Promise.all([...browsers].map((b) => b.close().catch(() => {})));
  browsers.clear();
}

// recvStats answers the inbound-rtp counters of every receiving peer
// connection of the page, one entry per track:
// {stream, label, userId, kind, bytes, frames, samples}.
export async function recvStats(page) {
  return page.evaluate(async () => {
    const out = [];
    const pcs = window.lectern?.pcs?.() || [];
    for (const { stream, label, direction, userId, pc } of pcs) {
      if (direction !== 'recv') continue;
      const report = await pc.getStats();
      report.forEach((r) => {
        if (r.type === 'inbound-rtp') {
          out.push({
            stream, label, userId: String(userId), kind: r.kind, bytes: r.bytesReceived || 0,
            frames: r.framesDecoded || 0, samples: r.totalSamplesReceived || 0,
          });
        }
      });
    }
    return out;
  });
}

// pcSummary answers the state of every peer connection of the page (for
// diagnostics).
export async function pcSummary(page) {
  return page.evaluate(async () => {
    const pcs = window.lectern?.pcs?.() || [];
    return pcs.map(({ stream, label, direction, userId, pc }) => ({
      stream, label, direction, userId, state: pc.connectionState, ice: pc.iceConnectionState,
    }));
  });
}

// waitForRecv waits until the page receives every expected
// {userId, label, kind} with bytes flowing.
export async function waitForRecv(page, expected, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  let last = [];
  for (;;) {
    last = await recvStats(page);
    const missing = expected.filter((e) => !last.some((s) => s.userId === e.userId && s.label === e.label && s.kind === e.kind && s.bytes > 0));
    if (missing.length === 0) return last;
    if (Date.now() > deadline) {
      const summary = await pcSummary(page).catch(() => []);
      throw new Error(`not receiving ${JSON.stringify(missing)} after ${timeout / 1000} s; inbound: ${JSON.stringify(last)}; pcs: ${JSON.stringify(summary)}`);
    }
    await sleep(500);
  }
}

// assertFlowing samples the inbound counters twice, gap ms apart, and
// fails unless every expected {userId, label, kind} grew: bytes and decoded
// samples for audio, bytes and decoded frames for video. It answers the
// growth per stream.
export async function assertFlowing(page, expected, gap = 3_000) {
  await waitForRecv(page, expected);
  const a = await recvStats(page);
  await sleep(gap);
  const b = await recvStats(page);
  const grown = [];
  const problems = [];
  for (const e of expected) {
    const key = (s) => s.userId === e.userId && s.label === e.label && s.kind === e.kind;
    const sum = (list, f) => list.filter(key).reduce((n, s) => n + s[f], 0);
    const bytes = sum(b, 'bytes') - sum(a, 'bytes');
    const frames = sum(b, 'frames') - sum(a, 'frames');
    const samples = sum(b, 'samples') - sum(a, 'samples');
    grown.push({ ...e, bytes, frames, samples });
    if (bytes <= 0) problems.push(`${e.userId}/${e.label}/${e.kind}: bytesReceived did not grow (${bytes})`);
    if (e.kind === 'video' && frames <= 0) problems.push(`${e.userId}/${e.label}/${e.kind}: framesDecoded did not grow (${frames})`);
    if (e.kind === 'audio' && samples <= 0) problems.push(`${e.userId}/${e.label}/${e.kind}: totalSamplesReceived did not grow (${samples})`);
  }
  if (problems.length) throw new Error(problems.join('; '));
  return grown;
}

// videosPlaying waits until every remote <video> matching selector has a
// picture (videoWidth > 0) and has played a little, so screenshots show it.
export async function waitVideosPlaying(page, selector = 'video[data-stream-id]', count = 1, timeout = 20_000) {
  await page.waitForFunction(
    ({ selector, count }) => {
      const vs = [...document.querySelectorAll(selector)];
      return vs.length >= count && vs.every((v) => v.videoWidth > 0 && v.currentTime > 0.5);
    },
    { selector, count },
    { timeout, polling: 250 },
  );
}

// attendanceFor parses getclassreport's duration `HH:MM:SS` into seconds.
export function durationSeconds(s) {
  const m = /^(\d+):(\d{2}):(\d{2})$/.exec(String(s));
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : NaN;
}

// selectedPairs answers, for every peer connection of the page, the local
// and remote address of the ICE candidate pair in use.
export async function selectedPairs(page) {
  return page.evaluate(async () => {
    const out = [];
    for (const { stream, label, direction, pc } of window.lectern?.pcs?.() || []) {
      const st = await pc.getStats();
      let pair = null;
      st.forEach((r) => {
        if (r.type === 'transport' && r.selectedCandidatePairId) pair = st.get(r.selectedCandidatePairId);
      });
      if (!pair) st.forEach((r) => { if (r.type === 'candidate-pair' && r.nominated && r.state === 'succeeded') pair = r; });
      const l = pair && st.get(pair.localCandidateId);
      const r = pair && st.get(pair.remoteCandidateId);
      out.push({ stream, label, direction,
        local: l ? `${l.candidateType} ${l.protocol} ${l.address}:${l.port}` : null,
        remote: r ? `${r.candidateType} ${r.protocol} ${r.address}:${r.port}` : null });
    }
    return out;
  });
}

// chatRewriter, run in a page before its scripts (Participant.open init),
// lets a test change the recipient of an outgoing chat message on the
// WebSocket: a message whose text contains window.__e2eRewriteChat.marker
// is sent with to = window.__e2eRewriteChat.to. It stands for a modified
// client, to check what the server enforces when the UI offers no way.
export function chatRewriter() {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    const r = window.__e2eRewriteChat;
    if (r && typeof data === 'string' && data.includes(r.marker)) {
      try {
        const m = JSON.parse(data);
        if (m.type === 'chat' && String(m.text).includes(r.marker)) {
          m.to = r.to;
          data = JSON.stringify(m);
        }
      } catch {}
    }
    return send.call(this, data);
  };
}

// coveredVideos answers, for every remote <video> of the page, the part of
// its on-screen area (sampled on a grid, inside the viewport) where another
// element is drawn over it: anything that is neither in the video's own
// tile (its parent element, which holds the name label) nor one of the
// tile's ancestors. Only videos with some covered part are listed.
export async function coveredVideos(page) {
  return page.evaluate(() => {
    const out = [];
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    for (const v of document.querySelectorAll('video[data-stream-id]')) {
      const tile = v.parentElement || v;
      const r = v.getBoundingClientRect();
      let seen = 0;
      let covered = 0;
      const by = new Set();
      for (let i = 0; i < 7; i++) {
        for (let j = 0; j < 7; j++) {
          // Inset by a tenth, clear of rounded corners.
          const x = r.left + r.width * (0.1 + (0.8 * i) / 6);
          const y = r.top + r.height * (0.1 + (0.8 * j) / 6);
          if (x < 0 || y < 0 || x >= vw || y >= vh) continue;
          seen++;
          const hit = document.elementFromPoint(x, y);
          // An ancestor of the tile is not drawn over it (only around it).
          if (hit && !tile.contains(hit) && !hit.contains(tile)) {
            covered++;
            by.add(hit.id ? `#${hit.id}` : `${hit.tagName.toLowerCase()}${hit.className ? `.${String(hit.className).trim().split(/\s+/).join('.')}` : ''}`);
          }
        }
      }
      if (covered) out.push({ label: v.dataset.label, userId: v.dataset.userId, covered: `${covered}/${seen} points`, by: [...by] });
    }
    return out;
  });
}

// ---- whiteboard, presentations, files ----

// wsTap, run in a page before its scripts (Participant.open init), keeps
// the page's own classroom WebSocket in window.__e2eSocket (the last one it
// sent on), so a test can send on it what a modified client would.
export function wsTap() {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    window.__e2eSocket = this;
    return send.call(this, data);
  };
}

// The board page is a 1600 x 900 surface that the client fits into the
// #board canvas and centres (docs/classroom-whiteboard.md, board/view.ts).
export const BOARD_W = 1600;
export const BOARD_H = 900;

// boardGeometry answers where the board page sits in #board: the canvas's
// box on the page (CSS px) and the page-to-canvas scale and offsets.
export async function boardGeometry(page) {
  const box = await page.locator('#board').boundingBox();
  if (!box || box.width < 10 || box.height < 10) throw new Error(`#board has no usable size: ${JSON.stringify(box)}`);
  const s = Math.min(box.width / BOARD_W, box.height / BOARD_H);
  return { box, s, ox: (box.width - BOARD_W * s) / 2, oy: (box.height - BOARD_H * s) / 2 };
}

// toCanvas maps a board-page point to CSS px inside #board; toClient to
// the viewport (for page.mouse).
export const toCanvas = (g, x, y) => [g.ox + x * g.s, g.oy + y * g.s];
export const toClient = (g, x, y) => [g.box.x + g.ox + x * g.s, g.box.y + g.oy + y * g.s];

// drawPath drags the mouse on #board through the given board-page points
// (pointer events, as a person draws).
export async function drawPath(page, points) {
  const g = await boardGeometry(page);
  const [x0, y0] = toClient(g, ...points[0]);
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  for (const [x, y] of points.slice(1)) {
    const [cx, cy] = toClient(g, x, y);
    await page.mouse.move(cx, cy, { steps: 4 });
  }
  await page.mouse.up();
}

// objectSamples answers points (board-page units) that the painted object
// covers: its stroke points, or points along a shape's outline.
export function objectSamples(o) {
  const p = o.points;
  const out = [];
  switch (o.tool) {
    case 'pen':
    case 'highlighter':
      for (let i = 0; i + 1 < p.length; i += 2) out.push([p[i], p[i + 1]]);
      break;
    case 'line':
    case 'arrow':
      for (let k = 0.1; k < 0.95; k += 0.1) out.push([p[0] + (p[2] - p[0]) * k, p[1] + (p[3] - p[1]) * k]);
      break;
    case 'rect': {
      const [x0, y0, x1, y1] = p;
      for (let k = 0.1; k < 0.95; k += 0.1) {
        const x = x0 + (x1 - x0) * k;
        const y = y0 + (y1 - y0) * k;
        out.push([x, y0], [x, y1], [x0, y], [x1, y]);
      }
      break;
    }
    case 'ellipse': {
      const cx = (p[0] + p[2]) / 2;
      const cy = (p[1] + p[3]) / 2;
      const rx = Math.abs(p[2] - p[0]) / 2;
      const ry = Math.abs(p[3] - p[1]) / 2;
      for (let a = 0; a < 2 * Math.PI; a += Math.PI / 12) out.push([cx + rx * Math.cos(a), cy + ry * Math.sin(a)]);
      break;
    }
    default:
      break;
  }
  return out;
}

// pixelsNear decodes a PNG (in the page's own browser) and answers, for
// every point [x, y] (image px), the colour closest to want ([r, g, b])
// within radius px and its distance.
export async function pixelsNear(page, png, points, want, radius = 2) {
  return page.evaluate(async ({ b64, points, want, radius }) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const c = new OffscreenCanvas(bmp.width, bmp.height);
    const ctx = c.getContext('2d');
    ctx.drawImage(bmp, 0, 0);
    const img = ctx.getImageData(0, 0, bmp.width, bmp.height).data;
    return points.map(([x, y]) => {
      let best = { d: Infinity, rgb: null };
      for (let dy = -radius; dy <= radius; dy++) {
        for (let dx = -radius; dx <= radius; dx++) {
          const px = Math.round(x) + dx;
          const py = Math.round(y) + dy;
          if (px < 0 || py < 0 || px >= bmp.width || py >= bmp.height) continue;
          const i = (py * bmp.width + px) * 4;
          const rgb = [img[i], img[i + 1], img[i + 2]];
          const d = Math.hypot(rgb[0] - want[0], rgb[1] - want[1], rgb[2] - want[2]);
          if (d < best.d) best = { d: Math.round(d), rgb };
        }
      }
      return best;
    });
  }, { b64: png.toString('base64'), points, want, radius });
}

export const hexRgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

// minimalPdf makes a valid PDF of pages 800 x 450 pt (16:9, so a page
// fills the board): each with a coloured band and a large text. pages is
// a list of {text, rgb: [r, g, b] in 0-1, band: [x, y, w, h] in pt}.
export function minimalPdf(pages) {
  const objs = [];
  const add = (body) => objs.push(body); // object n is objs[n - 1]
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(null); // the page tree, once the kids are known
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const kids = [];
  for (const pg of pages) {
    const [x, y, w, h] = pg.band;
    const content = `${pg.rgb.join(' ')} rg ${x} ${y} ${w} ${h} re f\nBT /F1 64 Tf 0 0 0 rg 60 300 Td (${pg.text}) Tj ET\n`;
    add(`<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}endstream`);
    const contentRef = objs.length;
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 800 450] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentRef} 0 R >>`);
    kids.push(`${objs.length} 0 R`);
  }
  objs[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages.length} >>`;
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets = [];
  objs.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

// ---- Firefox ----

export const FIREFOX = process.env.FIREFOX || '/usr/bin/firefox-esr';

// Firefox preferences for the tests. All four are needed in the
// loopback-only namespace: the fake camera and microphone, host candidates
// on loopback, and camera and microphone allowed without a prompt (without
// the two permissions Firefox gathers no ICE candidate at all there: it
// logs "failed to find default addresses").
export const FIREFOX_PREFS = {
  'media.navigator.streams.fake': true,
  'media.peerconnection.ice.loopback': true,
  'permissions.default.camera': 1,
  'permissions.default.microphone': 1,
};

// FirefoxParticipant is one user in Debian's firefox-esr of its own,
// driven by puppeteer-core over WebDriver BiDi (playwright-core 1.65 cannot
// drive this Firefox). page is a puppeteer Page: page.evaluate(fn) is what
// recvStats, pcSummary and assertFlowing use, as with Chromium.
export class FirefoxParticipant {
  constructor(name, { userId, teacher = false } = {}) {
    this.name = name;
    this.userId = userId;
    this.teacher = teacher;
    this.browser = null;
    this.page = null;
  }

  async open(url) {
    const { default: puppeteer } = await import('puppeteer-core');
    const t = Date.now();
    this.browser = await puppeteer.launch({
      browser: 'firefox', executablePath: FIREFOX, headless: true, extraPrefsFirefox: FIREFOX_PREFS,
      defaultViewport: { width: 1280, height: 800 }, timeout: 30_000,
    });
    browsers.add(this.browser);
    log(`${this.name}: ${await this.browser.version()} started in ${Date.now() - t} ms`);
    this.page = await this.browser.newPage();
    this.page.setDefaultTimeout(20_000);
    const logFile = artifact(`${this.name}.console.log`);
    fs.writeFileSync(logFile, '');
    const write = (line) => fs.appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
    this.page.on('console', (m) => write(`${m.type()}: ${m.text()}`));
    this.page.on('pageerror', (e) => write(`pageerror: ${e.stack || e}`));
    this.page.on('dialog', (d) => {
      write(`dialog ${d.type()}: ${d.message()} (accepted)`);
      d.accept().catch(() => {});
    });
    const resp = await this.page.goto(url, { waitUntil: 'load', timeout: 20_000 });
    this.status = resp?.status();
    return resp;
  }

  // until polls fn(arg) in the page until it answers something truthy.
  async until(fn, arg, what, timeout = 20_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const v = await this.page.evaluate(fn, arg);
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`${this.name}: ${what} not within ${timeout / 1000} s`);
      await sleep(100);
    }
  }

  async waitState(state, timeout = 20_000) {
    const got = await this.until((state) => {
      const app = document.querySelector('#app');
      const s = app?.dataset.state;
      return s === state || s === 'failed' || s === 'ended' ? { state: s, failCode: app.dataset.failCode } : false;
    }, state, `#app[data-state=${state}]`, timeout);
    if (got.state !== state) throw new Error(`${this.name}: #app is ${got.state}${got.failCode ? ` (${got.failCode})` : ''}, want ${state}`);
  }

  async click(selector) {
    await this.page.waitForSelector(selector, { visible: true });
    const disabled = await this.page.$eval(selector, (el) => el.disabled);
    if (disabled) throw new Error(`${this.name}: ${selector} is disabled`);
    await this.page.click(selector);
  }

  async screenshot(name) {
    const file = artifact(name);
    await this.page.screenshot({ path: file });
    log(`screenshot ${path.relative(process.cwd(), file)}`);
    return file;
  }

  async close() {
    if (this.browser) {
      const b = this.browser;
      this.browser = null;
      browsers.delete(b);
      await b.close().catch(() => {});
    }
  }
}

// serverForTests starts a Server named name before a test file's tests and
// stops it (with every browser) after them; if the runner dies some other
// way, the server is not left behind.
export function serverForTests(name, opts = {}) {
  const server = new Server(name, opts);
  before(async () => {
    await server.start();
  }, { timeout: 60_000 });
  after(async () => {
    await closeAllBrowsers();
    await server.stop();
  }, { timeout: 30_000 });
  process.on('exit', () => {
    if (server.proc && server.proc.exitCode === null) server.proc.kill('SIGKILL');
  });
  return server;
}

// lmsApi answers a caller of the server's LMS API (/api/v1) with the
// domain's key: (method, path, body) -> JSON, failing on any status >= 300.
// A FormData body goes as multipart (a file upload), anything else as JSON.
export function lmsApi(server) {
  return async (method, path, body) => {
    const headers = { Authorization: server.domain.api_key, 'x-domain-id': String(server.domain.domain_id) };
    if (!(body instanceof FormData)) headers['Content-Type'] = 'application/json';
    const r = await fetch(`${server.base}/api/v1${path}`, {
      method,
      headers,
      body: body === undefined || body instanceof FormData ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const json = await r.json();
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
}

// axeCheck runs axe-core in the page (evaluated through the DevTools
// protocol, so the page's CSP does not apply) and fails on any serious or
// critical finding; the findings go to the artifact axe-<name>.json.
let axeSource;
export async function axeCheck(page, name) {
  axeSource ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const { violations, passes } = await page.evaluate(async () => {
    const r = await window.axe.run(document);
    return { violations: r.violations, passes: r.passes.length };
  });
  assert.ok(passes > 10, `axe ran its rules on ${name} (${passes} passed)`);
  fs.writeFileSync(artifact(`axe-${name}.json`), JSON.stringify(violations, null, 2));
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`), [], `axe on ${name}`);
  log(`axe ${name}: ${passes} rules passed, ${violations.length} findings, none serious or critical`);
}

// pdfText answers the text of a PDF file (pdftotext, UTF-8).
export async function pdfText(file) {
  const { stdout } = await execFileP('pdftotext', ['-enc', 'UTF-8', file, '-'], { timeout: 30_000 });
  return stdout;
}

// pdfQRCodes answers the QR codes on a PDF's first page: the page rendered
// at 150 dpi (pdftoppm), read by zbarimg.
export async function pdfQRCodes(file) {
  const png = `${file}.page`;
  await execFileP('pdftoppm', ['-r', '150', '-png', '-singlefile', '-f', '1', '-l', '1', file, png], { timeout: 30_000 });
  const { stdout } = await execFileP('zbarimg', ['--quiet', '--raw', '-Sqrcode.enable', `${png}.png`], { timeout: 30_000 });
  return stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}
