// A recording's replay: the event log (internal/classroom/record: one JSON
// object a line, {"t": ms on the recording clock, "type": kind, ...}) turned
// into the room's state at any time T, and one clock that the media
// elements, the board, the presentation and the chat all follow.
//
// The board at T is every board event with t <= T applied to an empty board
// in the live room's own BoardModel; snapshots every SNAPSHOT_EVERY events
// make a seek cost at most that many events. Playing forward applies the new
// events one by one, so the view paints them incrementally, as live.
import { BoardModel, type BoardEvent, type BoardObject, type BoardSnapshot } from '../classroom/board/model';
import type { BoardHost } from '../classroom/board/view';
import type { ChatMessage, Presentation, SharedFile } from '../classroom/protocol';

export interface PlaybackFile {
  url: string;
  /** The file's name, as the event log's file lines know it. */
  name?: string;
  role: string;
  userId: string;
  label: string;
  type: string;
  startMs: number;
  durationMs: number;
  width: number;
  height: number;
}

export interface PlaybackBoot {
  title?: string;
  state?: string;
  durationMs?: number;
  /** The event log's URL, "" without one (an imported recording). */
  events?: string;
  files?: PlaybackFile[];
  /** Optional: fresh links to the class's shared files by id (presentations), when the server gives them. */
  sharedFiles?: Record<string, string>;
}

export interface Chapter {
  t: number;
  kind: 'start' | 'slide' | 'board';
  /** Slide number, or the board page's number. */
  page: number;
  /** The presented file's name, when known. */
  name?: string;
}

export const SPEEDS = [0.5, 1, 1.25, 1.5, 2];

const SNAPSHOT_EVERY = 100;
/** Past this many events ahead, a seek restores a snapshot rather than applying one by one. */
const STEP_LIMIT = 2 * SNAPSHOT_EVERY;
/** A media element further than this from the clock (s) is put right. */
const MAX_DRIFT = 0.2;
/** How long (ms) the clock waits for a media element that is loading before playing on without it. */
const MAX_WAIT = 4000;
/** Chapters closer than this (ms) are one: the last page a quick run of turns ends on. */
const CHAPTER_MERGE = 1500;

interface Line {
  t: number;
  type: string;
  [k: string]: unknown;
}

interface Media {
  file: PlaybackFile;
  el: HTMLMediaElement;
  correctedAt: number;
  waitingSince: number;
  failed: boolean;
}

/** Index of the first item whose t is > t (binary search). */
function upper(items: ReadonlyArray<{ t: number }>, t: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].t <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export type Phase = 'loading' | 'ready' | 'error';

export class Replay implements BoardHost {
  readonly board = new BoardModel();
  onBoardRefused: (ref: number) => void = () => {};
  boardOp(): number {
    return 0; // a replay never draws
  }
  boardLive(): void {}

  phase: Phase = 'loading';
  /** The event log could not be loaded (the media still plays). */
  eventsFailed = false;
  t = 0;
  playing = false;
  speed = 1;
  duration: number;
  /** Some media element the clock waits for is loading. */
  buffering = false;
  /** Whether the log has board or presentation events, and chat. */
  hasBoard = false;
  hasChat = false;
  readonly files: PlaybackFile[];
  chapters: Chapter[] = [];
  /** Names of users, from join and update events. */
  names = new Map<string, string>();

  private boardEvents: Array<{ t: number; ev: BoardEvent }> = [];
  private applied = 0;
  private snapshots: Array<{ n: number; snap: BoardSnapshot }> = [];
  private chatLines: Array<{ t: number; msg: ChatMessage }> = [];
  private chatShown: ChatMessage[] = [];
  private presLines: Array<{ t: number; pres: Presentation | null }> = [];
  private sharedFiles = new Map<string, SharedFile>();
  /** Who speaks from when: the room's speaking events, and the speaking flag of snapshots, joins and updates. */
  private speakLines: Array<{ t: number; userId: string; speaking: boolean }> = [];
  /** Stretches of speech by user, for the timeline (ms on the recording clock). */
  speech: Array<{ userId: string; from: number; to: number }> = [];
  /**
   * The stretches of the recording clock each file holds, end to end in
   * the file, by name (the recorder's file close lines): a file that went
   * on across a pause or with its publisher's next stream has cuts.
   */
  private spans = new Map<string, Array<[number, number]>>();
  /** Paused stretches of the recording clock: nothing happened, nothing to play. */
  gaps: Array<[number, number]> = [];
  private media = new Set<Media>();
  private listeners = new Set<() => void>();
  private frame = 0;
  private last = 0;

  constructor(private boot: PlaybackBoot) {
    this.files = (boot.files ?? []).filter((f) => f.role === 'media' && f.url);
    this.duration = Math.max(boot.durationMs ?? 0, ...this.files.map((f) => (f.startMs || 0) + (f.durationMs || 0)));
  }

  subscribe(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  private emit(): void {
    this.listeners.forEach((f) => f());
  }

  /** Fetches and reads the event log. */
  async load(): Promise<void> {
    if (this.boot.events) {
      try {
        const res = await fetch(this.boot.events, { credentials: 'same-origin' });
        if (!res.ok) throw new Error(`events: ${res.status}`);
        this.read(await res.text());
      } catch {
        this.eventsFailed = true;
      }
    }
    if (!this.files.length && (this.eventsFailed || !this.boot.events)) this.phase = 'error';
    else this.phase = 'ready';
    this.seek(0);
    this.emit();
  }

  /** Reads the lines of an event log (exported for tests). */
  read(text: string): void {
    const lines: Line[] = [];
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      try {
        const l = JSON.parse(raw) as Line;
        if (l && typeof l.t === 'number' && typeof l.type === 'string') lines.push(l);
      } catch {
        /* a torn last line (the recording stopped mid-write) */
      }
    }
    // In time order already; a stable sort keeps the order of equal times.
    lines.sort((a, b) => a.t - b.t);
    let pausedAt = -1;
    let lastT = 0;
    for (const l of lines) {
      lastT = Math.max(lastT, l.t);
      switch (l.type) {
        case 'board': {
          const { t, type: _type, kind: _kind, ...ev } = l;
          this.boardEvents.push({ t, ev: ev as unknown as BoardEvent });
          break;
        }
        case 'chat': {
          const msg = l.message as ChatMessage | undefined;
          if (msg && !this.chatLines.some((c) => c.msg.id === msg.id)) this.chatLines.push({ t: l.t, msg });
          break;
        }
        case 'presentation': {
          const p = l.presentation as Presentation | null | undefined;
          this.presLines.push({ t: l.t, pres: l.closed || !p ? null : p });
          break;
        }
        case 'join':
        case 'update': {
          const p = l.participant as { userId?: string; name?: string; speaking?: boolean } | undefined;
          if (p?.userId && p.name) this.names.set(p.userId, p.name);
          if (p?.userId) this.speakLines.push({ t: l.t, userId: p.userId, speaking: !!p.speaking });
          break;
        }
        case 'snapshot': {
          const ps = (l.participants ?? []) as Array<{ userId?: string; name?: string; speaking?: boolean }>;
          for (const p of ps) {
            if (!p.userId) continue;
            if (p.name && !this.names.has(p.userId)) this.names.set(p.userId, p.name);
            this.speakLines.push({ t: l.t, userId: p.userId, speaking: !!p.speaking });
          }
          break;
        }
        case 'speaking':
          if (typeof l.userId === 'string') this.speakLines.push({ t: l.t, userId: l.userId, speaking: !!l.speaking });
          break;
        case 'leave':
          if (typeof l.userId === 'string') this.speakLines.push({ t: l.t, userId: l.userId, speaking: false });
          break;
        case 'file': {
          // The room's shared-file event (kind "file"); the recorder's own
          // file lines (action open/close) describe media files.
          const f = l.file as SharedFile | undefined;
          if (l.kind === 'file' && f) this.sharedFiles.set(String(f.id), f);
          if (l.action === 'close' && typeof l.name === 'string' && Array.isArray(l.spans)) {
            const spans = (l.spans as unknown[]).filter(
              (s): s is [number, number] => Array.isArray(s) && typeof s[0] === 'number' && typeof s[1] === 'number' && s[1] >= s[0],
            );
            if (spans.length) this.spans.set(l.name, spans);
          }
          break;
        }
        case 'recording':
          if (l.action === 'pause') pausedAt = l.t;
          else if (l.action === 'resume' && pausedAt >= 0) {
            if (l.t > pausedAt) this.gaps.push([pausedAt, l.t]);
            pausedAt = -1;
          }
          break;
      }
    }
    this.duration = Math.max(this.duration, lastT);
    this.hasBoard = this.boardEvents.length > 0 || this.presLines.length > 0;
    this.hasChat = true;
    this.buildSpeech(lastT);
    this.buildSnapshots();
    this.buildChapters();
  }

  /** Turns the speaking lines into stretches of speech per user. */
  private buildSpeech(end: number): void {
    const since = new Map<string, number>();
    for (const l of this.speakLines) {
      const from = since.get(l.userId);
      if (l.speaking && from === undefined) since.set(l.userId, l.t);
      else if (!l.speaking && from !== undefined) {
        if (l.t > from) this.speech.push({ userId: l.userId, from, to: l.t });
        since.delete(l.userId);
      }
    }
    for (const [userId, from] of since) if (end > from) this.speech.push({ userId, from, to: end });
    this.speech.sort((a, b) => a.from - b.from);
  }

  /** Who is speaking at the clock's time. */
  speaking(): string[] {
    const out: string[] = [];
    for (const s of this.speech) {
      if (s.from > this.t) break;
      if (this.t < s.to && !out.includes(s.userId)) out.push(s.userId);
    }
    return out;
  }

  /** Runs the board events once, keeping a snapshot every SNAPSHOT_EVERY. */
  private buildSnapshots(): void {
    const m = new BoardModel();
    this.snapshots = [{ n: 0, snap: snapshotOf(m) }];
    this.boardEvents.forEach((b, i) => {
      m.apply(b.ev);
      if ((i + 1) % SNAPSHOT_EVERY === 0) this.snapshots.push({ n: i + 1, snap: snapshotOf(m) });
    });
  }

  private buildChapters(): void {
    const out: Chapter[] = [{ t: 0, kind: 'start', page: 0 }];
    // Both kinds in time order: a board page change while presenting
    // shows nothing, so it is no chapter.
    const marks = [
      ...this.presLines.map((p) => ({ t: p.t, pres: p.pres, page: '' })),
      ...this.boardEvents.filter((b) => b.ev.op === 'page' && b.ev.page).map((b) => ({ t: b.t, pres: undefined, page: b.ev.page! })),
    ].sort((a, b) => a.t - b.t);
    let pres: Presentation | null = null;
    let boardPage = 'p1';
    let shown = '';
    for (const m of marks) {
      let c: Chapter | null = null;
      if (m.pres !== undefined) {
        pres = m.pres;
        if (!pres) c = { t: m.t, kind: 'board', page: pageNumber(boardPage) };
        else c = { t: m.t, kind: 'slide', page: pres.page, name: this.sharedFiles.get(String(pres.file))?.name };
      } else {
        boardPage = m.page;
        if (!pres) c = { t: m.t, kind: 'board', page: pageNumber(boardPage) };
      }
      if (!c) continue;
      const key = `${c.kind}:${c.name ?? ''}:${c.page}`;
      if (key === shown) continue;
      const prev = out[out.length - 1];
      if (prev.kind !== 'start' && c.t - prev.t < CHAPTER_MERGE) out.pop();
      const before = out[out.length - 1];
      if (before && `${before.kind}:${before.name ?? ''}:${before.page}` === key) {
        shown = key;
        continue;
      }
      out.push(c);
      shown = key;
    }
    this.chapters = out;
  }

  // ---- state at the clock's time ----

  /** Chat messages written by now (the same array while none is added). */
  chat(): ChatMessage[] {
    const n = upper(this.chatLines, this.t);
    if (n !== this.chatShown.length) this.chatShown = this.chatLines.slice(0, n).map((c) => c.msg);
    return this.chatShown;
  }

  /** The presentation open now, its link made fresh when the server gives one. */
  presentation(): Presentation | null {
    const n = upper(this.presLines, this.t);
    const p = n > 0 ? this.presLines[n - 1].pres : null;
    if (!p) return null;
    const fresh = this.boot.sharedFiles?.[String(p.file)];
    return fresh && fresh !== p.url ? { ...p, url: fresh } : p;
  }

  /** The page the board shows now: the presentation's, else the board's. */
  page(): string {
    const p = this.presentation();
    return p ? `pdf:${p.file}:${p.page}` : this.board.page;
  }

  nameOf(userId: string): string {
    return this.names.get(userId) ?? '';
  }

  /** Brings the board to the clock's time. */
  private syncBoard(): void {
    const n = upper(this.boardEvents, this.t);
    if (n === this.applied) return;
    if (n < this.applied || n - this.applied > STEP_LIMIT) {
      let k = this.snapshots.length - 1;
      while (k > 0 && this.snapshots[k].n > n) k--;
      const s = this.snapshots[k];
      this.board.load(s.snap);
      this.applied = s.n;
    }
    for (; this.applied < n; this.applied++) this.board.apply(this.boardEvents[this.applied].ev);
  }

  // ---- the clock ----

  play(): void {
    if (this.playing) return;
    if (this.t >= this.duration - 50) this.setTime(0);
    this.playing = true;
    this.last = performance.now();
    this.syncMedia(true);
    this.loop();
    this.emit();
  }

  pause(): void {
    if (!this.playing) return;
    this.playing = false;
    cancelAnimationFrame(this.frame);
    this.syncMedia(true);
    this.emit();
  }

  toggle(): void {
    if (this.playing) this.pause();
    else this.play();
  }

  setSpeed(speed: number): void {
    this.speed = SPEEDS.includes(speed) ? speed : 1;
    this.syncMedia(false);
    this.emit();
  }

  seek(t: number): void {
    this.setTime(t);
    this.syncMedia(true);
    this.emit();
  }

  private setTime(t: number): void {
    this.t = Math.max(0, Math.min(this.duration, Math.round(t)));
    this.syncBoard();
  }

  private loop(): void {
    this.frame = requestAnimationFrame((now) => {
      if (!this.playing) return;
      const dt = Math.min(250, now - this.last);
      this.last = now;
      const wait = this.waiting(now);
      if (wait !== this.buffering) this.buffering = wait;
      if (!wait) {
        let next = this.t + dt * this.speed;
        // Skip what a pause left out: nothing was recorded.
        const gap = this.gaps.find(([a, b]) => next >= a && next < b);
        const jumped = !!gap;
        if (gap) next = gap[1];
        if (next >= this.duration) {
          this.setTime(this.duration);
          this.playing = false;
          this.syncMedia(true);
          this.emit();
          return;
        }
        this.setTime(next);
        this.syncMedia(jumped);
      }
      this.emit();
      this.loop();
    });
  }

  /** Whether the clock should wait for a media element that should be playing but is still loading. */
  private waiting(now: number): boolean {
    let wait = false;
    for (const m of this.media) {
      if (m.failed || this.mediaTime(m.file) === null) {
        m.waitingSince = 0;
        continue;
      }
      const loading = m.el.readyState < HTMLMediaElement.HAVE_FUTURE_DATA || m.el.seeking;
      if (!loading) {
        m.waitingSince = 0;
        continue;
      }
      if (!m.waitingSince) m.waitingSince = now;
      if (now - m.waitingSince < MAX_WAIT) wait = true;
    }
    return wait;
  }

  // ---- media ----

  /**
   * Where file is (s from its start) at the clock's time, or null when it
   * holds nothing then. A file kept open across pauses (isVideo=1) has the
   * paused stretches cut out.
   */
  mediaTime(f: PlaybackFile, t = this.t): number | null {
    const spans = f.name ? this.spans.get(f.name) : undefined;
    if (spans) {
      // Where the file is at t: in one of its spans, or nowhere (a cut).
      let acc = 0;
      for (const [i, [a, b]] of spans.entries()) {
        // The last span keeps its last frame 100 ms (as below).
        const end = i === spans.length - 1 ? b + 100 : b;
        if (t >= a && t < end) return (acc + Math.min(t, b) - a) / 1000;
        acc += b - a;
      }
      return null;
    }
    const start = f.startMs || 0;
    if (t < start) return null;
    let ms = t - start;
    for (const [a, b] of this.gaps) {
      if (a < start) continue;
      if (t >= a && t < b) return null;
      if (b <= t) ms -= b - a;
    }
    // A recorded video file knows its length, even when it is 0 (one
    // frame, before the camera changed size); only an imported file (no
    // size, no length) plays to its own end.
    const known = f.durationMs > 0 || f.width > 0;
    if (known && ms > f.durationMs + 100) return null;
    return ms / 1000;
  }

  /** Media elements register here; the replay plays, pauses and seeks them. */
  attach(file: PlaybackFile, el: HTMLMediaElement): () => void {
    const m: Media = { file, el, correctedAt: 0, waitingSince: 0, failed: false };
    const onError = () => {
      m.failed = true;
      this.emit();
    };
    const onMeta = () => {
      // An imported file may come without a duration in the boot data.
      if (Number.isFinite(el.duration) && el.duration > 0 && !file.durationMs) {
        this.duration = Math.max(this.duration, (file.startMs || 0) + Math.round(el.duration * 1000));
        this.emit();
      }
      this.syncOne(m, true);
    };
    el.addEventListener('error', onError);
    el.addEventListener('loadedmetadata', onMeta);
    this.media.add(m);
    this.syncOne(m, true);
    return () => {
      el.removeEventListener('error', onError);
      el.removeEventListener('loadedmetadata', onMeta);
      this.media.delete(m);
    };
  }

  mediaFailed(el: HTMLMediaElement): boolean {
    for (const m of this.media) if (m.el === el) return m.failed;
    return false;
  }

  private syncMedia(force: boolean): void {
    for (const m of this.media) this.syncOne(m, force);
  }

  private syncOne(m: Media, force: boolean): void {
    const el = m.el;
    const at = this.mediaTime(m.file);
    if (el.playbackRate !== this.speed) el.playbackRate = this.speed;
    if (at === null || m.failed) {
      if (!el.paused) el.pause();
      return;
    }
    if (el.readyState >= HTMLMediaElement.HAVE_METADATA) {
      const now = performance.now();
      const drift = Math.abs(el.currentTime - at);
      // Put right when off by more than MAX_DRIFT, at most twice a second
      // while playing (a seek takes a moment to land).
      if ((force && drift > 0.05) || (drift > MAX_DRIFT && !el.seeking && now - m.correctedAt > 500)) {
        el.currentTime = at;
        m.correctedAt = now;
      }
    }
    if (this.playing && el.paused && !el.ended) el.play().catch(() => {});
    else if (!this.playing && !el.paused) el.pause();
  }

  /** For window.lectern.replay(). */
  dump(): Record<string, unknown> {
    const page = this.page();
    return JSON.parse(
      JSON.stringify({
        t: this.t,
        playing: this.playing,
        speed: this.speed,
        duration: this.duration,
        board: this.board.dump(page),
        chat: this.chat(),
        presentation: this.presentation(),
        chapters: this.chapters,
        speaking: this.speaking(),
        speech: this.speech,
      }),
    );
  }
}

function snapshotOf(m: BoardModel): BoardSnapshot {
  const pages: Array<{ id: string; objects: BoardObject[] }> = [];
  const ids = new Set([...m.known, ...m.pages.keys()]);
  // Objects are never changed in place (a move makes a new one): the
  // snapshot shares them.
  for (const id of ids) pages.push({ id, objects: [...(m.pages.get(id)?.values() ?? [])] });
  return { page: m.page, pages };
}

function pageNumber(id: string): number {
  const m = /^p(\d+)$/.exec(id);
  return m ? Number(m[1]) : 1;
}
