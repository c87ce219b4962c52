// The whiteboard's state as the room orders it (docs/classroom-whiteboard.md):
// pages of objects, changed only by the server's sequenced board events,
// plus what is live and never stored (strokes being drawn, laser pointers)
// and what this client sent and is waiting to see confirmed.

export type Tool = 'pen' | 'highlighter' | 'line' | 'arrow' | 'rect' | 'ellipse' | 'text';

export interface BoardObject {
  id: string;
  page: string;
  tool: Tool;
  color: string;
  width: number;
  points: number[];
  text?: string;
  size?: number;
  by?: string;
  seq?: number;
}

export interface BoardSnapshot {
  page?: string;
  pages?: Array<{ id: string; objects?: BoardObject[] }>;
}

/** A board event of the room (a `type:"event"`, `kind:"board"` message). */
export interface BoardEvent {
  seq?: number;
  op: string;
  object?: BoardObject;
  objects?: BoardObject[];
  page?: string;
  ids?: string[];
  dx?: number;
  dy?: number;
  by?: string;
}

/** A live message (`type:"board-live"`). */
export interface BoardLive {
  op: 'progress' | 'laser' | string;
  id?: string;
  page?: string;
  tool?: Tool;
  color?: string;
  width?: number;
  points?: number[];
  x?: number;
  y?: number;
  off?: boolean;
  by?: string;
}

export interface LiveStroke {
  id: string;
  page: string;
  tool: Tool;
  color: string;
  width: number;
  points: number[];
  by: string;
  at: number;
}

export interface Laser {
  by: string;
  page: string;
  x: number;
  y: number;
  at: number;
  trail: Array<[number, number, number]>;
}

/** What changed, so a view redraws as little as it can. */
export type BoardChange =
  | { kind: 'add'; page: string; object: BoardObject }
  | { kind: 'page'; page: string }
  /**
   * Objects of page changed: objects lists them as they were and as they
   * are (what a view must repaint), absent when the whole page changed.
   */
  | { kind: 'reset'; page?: string; op?: string; ids?: string[]; by?: string; objects?: BoardObject[] }
  | { kind: 'live' };

export const PAGE_W = 1600;
export const PAGE_H = 900;
/** A remote stroke with no news for this long is dropped (its author left mid-stroke). */
const LIVE_STALE = 4000;
/** A laser without news for this long fades out. */
export const LASER_FADE = 2500;

export const SHAPES: ReadonlySet<Tool> = new Set(['line', 'arrow', 'rect', 'ellipse']);

/** Sorts page ids: blank pages p1, p2, ... by number, then anything else. */
export function comparePages(a: string, b: string): number {
  const na = /^p(\d+)$/.exec(a);
  const nb = /^p(\d+)$/.exec(b);
  if (na && nb) return Number(na[1]) - Number(nb[1]);
  if (na) return -1;
  if (nb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function isBlankPage(id: string): boolean {
  return /^p\d+$/.test(id);
}

export class BoardModel {
  /** Objects per page, in drawing order (first is at the bottom). */
  pages = new Map<string, Map<string, BoardObject>>();
  /** The page the teacher shows (blank board; a presentation has its own). */
  page = 'p1';
  /** Blank pages known to exist, even when empty. */
  known = new Set<string>(['p1']);
  live = new Map<string, LiveStroke>();
  lasers = new Map<string, Laser>();
  /** Bumped on any change to stored objects. */
  version = 0;
  /**
   * Drawing order of every object seen: the server puts an undone erase
   * back in its old place, and so does this client.
   */
  private ord = new Map<string, number>();
  private nextOrd = 1;

  private listeners = new Set<(c: BoardChange) => void>();

  subscribe(f: (c: BoardChange) => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  private emit(c: BoardChange): void {
    if (c.kind !== 'live') this.version++;
    this.listeners.forEach((f) => f(c));
  }

  objects(page: string): Map<string, BoardObject> {
    let m = this.pages.get(page);
    if (!m) {
      m = new Map();
      this.pages.set(page, m);
    }
    return m;
  }

  /** A welcome's snapshot replaces everything. */
  load(snap: BoardSnapshot | null | undefined): void {
    this.pages.clear();
    this.known = new Set(['p1']);
    this.live.clear();
    this.lasers.clear();
    this.ord.clear();
    this.page = snap?.page || 'p1';
    if (isBlankPage(this.page)) this.known.add(this.page);
    for (const p of snap?.pages ?? []) {
      const m = this.objects(p.id);
      if (isBlankPage(p.id)) this.known.add(p.id);
      for (const o of p.objects ?? []) {
        m.set(o.id, { ...o, page: p.id });
        this.ord.set(o.id, this.nextOrd++);
      }
    }
    this.emit({ kind: 'reset' });
  }

  /** Applies one sequenced board event. */
  apply(ev: BoardEvent): void {
    switch (ev.op) {
      case 'add': {
        const o = ev.object;
        if (!o?.id || !o.page) return;
        this.live.delete(o.id);
        const m = this.objects(o.page);
        if (isBlankPage(o.page)) this.known.add(o.page);
        const old = m.get(o.id);
        m.delete(o.id);
        m.set(o.id, o);
        if (!this.ord.has(o.id)) this.ord.set(o.id, this.nextOrd++);
        this.emit(old ? { kind: 'reset', page: o.page, objects: [old, o] } : { kind: 'add', page: o.page, object: o });
        return;
      }
      case 'restore': {
        const list = ev.objects ?? (ev.object ? [ev.object] : []);
        const touched = new Map<string, BoardObject[]>();
        for (const item of list) {
          const o = item?.page || !ev.page ? item : { ...item, page: ev.page };
          if (!o?.id || !o.page) continue;
          const m = this.objects(o.page);
          m.delete(o.id);
          m.set(o.id, o);
          if (!this.ord.has(o.id)) this.ord.set(o.id, this.nextOrd++);
          touched.set(o.page, [...(touched.get(o.page) ?? []), o]);
          if (isBlankPage(o.page)) this.known.add(o.page);
        }
        for (const [page, objects] of touched) {
          const m = this.objects(page);
          const sorted = [...m.values()].sort((a, b) => (this.ord.get(a.id) ?? 0) - (this.ord.get(b.id) ?? 0));
          m.clear();
          for (const o of sorted) m.set(o.id, o);
          this.emit({ kind: 'reset', page, op: 'restore', objects });
        }
        return;
      }
      case 'move': {
        if (!ev.page || !ev.ids) return;
        const m = this.objects(ev.page);
        const dx = Math.round(ev.dx ?? 0);
        const dy = Math.round(ev.dy ?? 0);
        const objects: BoardObject[] = [];
        for (const id of ev.ids) {
          const o = m.get(id);
          if (!o) continue;
          const pts = o.points.slice();
          for (let i = 0; i + 1 < pts.length; i += 2) {
            pts[i] += dx;
            pts[i + 1] += dy;
          }
          const moved = { ...o, points: pts, by: ev.by ?? o.by, seq: ev.seq ?? o.seq };
          m.set(id, moved);
          objects.push(o, moved);
        }
        this.emit({ kind: 'reset', page: ev.page, op: 'move', ids: ev.ids, by: ev.by, objects });
        return;
      }
      case 'erase': {
        if (!ev.page || !ev.ids) return;
        const m = this.objects(ev.page);
        const objects: BoardObject[] = [];
        for (const id of ev.ids) {
          const o = m.get(id);
          if (o) objects.push(o);
          m.delete(id);
        }
        this.emit({ kind: 'reset', page: ev.page, op: 'erase', ids: ev.ids, by: ev.by, objects });
        return;
      }
      case 'clear': {
        if (!ev.page) return;
        this.objects(ev.page).clear();
        this.emit({ kind: 'reset', page: ev.page, op: 'clear', by: ev.by });
        return;
      }
      case 'page': {
        if (!ev.page) return;
        this.page = ev.page;
        if (isBlankPage(ev.page)) this.known.add(ev.page);
        this.emit({ kind: 'page', page: ev.page });
        return;
      }
    }
  }

  /** Applies a live (unstored) message from another user. */
  applyLive(msg: BoardLive): void {
    const by = msg.by ?? '';
    const now = performance.now();
    if (msg.op === 'progress' && msg.id && msg.page && msg.tool) {
      // A stroke the server already stored is not live any more.
      if (this.pages.get(msg.page)?.has(msg.id)) return;
      let s = this.live.get(msg.id);
      if (!s) {
        s = {
          id: msg.id,
          page: msg.page,
          tool: msg.tool,
          color: msg.color ?? '#000000',
          width: msg.width ?? 4,
          points: [],
          by,
          at: now,
        };
        this.live.set(msg.id, s);
      }
      const pts = msg.points ?? [];
      if (SHAPES.has(s.tool)) {
        // Two corners: the first point, and the latest one.
        const all = s.points.length ? [s.points[0], s.points[1], ...pts] : pts;
        s.points = all.length >= 4 ? [all[0], all[1], all[all.length - 2], all[all.length - 1]] : all;
      } else {
        for (const v of pts) s.points.push(v);
      }
      s.at = now;
      this.emit({ kind: 'live' });
    } else if (msg.op === 'laser') {
      if (msg.off || typeof msg.x !== 'number' || typeof msg.y !== 'number') {
        this.lasers.delete(by);
      } else {
        const prev = this.lasers.get(by);
        const trail = prev && prev.page === msg.page ? prev.trail : [];
        trail.push([msg.x, msg.y, now]);
        while (trail.length > 12) trail.shift();
        this.lasers.set(by, { by, page: msg.page ?? '', x: msg.x, y: msg.y, at: now, trail });
      }
      this.emit({ kind: 'live' });
    }
  }

  /** Drops stale live strokes; answers whether anything live remains. */
  prune(now: number): boolean {
    for (const [id, s] of this.live) if (now - s.at > LIVE_STALE) this.live.delete(id);
    for (const [by, l] of this.lasers) if (now - l.at > LASER_FADE) this.lasers.delete(by);
    return this.live.size > 0 || this.lasers.size > 0;
  }

  /** Blank pages in order. */
  blankPages(): string[] {
    const ids = new Set(this.known);
    for (const [id, m] of this.pages) if (isBlankPage(id) && m.size > 0) ids.add(id);
    return [...ids].sort(comparePages);
  }

  /** The next free blank page id. */
  nextPageId(): string {
    let n = 0;
    for (const id of this.blankPages()) n = Math.max(n, Number(id.slice(1)));
    return `p${n + 1}`;
  }

  /** Plain data for window.lectern.board(). */
  dump(current: string): { page: string; pages: Record<string, BoardObject[]> } {
    const pages: Record<string, BoardObject[]> = {};
    for (const [id, m] of this.pages) {
      if (m.size > 0 || id === current) pages[id] = [...m.values()].map((o) => JSON.parse(JSON.stringify(o)));
    }
    if (!pages[current]) pages[current] = [];
    return { page: current, pages };
  }
}
