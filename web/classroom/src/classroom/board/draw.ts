// Drawing board objects on a 2D canvas (in page coordinates: the caller
// sets the transform), their bounds, and hit tests for the eraser and the
// selection. Finished pen strokes keep their outline as a Path2D, so a
// full redraw of a page with many strokes only fills cached paths.
import { getStroke } from 'perfect-freehand';
import type { BoardObject, Tool } from './model';

export interface Drawable {
  tool: Tool;
  color: string;
  width: number;
  points: number[];
  text?: string;
  size?: number;
}

export const HIGHLIGHT_ALPHA = 0.35;
export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", Arial, sans-serif';
const LINE_HEIGHT = 1.25;

// Caches kept on the stored objects themselves, as hidden properties: a
// property read is much cheaper than a WeakMap lookup, and hidden ones are
// neither serialised nor copied by a spread (a move makes a new object).
const PATH = Symbol('path');
const BOX = Symbol('box');

type Cached = { [PATH]?: Path2D; [BOX]?: Box };

function remember<K extends typeof PATH | typeof BOX>(d: object, key: K, value: Cached[K]): void {
  Object.defineProperty(d, key, { value, enumerable: false, configurable: true });
}

/** [minX, minY, maxX, maxY] in page coordinates. */
export type Box = [number, number, number, number];

function pairs(points: number[]): number[][] {
  const out: number[][] = [];
  for (let i = 0; i + 1 < points.length; i += 2) out.push([points[i], points[i + 1]]);
  return out;
}

/** The filled outline of a pen stroke, smoothed by perfect-freehand. */
function penOutline(d: Drawable, last: boolean): Path2D {
  const outline = getStroke(pairs(d.points), {
    size: d.width * 1.6,
    thinning: 0.5,
    smoothing: 0.5,
    streamline: 0.3,
    simulatePressure: true,
    last,
  });
  const p = new Path2D();
  const n = outline.length;
  if (n < 2) return p;
  p.moveTo(outline[0][0], outline[0][1]);
  for (let i = 0; i < n; i++) {
    const a = outline[i];
    const b = outline[(i + 1) % n];
    p.quadraticCurveTo(a[0], a[1], (a[0] + b[0]) / 2, (a[1] + b[1]) / 2);
  }
  p.closePath();
  return p;
}

function polyline(points: number[]): Path2D {
  const p = new Path2D();
  if (points.length < 2) return p;
  p.moveTo(points[0], points[1]);
  if (points.length === 2) p.lineTo(points[0] + 0.01, points[1]);
  for (let i = 2; i + 1 < points.length; i += 2) p.lineTo(points[i], points[i + 1]);
  return p;
}

function corners(d: Drawable): [number, number, number, number] {
  const p = d.points;
  const x0 = p[0] ?? 0;
  const y0 = p[1] ?? 0;
  return [x0, y0, p[p.length - 2] ?? x0, p[p.length - 1] ?? y0];
}

export function textLines(d: Drawable): string[] {
  return (d.text ?? '').split('\n');
}

export function textSize(d: Drawable): number {
  return Math.min(200, Math.max(8, d.size ?? 32));
}

/**
 * Draws one object. finished=true caches the pen outline on the object
 * (stored objects never change in place: a move makes a new object).
 */
export function drawObject(ctx: CanvasRenderingContext2D, d: Drawable, finished = true): void {
  ctx.fillStyle = d.color;
  ctx.strokeStyle = d.color;
  ctx.lineWidth = d.width;
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  switch (d.tool) {
    case 'pen': {
      let p = finished ? (d as Cached)[PATH] : undefined;
      if (!p) {
        p = penOutline(d, finished);
        if (finished) remember(d, PATH, p);
      }
      ctx.fill(p);
      return;
    }
    case 'highlighter': {
      let p = finished ? (d as Cached)[PATH] : undefined;
      if (!p) {
        p = polyline(d.points);
        if (finished) remember(d, PATH, p);
      }
      ctx.save();
      ctx.globalAlpha = HIGHLIGHT_ALPHA;
      ctx.stroke(p);
      ctx.restore();
      return;
    }
    case 'line':
    case 'arrow': {
      const [x0, y0, x1, y1] = corners(d);
      const len = Math.hypot(x1 - x0, y1 - y0);
      if (d.tool === 'arrow' && len > 0.5) {
        const head = Math.min(len, Math.max(12, d.width * 3.5));
        const ux = (x1 - x0) / len;
        const uy = (y1 - y0) / len;
        const bx = x1 - ux * head;
        const by = y1 - uy * head;
        const half = head * 0.55;
        ctx.beginPath();
        ctx.moveTo(x0, y0);
        ctx.lineTo(x1 - ux * head * 0.6, y1 - uy * head * 0.6);
        ctx.stroke();
        ctx.beginPath();
        ctx.moveTo(x1, y1);
        ctx.lineTo(bx - uy * half, by + ux * half);
        ctx.lineTo(bx + uy * half, by - ux * half);
        ctx.closePath();
        ctx.fill();
        return;
      }
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1 + (len < 0.5 ? 0.01 : 0), y1);
      ctx.stroke();
      return;
    }
    case 'rect': {
      const [x0, y0, x1, y1] = corners(d);
      ctx.strokeRect(Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0));
      return;
    }
    case 'ellipse': {
      const [x0, y0, x1, y1] = corners(d);
      ctx.beginPath();
      ctx.ellipse((x0 + x1) / 2, (y0 + y1) / 2, Math.abs(x1 - x0) / 2, Math.abs(y1 - y0) / 2, 0, 0, Math.PI * 2);
      ctx.stroke();
      return;
    }
    case 'text': {
      const size = textSize(d);
      ctx.font = `${size}px ${FONT}`;
      ctx.textBaseline = 'top';
      const lines = textLines(d);
      const x = d.points[0] ?? 0;
      const y = d.points[1] ?? 0;
      for (let i = 0; i < lines.length; i++) ctx.fillText(lines[i], x, y + i * size * LINE_HEIGHT);
      return;
    }
  }
}

let measurer: CanvasRenderingContext2D | null = null;

function measure(text: string, size: number): number {
  measurer ??= document.createElement('canvas').getContext('2d');
  if (!measurer) return text.length * size * 0.6;
  measurer.font = `${size}px ${FONT}`;
  return measurer.measureText(text).width;
}

/** The box an object covers, stroke width included. */
export function bounds(d: Drawable): Box {
  const cached = (d as Cached)[BOX];
  if (cached) return cached;
  let b: Box;
  if (d.tool === 'text') {
    const size = textSize(d);
    const lines = textLines(d);
    const w = Math.max(size * 0.5, ...lines.map((l) => measure(l, size)));
    const x = d.points[0] ?? 0;
    const y = d.points[1] ?? 0;
    b = [x, y, x + w, y + lines.length * size * LINE_HEIGHT];
  } else {
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    const p = d.points;
    for (let i = 0; i + 1 < p.length; i += 2) {
      if (p[i] < x0) x0 = p[i];
      if (p[i] > x1) x1 = p[i];
      if (p[i + 1] < y0) y0 = p[i + 1];
      if (p[i + 1] > y1) y1 = p[i + 1];
    }
    if (x0 === Infinity) x0 = y0 = x1 = y1 = 0;
    const pad = d.tool === 'arrow' ? Math.max(12, d.width * 3.5) : d.width;
    b = [x0 - pad, y0 - pad, x1 + pad, y1 + pad];
  }
  remember(d, BOX, b);
  return b;
}

function segDist(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const l2 = dx * dx + dy * dy;
  let t = l2 ? ((px - ax) * dx + (py - ay) * dy) / l2 : 0;
  t = Math.max(0, Math.min(1, t));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/** Whether a circle of radius r at (x, y) touches the object. */
export function hits(d: Drawable, x: number, y: number, r: number): boolean {
  const b = bounds(d);
  if (x < b[0] - r || x > b[2] + r || y < b[1] - r || y > b[3] + r) return false;
  const tol = r + d.width / 2 + 2;
  const p = d.points;
  switch (d.tool) {
    case 'pen':
    case 'highlighter': {
      if (p.length <= 2) return Math.hypot(x - p[0], y - p[1]) <= tol;
      for (let i = 0; i + 3 < p.length; i += 2) {
        if (segDist(x, y, p[i], p[i + 1], p[i + 2], p[i + 3]) <= tol) return true;
      }
      return false;
    }
    case 'line':
    case 'arrow': {
      const [x0, y0, x1, y1] = corners(d);
      return segDist(x, y, x0, y0, x1, y1) <= tol;
    }
    case 'rect': {
      const [x0, y0, x1, y1] = corners(d);
      return (
        segDist(x, y, x0, y0, x1, y0) <= tol ||
        segDist(x, y, x1, y0, x1, y1) <= tol ||
        segDist(x, y, x1, y1, x0, y1) <= tol ||
        segDist(x, y, x0, y1, x0, y0) <= tol
      );
    }
    case 'ellipse': {
      const [x0, y0, x1, y1] = corners(d);
      const rx = Math.max(1, Math.abs(x1 - x0) / 2);
      const ry = Math.max(1, Math.abs(y1 - y0) / 2);
      const nx = (x - (x0 + x1) / 2) / rx;
      const ny = (y - (y0 + y1) / 2) / ry;
      return Math.abs(Math.hypot(nx, ny) - 1) * Math.min(rx, ry) <= tol;
    }
    case 'text':
      return x >= b[0] - r && x <= b[2] + r && y >= b[1] - r && y <= b[3] + r;
  }
  return false;
}

export function intersects(a: Box, b: Box): boolean {
  return a[0] <= b[2] && a[2] >= b[0] && a[1] <= b[3] && a[3] >= b[1];
}

/** The topmost object of list (drawing order) under (x, y), or undefined. */
export function topHit(list: Iterable<BoardObject>, x: number, y: number, r: number, ok: (o: BoardObject) => boolean): BoardObject | undefined {
  let found: BoardObject | undefined;
  for (const o of list) if (ok(o) && hits(o, x, y, r)) found = o;
  return found;
}
