// The board on screen: two stacked canvases (the rendered presentation page
// under #board) and the pointer tools. Finished objects are painted once
// into an offscreen cache; each frame copies the cache and draws only what
// is live on top (strokes being drawn, a selection being moved, lasers).
// A new object is added to the cache incrementally; erase, move, clear and
// undo repaint the cache once.
import { bounds, drawObject, hits, intersects, topHit, type Box, type Drawable } from './draw';
import {
  LASER_FADE,
  PAGE_H,
  PAGE_W,
  SHAPES,
  type BoardChange,
  type BoardModel,
  type BoardObject,
  type Tool,
} from './model';
import type { RenderedPage } from './pdf';

/**
 * What a view needs of its room: the live room (Classroom), or a recording's
 * replay, which never draws (canDraw false) and so never sends.
 */
export interface BoardHost {
  readonly board: BoardModel;
  onBoardRefused: (ref: number) => void;
  boardOp(op: Record<string, unknown>): number;
  boardLive(op: Record<string, unknown>): void;
}

export type UiTool = Tool | 'eraser' | 'select' | 'laser';

const PROGRESS_EVERY = 33; // ms: about 30 a second
const MAX_POINTS = 2000;
const PENDING_TTL = 20_000;
const ERASER_RADIUS = 10;
const NUDGE = 10;

interface Pending {
  at: number;
  ref: number;
}

interface Stroke extends Drawable {
  id: string;
  page: string;
  /** Freehand: points (numbers) already sent; shapes: 1 once sent. */
  sent: number;
  sentEnd?: string;
}

type Gesture =
  | { kind: 'draw'; stroke: Stroke; timer: number }
  | { kind: 'erase'; ids: Set<string>; lastX: number; lastY: number }
  | { kind: 'move'; x0: number; y0: number; dx: number; dy: number }
  | { kind: 'band'; x0: number; y0: number; x1: number; y1: number }
  | { kind: 'laser' };

export interface ViewOptions {
  tool: UiTool;
  color: string;
  width: number;
  canDraw: boolean;
  teacher: boolean;
  me: string;
  /** The page shown and drawn on: a blank page, or pdf:<file>:<page>. */
  page: string;
  /** Zoom of the presentation page (1 on blank pages). */
  zoom: number;
  presenting: boolean;
}

export interface TextRequest {
  page: string;
  x: number;
  y: number;
  /** Where on the frame, in CSS pixels. */
  left: number;
  top: number;
  scale: number;
}

let idCounter = 0;

export function newId(): string {
  const r = new Uint8Array(6);
  crypto.getRandomValues(r);
  let s = '';
  for (const b of r) s += (b % 36).toString(36);
  return `${s}${(idCounter++ % 1296).toString(36)}`;
}

function clampX(x: number): number {
  return Math.max(0, Math.min(PAGE_W, Math.round(x)));
}
function clampY(y: number): number {
  return Math.max(0, Math.min(PAGE_H, Math.round(y)));
}

/** The text tool's font size (page units) for a line width: 24 to 72. */
export function textSizeFor(width: number): number {
  return Math.max(8, Math.min(200, Math.round(20 + width * 2.2)));
}

/** At most MAX_POINTS points, evenly kept, the last one always. */
export function thin(points: number[]): number[] {
  const n = points.length / 2;
  if (n <= MAX_POINTS) return points;
  const out: number[] = [];
  const step = (n - 1) / (MAX_POINTS - 1);
  for (let i = 0; i < MAX_POINTS; i++) {
    const k = Math.round(i * step) * 2;
    out.push(points[k], points[k + 1]);
  }
  return out;
}

/** Painting costs, for window.lectern.boardStats() (performance checks). */
export const boardStats = { repaints: 0, lastRepaintMs: 0, maxRepaintMs: 0, frames: 0, maxFrameMs: 0, objects: 0 };

export class BoardView {
  o: ViewOptions;
  /** Ids selected with the select tool, on the current page. */
  selection = new Set<string>();
  onSelection: (n: number) => void = () => {};
  onText: (req: TextRequest) => void = () => {};
  /** Told after the page's scale on screen changed (resize, zoom). */
  onLayout: () => void = () => {};
  /** Names of users, for remote lasers. */
  nameOf: (userId: string) => string = (id) => id;

  private ctx: CanvasRenderingContext2D;
  private cache = document.createElement('canvas');
  private cctx: CanvasRenderingContext2D;
  private pctx: CanvasRenderingContext2D | null;
  private W = 1;
  private H = 1;
  private dpr = 1;
  private s = 1;
  private ox = 0;
  private oy = 0;
  private fullDirty = true;
  /** A whole repaint under way, object by object. */
  private job: Iterator<BoardObject> | null = null;
  private jobStart = 0;
  /** Areas of the page (page units) to repaint. */
  private regions: Box[] = [];
  private presDirty = true;
  private frameQueued = false;
  private gesture: Gesture | null = null;
  private pendingAdds = new Map<string, Pending & { obj: BoardObject }>();
  private pendingErase = new Map<string, Pending>();
  private pendingMove = new Map<string, Pending & { dx: number; dy: number }>();
  private excluded = new Set<string>();
  private ownLaser: { x: number; y: number; trail: Array<[number, number, number]> } | null = null;
  private laserSentAt = 0;
  private hover: { x: number; y: number } | null = null;
  private rendered: RenderedPage | null = null;
  private presKey = '';
  private ro: ResizeObserver;
  private unsub: Array<() => void> = [];
  private sweepTimer = 0;

  constructor(
    private room: BoardHost,
    private canvas: HTMLCanvasElement,
    private pres: HTMLCanvasElement | null,
    opts: ViewOptions,
  ) {
    this.o = opts;
    this.ctx = canvas.getContext('2d')!;
    this.cctx = this.cache.getContext('2d')!;
    this.pctx = pres?.getContext('2d') ?? null;
    this.ro = new ResizeObserver(() => this.resize());
    this.ro.observe(canvas);
    this.resize();
    this.unsub.push(this.room.board.subscribe((c) => this.changed(c)));
    const prev = this.room.onBoardRefused;
    this.room.onBoardRefused = (ref) => {
      prev(ref);
      this.refused(ref);
    };
    this.unsub.push(() => (this.room.onBoardRefused = prev));
    this.bindPointer();
    this.sweepTimer = window.setInterval(() => this.sweep(), 2000);
  }

  destroy(): void {
    this.ro.disconnect();
    this.unsub.forEach((f) => f());
    clearInterval(this.sweepTimer);
    if (this.gesture?.kind === 'draw') clearInterval(this.gesture.timer);
    this.laserOff();
  }

  /** New options from the toolbar or the room. */
  set(opts: Partial<ViewOptions>): void {
    const before = this.o;
    this.o = { ...this.o, ...opts };
    if (before.page !== this.o.page || before.presenting !== this.o.presenting || before.zoom !== this.o.zoom) {
      this.cancelGesture();
      if (before.page !== this.o.page) this.clearSelection();
      this.layout();
      this.fullDirty = true;
      this.presDirty = true;
      if (before.zoom !== this.o.zoom) queueMicrotask(() => this.onLayout());
    }
    if (before.tool !== this.o.tool || before.canDraw !== this.o.canDraw) {
      if (before.tool === 'laser') this.laserOff();
      if (this.o.tool !== 'select') this.clearSelection();
      if (!this.o.canDraw) this.cancelGesture();
      this.canvas.style.cursor = this.cursor();
      this.canvas.style.touchAction = this.o.canDraw ? 'none' : 'auto';
    }
    this.request();
  }

  private cursor(): string {
    if (!this.o.canDraw) return 'default';
    switch (this.o.tool) {
      case 'select':
        return 'default';
      case 'text':
        return 'text';
      case 'eraser':
        return 'cell';
      default:
        return 'crosshair';
    }
  }

  // ---- geometry ----

  private resize(): void {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (w === this.W && h === this.H && dpr === this.dpr) return;
    this.W = w;
    this.H = h;
    this.dpr = dpr;
    for (const c of [this.canvas, this.cache, this.pres]) {
      if (!c) continue;
      c.width = w;
      c.height = h;
    }
    this.layout();
    this.fullDirty = true;
    this.presDirty = true;
    this.draw();
    this.onLayout();
  }

  private layout(): void {
    const base = Math.min(this.W / PAGE_W, this.H / PAGE_H);
    this.s = base * (this.o.presenting ? this.o.zoom : 1);
    this.ox = (this.W - PAGE_W * this.s) / 2;
    this.oy = (this.H - PAGE_H * this.s) / 2;
  }

  /** Device pixels per page unit. */
  pixelScale(): number {
    return this.s;
  }

  private toPage(ev: PointerEvent | MouseEvent): [number, number] {
    const r = this.canvas.getBoundingClientRect();
    const px = (ev.clientX - r.left) * this.dpr;
    const py = (ev.clientY - r.top) * this.dpr;
    return [(px - this.ox) / this.s, (py - this.oy) / this.s];
  }

  private pageTransform(ctx: CanvasRenderingContext2D): void {
    ctx.setTransform(this.s, 0, 0, this.s, this.ox, this.oy);
  }

  // ---- model changes ----

  private changed(c: BoardChange): void {
    const page = this.o.page;
    if (c.kind === 'live') {
      this.request();
      return;
    }
    if (c.kind === 'add') {
      if (c.page !== page) return;
      this.pendingAdds.delete(c.object.id);
      // Drawn on top at once, unless a repaint is due or under way (it reaches it).
      if (!this.fullDirty && !this.job && !this.excluded.has(c.object.id)) this.paintOne(c.object);
      this.request();
      return;
    }
    if (c.kind === 'page') return; // the UI passes the new page through set()
    if (c.page && c.page !== page) return;
    if (c.op === 'erase' || c.op === 'clear') {
      for (const id of c.ids ?? [...this.pendingErase.keys()]) this.pendingErase.delete(id);
    }
    if (c.op === 'move' && c.by === this.o.me) for (const id of c.ids ?? []) this.pendingMove.delete(id);
    // Objects gone from the page leave the selection.
    const objs = this.room.board.objects(page);
    let changed = false;
    for (const id of this.selection) {
      if (!objs.has(id)) {
        this.selection.delete(id);
        changed = true;
      }
    }
    if (changed) this.onSelection(this.selection.size);
    if (c.objects && !this.job) for (const o of c.objects) this.regions.push(bounds(o));
    else this.fullDirty = true;
    this.request();
  }

  private refused(ref: number): void {
    let any = false;
    for (const [id, p] of this.pendingAdds) if (p.ref === ref) (this.pendingAdds.delete(id), (any = true));
    for (const [id, p] of this.pendingErase) if (p.ref === ref) (this.pendingErase.delete(id), (any = true));
    for (const [id, p] of this.pendingMove) if (p.ref === ref) (this.pendingMove.delete(id), (any = true));
    if (any) this.request(); // the next frame repaints what is no longer hidden
  }

  /** Forgets what the server never confirmed. */
  private sweep(): void {
    const now = performance.now();
    let any = false;
    for (const m of [this.pendingAdds, this.pendingErase, this.pendingMove] as Array<Map<string, Pending>>) {
      for (const [id, p] of m) {
        if (now - p.at > PENDING_TTL) {
          m.delete(id);
          any = true;
        }
      }
    }
    if (any) this.request();
  }

  // ---- painting ----

  request(): void {
    if (this.frameQueued) return;
    this.frameQueued = true;
    requestAnimationFrame(() => {
      this.frameQueued = false;
      this.draw();
    });
  }

  private computeExcluded(): Set<string> {
    const ex = new Set<string>([...this.pendingErase.keys(), ...this.pendingMove.keys()]);
    const g = this.gesture;
    if (g?.kind === 'move') for (const id of this.selection) ex.add(id);
    if (g?.kind === 'erase') for (const id of g.ids) ex.add(id);
    return ex;
  }

  private sameSet(a: Set<string>, b: Set<string>): boolean {
    if (a.size !== b.size) return false;
    for (const x of a) if (!b.has(x)) return false;
    return true;
  }

  private paintBackground(ctx: CanvasRenderingContext2D): void {
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.W, this.H);
    if (this.o.presenting) return;
    ctx.fillStyle = '#e6eaf0';
    ctx.fillRect(0, 0, this.W, this.H);
    this.pageTransform(ctx);
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, PAGE_W, PAGE_H);
    // A light dot grid, as on paper.
    ctx.fillStyle = '#d5dbe5';
    const r = Math.max(1.2, 1 / this.s);
    for (let y = 50; y < PAGE_H; y += 50) for (let x = 50; x < PAGE_W; x += 50) ctx.fillRect(x - r / 2, y - r / 2, r, r);
  }

  private clipPage(ctx: CanvasRenderingContext2D): void {
    ctx.beginPath();
    ctx.rect(0, 0, PAGE_W, PAGE_H);
    ctx.clip();
  }

  /**
   * Starts repainting the whole cache: the background at once, the objects
   * over the next frames within a time budget each (a page of 20,000
   * objects must not freeze the page). Objects added meanwhile are reached
   * by the same iterator (a Map's iterator visits later insertions).
   */
  private startFull(): void {
    const ctx = this.cctx;
    this.excluded = this.computeExcluded();
    ctx.save();
    this.paintBackground(ctx);
    ctx.restore();
    this.job = this.room.board.objects(this.o.page).values();
    this.jobStart = performance.now();
    this.fullDirty = false;
    this.regions = [];
  }

  private continueFull(deadline: number): void {
    const it = this.job;
    if (!it) return;
    const ctx = this.cctx;
    ctx.save();
    this.pageTransform(ctx);
    this.clipPage(ctx);
    let n = 0;
    for (;;) {
      const r = it.next();
      if (r.done) {
        this.job = null;
        const ms = performance.now() - this.jobStart;
        boardStats.repaints++;
        boardStats.lastRepaintMs = Math.round(ms);
        boardStats.maxRepaintMs = Math.max(boardStats.maxRepaintMs, Math.round(ms));
        boardStats.objects = this.room.board.objects(this.o.page).size;
        break;
      }
      if (!this.excluded.has(r.value.id)) drawObject(ctx, r.value);
      if ((++n & 31) === 0 && performance.now() > deadline) break;
    }
    ctx.restore();
  }

  /** Repaints only where objects changed: everything that overlaps it, in order. */
  private repaintRegions(): void {
    const t0 = performance.now();
    let box: Box | null = null;
    for (const b of this.regions) box = box ? [Math.min(box[0], b[0]), Math.min(box[1], b[1]), Math.max(box[2], b[2]), Math.max(box[3], b[3])] : [...b];
    this.regions = [];
    if (!box) return;
    const x0 = Math.max(0, Math.floor(this.ox + (box[0] - 2) * this.s));
    const y0 = Math.max(0, Math.floor(this.oy + (box[1] - 2) * this.s));
    const x1 = Math.min(this.W, Math.ceil(this.ox + (box[2] + 2) * this.s));
    const y1 = Math.min(this.H, Math.ceil(this.oy + (box[3] + 2) * this.s));
    if (x1 <= x0 || y1 <= y0) return;
    const area: Box = [(x0 - this.ox) / this.s, (y0 - this.oy) / this.s, (x1 - this.ox) / this.s, (y1 - this.oy) / this.s];
    const ctx = this.cctx;
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.beginPath();
    ctx.rect(x0, y0, x1 - x0, y1 - y0);
    ctx.clip();
    this.paintBackground(ctx);
    this.pageTransform(ctx);
    this.clipPage(ctx);
    for (const o of this.room.board.objects(this.o.page).values()) {
      if (!this.excluded.has(o.id) && intersects(bounds(o), area)) drawObject(ctx, o);
    }
    ctx.restore();
    boardStats.lastRepaintMs = Math.round(performance.now() - t0);
  }

  private paintOne(o: BoardObject): void {
    const ctx = this.cctx;
    ctx.save();
    this.pageTransform(ctx);
    this.clipPage(ctx);
    drawObject(ctx, o);
    ctx.restore();
  }

  /** Hidden objects (being moved or erased) changed: repaint where they are. */
  private updateExcluded(): void {
    const next = this.computeExcluded();
    if (this.sameSet(this.excluded, next)) return;
    const objs = this.room.board.objects(this.o.page);
    for (const id of next) if (!this.excluded.has(id)) this.addRegion(objs.get(id));
    for (const id of this.excluded) if (!next.has(id)) this.addRegion(objs.get(id));
    this.excluded = next;
  }

  private addRegion(o: BoardObject | undefined): void {
    if (o) this.regions.push(bounds(o));
  }

  private draw(): void {
    const now = performance.now();
    boardStats.frames++;
    if (this.job) {
      // The running repaint uses the hidden set it started with.
      if (!this.sameSet(this.excluded, this.computeExcluded())) this.fullDirty = true;
    } else {
      this.updateExcluded();
    }
    if (this.fullDirty) this.startFull();
    if (this.job) this.continueFull(now + 12);
    else if (this.regions.length) this.repaintRegions();
    if (this.presDirty) this.paintPres();
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.W, this.H);
    ctx.drawImage(this.cache, 0, 0);
    ctx.save();
    this.pageTransform(ctx);
    this.clipPage(ctx);
    const page = this.o.page;
    const objs = this.room.board.objects(page);
    // Objects moved but not yet confirmed, or being moved now.
    const g = this.gesture;
    const drawShifted = (o: BoardObject, dx: number, dy: number) => {
      ctx.save();
      ctx.translate(dx, dy);
      drawObject(ctx, o);
      ctx.restore();
    };
    for (const [id, p] of this.pendingMove) {
      const o = objs.get(id);
      if (o && !(g?.kind === 'move' && this.selection.has(id))) drawShifted(o, p.dx, p.dy);
    }
    if (g?.kind === 'move') {
      for (const id of this.selection) {
        const o = objs.get(id);
        if (!o) continue;
        const pm = this.pendingMove.get(id);
        drawShifted(o, g.dx + (pm?.dx ?? 0), g.dy + (pm?.dy ?? 0));
      }
    }
    for (const p of this.pendingAdds.values()) if (p.obj.page === page) drawObject(ctx, p.obj);
    for (const s of this.room.board.live.values()) if (s.page === page && s.points.length >= 2) drawObject(ctx, s, false);
    if (g?.kind === 'draw' && g.stroke.points.length >= 2) drawObject(ctx, g.stroke, false);
    this.paintSelection(ctx);
    if (g?.kind === 'band') {
      ctx.setLineDash([8 / this.s, 6 / this.s]);
      ctx.lineWidth = 1.5 / this.s;
      ctx.strokeStyle = '#2155cc';
      ctx.fillStyle = 'rgba(33, 85, 204, 0.08)';
      const x = Math.min(g.x0, g.x1);
      const y = Math.min(g.y0, g.y1);
      ctx.fillRect(x, y, Math.abs(g.x1 - g.x0), Math.abs(g.y1 - g.y0));
      ctx.strokeRect(x, y, Math.abs(g.x1 - g.x0), Math.abs(g.y1 - g.y0));
      ctx.setLineDash([]);
    }
    if (this.o.tool === 'eraser' && this.o.canDraw && this.hover) {
      ctx.lineWidth = 1.5 / this.s;
      ctx.strokeStyle = '#5a6475';
      ctx.beginPath();
      ctx.arc(this.hover.x, this.hover.y, ERASER_RADIUS, 0, Math.PI * 2);
      ctx.stroke();
    }
    ctx.restore();
    // Lasers last, above everything, with their owner's name.
    ctx.save();
    this.pageTransform(ctx);
    let animate = this.room.board.prune(now);
    for (const l of this.room.board.lasers.values()) {
      if (l.page !== page) continue;
      const fade = Math.max(0, 1 - (now - l.at) / LASER_FADE);
      this.paintLaser(ctx, l.x, l.y, l.trail, fade, now, this.nameOf(l.by));
    }
    if (this.ownLaser) {
      this.paintLaser(ctx, this.ownLaser.x, this.ownLaser.y, this.ownLaser.trail, 1, now, '');
      animate = true;
    }
    ctx.restore();
    boardStats.maxFrameMs = Math.max(boardStats.maxFrameMs, Math.round(performance.now() - now));
    if (animate || this.job || this.fullDirty) this.request();
  }

  private paintSelection(ctx: CanvasRenderingContext2D): void {
    if (this.selection.size === 0) return;
    const box = this.selectionBox();
    if (!box) return;
    const g = this.gesture;
    const dx = g?.kind === 'move' ? g.dx : 0;
    const dy = g?.kind === 'move' ? g.dy : 0;
    ctx.setLineDash([6 / this.s, 4 / this.s]);
    ctx.lineWidth = 1.5 / this.s;
    ctx.strokeStyle = '#2155cc';
    const pad = 6 / this.s;
    ctx.strokeRect(box[0] + dx - pad, box[1] + dy - pad, box[2] - box[0] + 2 * pad, box[3] - box[1] + 2 * pad);
    ctx.setLineDash([]);
  }

  private selectionBox(): Box | null {
    const objs = this.room.board.objects(this.o.page);
    let b: Box | null = null;
    for (const id of this.selection) {
      const o = objs.get(id);
      if (!o) continue;
      const pm = this.pendingMove.get(id);
      const ob = bounds(o);
      const c: Box = pm ? [ob[0] + pm.dx, ob[1] + pm.dy, ob[2] + pm.dx, ob[3] + pm.dy] : ob;
      b = b ? [Math.min(b[0], c[0]), Math.min(b[1], c[1]), Math.max(b[2], c[2]), Math.max(b[3], c[3])] : [...c];
    }
    return b;
  }

  private paintLaser(
    ctx: CanvasRenderingContext2D,
    x: number,
    y: number,
    trail: Array<[number, number, number]>,
    alpha: number,
    now: number,
    name: string,
  ): void {
    const k = 1 / this.s;
    ctx.save();
    ctx.globalAlpha = alpha;
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    for (let i = 1; i < trail.length; i++) {
      const age = now - trail[i][2];
      const a = Math.max(0, 1 - age / 500);
      if (a <= 0) continue;
      ctx.strokeStyle = `rgba(239, 68, 68, ${0.5 * a})`;
      ctx.lineWidth = 6 * k * (0.4 + 0.6 * a);
      ctx.beginPath();
      ctx.moveTo(trail[i - 1][0], trail[i - 1][1]);
      ctx.lineTo(trail[i][0], trail[i][1]);
      ctx.stroke();
    }
    ctx.fillStyle = 'rgba(239, 68, 68, 0.25)';
    ctx.beginPath();
    ctx.arc(x, y, 14 * k, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillStyle = '#ef4444';
    ctx.strokeStyle = '#ffffff';
    ctx.lineWidth = 2 * k;
    ctx.beginPath();
    ctx.arc(x, y, 6 * k, 0, Math.PI * 2);
    ctx.fill();
    ctx.stroke();
    if (name) {
      ctx.font = `${12 * k}px system-ui, sans-serif`;
      ctx.textBaseline = 'top';
      const w = ctx.measureText(name).width;
      ctx.fillStyle = 'rgba(17, 24, 39, 0.8)';
      ctx.fillRect(x + 10 * k, y + 10 * k, w + 8 * k, 17 * k);
      ctx.fillStyle = '#ffffff';
      ctx.fillText(name, x + 14 * k, y + 12.5 * k);
    }
    ctx.restore();
  }

  // ---- presentation page ----

  /** The rendered PDF page to show (null while none is ready). */
  setRendered(r: RenderedPage | null, key: string): void {
    this.rendered = r;
    this.presKey = key;
    this.presDirty = true;
    this.request();
  }

  presKeyShown(): string {
    return this.rendered ? this.presKey : '';
  }

  /** Whether the rendered page is too coarse for the current scale. */
  wantsSharper(r: RenderedPage | null): boolean {
    if (!r) return true;
    return r.canvas.width < r.rect[2] * this.s * 0.95;
  }

  private paintPres(): void {
    this.presDirty = false;
    const ctx = this.pctx;
    const pres = this.pres;
    if (!ctx || !pres) return;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.W, this.H);
    if (!this.o.presenting) return;
    ctx.fillStyle = '#e6eaf0';
    ctx.fillRect(0, 0, this.W, this.H);
    const r = this.rendered;
    this.pageTransform(ctx);
    if (r) {
      const [x, y, w, h] = r.rect;
      ctx.shadowColor = 'rgba(16, 24, 40, 0.18)';
      ctx.shadowBlur = 8;
      ctx.imageSmoothingQuality = 'high';
      ctx.drawImage(r.canvas, x, y, w, h);
      pres.dataset.page = String(r.page);
      pres.dataset.key = this.presKey;
    } else {
      delete pres.dataset.page;
    }
  }

  // ---- pointer tools ----

  private bindPointer(): void {
    const c = this.canvas;
    c.addEventListener('pointerdown', (ev) => this.down(ev));
    c.addEventListener('pointermove', (ev) => this.move(ev));
    c.addEventListener('pointerup', (ev) => this.up(ev));
    c.addEventListener('pointercancel', () => this.cancelGesture());
    c.addEventListener('pointerleave', (ev) => {
      this.hover = null;
      if (!this.gesture && this.o.tool === 'laser' && ev.pointerType === 'mouse') this.laserOff();
      this.request();
    });
    c.addEventListener('lostpointercapture', () => {
      if (this.gesture && this.gesture.kind !== 'laser') this.finish();
    });
  }

  private mayTouch(o: BoardObject): boolean {
    return this.o.teacher || o.by === this.o.me;
  }

  private down(ev: PointerEvent): void {
    if (!this.o.canDraw || (ev.pointerType === 'mouse' && ev.button !== 0)) return;
    if (this.gesture) this.finish();
    ev.preventDefault();
    // Keys (undo, delete, tool letters) go to the board after drawing; no
    // focus ring for a pointer.
    this.canvas.focus({ preventScroll: true, focusVisible: false } as FocusOptions);
    try {
      this.canvas.setPointerCapture(ev.pointerId);
    } catch {
      /* synthetic events have no capture */
    }
    const [fx, fy] = this.toPage(ev);
    const x = clampX(fx);
    const y = clampY(fy);
    const tool = this.o.tool;
    const page = this.o.page;
    switch (tool) {
      case 'pen':
      case 'highlighter':
      case 'line':
      case 'arrow':
      case 'rect':
      case 'ellipse': {
        const width = tool === 'highlighter' ? Math.min(64, this.o.width * 3) : this.o.width;
        const stroke: Stroke = {
          id: newId(),
          page,
          tool,
          color: this.o.color,
          width,
          points: SHAPES.has(tool) ? [x, y, x, y] : [x, y],
          sent: 0,
        };
        const timer = window.setInterval(() => this.progress(), PROGRESS_EVERY);
        this.gesture = { kind: 'draw', stroke, timer };
        break;
      }
      case 'text':
        break; // on release
      case 'eraser': {
        this.gesture = { kind: 'erase', ids: new Set(), lastX: fx, lastY: fy };
        this.eraseAt([fx, fy]);
        break;
      }
      case 'select': {
        const hit = topHit(this.shownObjects(), fx, fy, 6 / this.s + 2, (o) => this.mayTouch(o));
        if (hit && this.selection.has(hit.id)) {
          this.gesture = { kind: 'move', x0: fx, y0: fy, dx: 0, dy: 0 };
        } else if (hit) {
          if (!ev.shiftKey) this.selection.clear();
          this.selection.add(hit.id);
          this.onSelection(this.selection.size);
          this.gesture = { kind: 'move', x0: fx, y0: fy, dx: 0, dy: 0 };
        } else {
          if (!ev.shiftKey) this.clearSelection();
          this.gesture = { kind: 'band', x0: fx, y0: fy, x1: fx, y1: fy };
        }
        break;
      }
      case 'laser':
        this.gesture = { kind: 'laser' };
        this.laserAt(fx, fy, true);
        break;
    }
    this.request();
  }

  /** Objects as they show now (moved ones where they were moved to). */
  private *shownObjects(): Generator<BoardObject> {
    for (const o of this.room.board.objects(this.o.page).values()) {
      if (this.pendingErase.has(o.id)) continue;
      const pm = this.pendingMove.get(o.id);
      if (!pm) {
        yield o;
        continue;
      }
      const pts = o.points.slice();
      for (let i = 0; i + 1 < pts.length; i += 2) {
        pts[i] += pm.dx;
        pts[i + 1] += pm.dy;
      }
      yield { ...o, points: pts };
    }
  }

  private move(ev: PointerEvent): void {
    const [fx, fy] = this.toPage(ev);
    this.hover = { x: fx, y: fy };
    const g = this.gesture;
    if (!g) {
      if (this.o.canDraw && this.o.tool === 'laser' && ev.pointerType === 'mouse') this.laserAt(fx, fy, false);
      if (this.o.tool === 'eraser') this.request();
      return;
    }
    const events = typeof ev.getCoalescedEvents === 'function' ? ev.getCoalescedEvents() : [];
    const list = events.length ? events : [ev];
    switch (g.kind) {
      case 'draw': {
        const st = g.stroke;
        if (SHAPES.has(st.tool)) {
          let x = clampX(fx);
          let y = clampY(fy);
          if (ev.shiftKey && (st.tool === 'rect' || st.tool === 'ellipse')) {
            // Shift: a square or a circle.
            const d = Math.max(Math.abs(x - st.points[0]), Math.abs(y - st.points[1]));
            x = clampX(st.points[0] + Math.sign(x - st.points[0] || 1) * d);
            y = clampY(st.points[1] + Math.sign(y - st.points[1] || 1) * d);
          }
          st.points[2] = x;
          st.points[3] = y;
        } else {
          for (const e of list) {
            const [px, py] = this.toPage(e);
            const x = clampX(px);
            const y = clampY(py);
            const n = st.points.length;
            if (Math.abs(x - st.points[n - 2]) + Math.abs(y - st.points[n - 1]) >= 2) st.points.push(x, y);
          }
        }
        break;
      }
      case 'erase': {
        // Sample the way from the last position, so a fast sweep misses nothing.
        const pts: number[] = [];
        for (const e of list) {
          const [px, py] = this.toPage(e);
          const dist = Math.hypot(px - g.lastX, py - g.lastY);
          const steps = Math.max(1, Math.ceil(dist / (ERASER_RADIUS / 2)));
          for (let i = 1; i <= steps; i++) pts.push(g.lastX + ((px - g.lastX) * i) / steps, g.lastY + ((py - g.lastY) * i) / steps);
          g.lastX = px;
          g.lastY = py;
        }
        this.eraseAt(pts);
        break;
      }
      case 'move':
        g.dx = Math.round(fx - g.x0);
        g.dy = Math.round(fy - g.y0);
        break;
      case 'band':
        g.x1 = fx;
        g.y1 = fy;
        break;
      case 'laser':
        this.laserAt(fx, fy, false);
        break;
    }
    this.request();
  }

  private up(ev: PointerEvent): void {
    if (this.o.canDraw && this.o.tool === 'text' && !this.gesture) {
      const [fx, fy] = this.toPage(ev);
      const r = this.canvas.getBoundingClientRect();
      this.onText({
        page: this.o.page,
        x: clampX(fx),
        y: clampY(fy),
        left: ev.clientX - r.left,
        top: ev.clientY - r.top,
        scale: this.s / this.dpr,
      });
      return;
    }
    if (this.gesture?.kind === 'laser') {
      this.gesture = null;
      if (ev.pointerType !== 'mouse') this.laserOff();
      return;
    }
    this.finish();
  }

  /** Marks what the eraser at the points (x, y pairs) touches: one pass over the page. */
  private eraseAt(pts: number[]): void {
    const g = this.gesture;
    if (g?.kind !== 'erase' || pts.length < 2) return;
    const r = ERASER_RADIUS;
    const area: Box = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i + 1 < pts.length; i += 2) {
      area[0] = Math.min(area[0], pts[i] - r);
      area[1] = Math.min(area[1], pts[i + 1] - r);
      area[2] = Math.max(area[2], pts[i] + r);
      area[3] = Math.max(area[3], pts[i + 1] + r);
    }
    for (const o of this.shownObjects()) {
      if (g.ids.has(o.id) || !intersects(bounds(o), area) || !this.mayTouch(o)) continue;
      for (let i = 0; i + 1 < pts.length; i += 2) {
        if (hits(o, pts[i], pts[i + 1], r)) {
          g.ids.add(o.id);
          break;
        }
      }
    }
  }

  /** Sends the new points of the stroke being drawn. */
  private progress(): void {
    const g = this.gesture;
    if (g?.kind !== 'draw') return;
    const st = g.stroke;
    let pts: number[];
    if (SHAPES.has(st.tool)) {
      // The first message has both corners, later ones the moving corner.
      const end = `${st.points[2]},${st.points[3]}`;
      if (st.sent && end === st.sentEnd) return;
      pts = st.sent ? st.points.slice(2, 4) : st.points.slice(0, 4);
      st.sent = 1;
      st.sentEnd = end;
    } else {
      if (st.sent >= st.points.length) return;
      pts = st.points.slice(st.sent);
      st.sent = st.points.length;
    }
    this.room.boardLive({ op: 'progress', id: st.id, page: st.page, tool: st.tool, color: st.color, width: st.width, points: pts });
  }

  private finish(): void {
    const g = this.gesture;
    if (!g) return;
    this.gesture = null;
    const now = performance.now();
    switch (g.kind) {
      case 'draw': {
        clearInterval(g.timer);
        const st = g.stroke;
        if (SHAPES.has(st.tool) && st.points[0] === st.points[2] && st.points[1] === st.points[3]) break;
        this.progress();
        const obj: BoardObject = {
          id: st.id,
          page: st.page,
          tool: st.tool,
          color: st.color,
          width: st.width,
          points: thin(st.points),
          by: this.o.me,
        };
        const ref = this.room.boardOp({
          op: 'add',
          object: { id: obj.id, page: obj.page, tool: obj.tool, color: obj.color, width: obj.width, points: obj.points },
        });
        if (!this.room.board.objects(st.page).has(st.id)) this.pendingAdds.set(obj.id, { obj, ref, at: now });
        break;
      }
      case 'erase':
        if (g.ids.size) this.erase([...g.ids]);
        break;
      case 'move':
        if (g.dx || g.dy) this.moveSelection(g.dx, g.dy);
        break;
      case 'band': {
        const box: Box = [Math.min(g.x0, g.x1), Math.min(g.y0, g.y1), Math.max(g.x0, g.x1), Math.max(g.y0, g.y1)];
        for (const o of this.shownObjects()) if (this.mayTouch(o) && intersects(box, bounds(o))) this.selection.add(o.id);
        this.onSelection(this.selection.size);
        break;
      }
      case 'laser':
        break;
    }
    this.request();
  }

  private cancelGesture(): void {
    const g = this.gesture;
    if (!g) return;
    if (g.kind === 'draw') clearInterval(g.timer);
    this.gesture = null;
    this.request();
  }

  // ---- operations ----

  erase(ids: string[]): void {
    if (!ids.length) return;
    const ref = this.room.boardOp({ op: 'erase', page: this.o.page, ids });
    const at = performance.now();
    for (const id of ids) this.pendingErase.set(id, { ref, at });
    for (const id of ids) this.selection.delete(id);
    this.onSelection(this.selection.size);
    this.request();
  }

  moveSelection(dx: number, dy: number): void {
    const ids = [...this.selection].filter((id) => this.room.board.objects(this.o.page).has(id));
    if (!ids.length || (!dx && !dy)) return;
    const ref = this.room.boardOp({ op: 'move', page: this.o.page, ids, dx, dy });
    const at = performance.now();
    for (const id of ids) {
      const prev = this.pendingMove.get(id);
      this.pendingMove.set(id, { ref, at, dx: dx + (prev?.dx ?? 0), dy: dy + (prev?.dy ?? 0) });
    }
    this.request();
  }

  deleteSelection(): void {
    this.erase([...this.selection]);
  }

  nudge(key: string, big: boolean): boolean {
    if (!this.selection.size) return false;
    const d = big ? NUDGE * 5 : NUDGE;
    const v: Record<string, [number, number]> = {
      ArrowLeft: [-d, 0],
      ArrowRight: [d, 0],
      ArrowUp: [0, -d],
      ArrowDown: [0, d],
    };
    const m = v[key];
    if (!m) return false;
    this.moveSelection(m[0], m[1]);
    return true;
  }

  clearSelection(): void {
    if (this.selection.size === 0) return;
    this.selection.clear();
    this.onSelection(0);
    this.request();
  }

  selectAll(): void {
    for (const o of this.shownObjects()) if (this.mayTouch(o)) this.selection.add(o.id);
    this.onSelection(this.selection.size);
    this.request();
  }

  addText(text: string, x: number, y: number): void {
    const body = text.replace(/\s+$/, '').slice(0, 2000);
    if (!body.trim()) return;
    const size = textSizeFor(this.o.width);
    const obj: BoardObject = {
      id: newId(),
      page: this.o.page,
      tool: 'text',
      color: this.o.color,
      width: Math.max(1, Math.min(64, this.o.width)),
      points: [x, y],
      text: body,
      size,
      by: this.o.me,
    };
    const ref = this.room.boardOp({
      op: 'add',
      object: { id: obj.id, page: obj.page, tool: 'text', color: obj.color, width: obj.width, points: obj.points, text: body, size },
    });
    this.pendingAdds.set(obj.id, { obj, ref, at: performance.now() });
    this.request();
  }

  /** The text size the text tool uses now, in CSS pixels on screen. */
  textSizeOnScreen(): number {
    return (textSizeFor(this.o.width) * this.s) / this.dpr;
  }

  // ---- laser ----

  private laserAt(x: number, y: number, force: boolean): void {
    const now = performance.now();
    const trail = this.ownLaser?.trail ?? [];
    trail.push([x, y, now]);
    while (trail.length > 12) trail.shift();
    this.ownLaser = { x, y, trail };
    if (force || now - this.laserSentAt >= PROGRESS_EVERY) {
      this.laserSentAt = now;
      this.room.boardLive({ op: 'laser', page: this.o.page, x: clampX(x), y: clampY(y) });
    }
    this.request();
  }

  private laserOff(): void {
    if (!this.ownLaser) return;
    this.ownLaser = null;
    this.room.boardLive({ op: 'laser', page: this.o.page, off: true });
    this.request();
  }
}
