// Watched ranges: the seconds of a video or audio that were actually
// played, as merged [start, end] intervals in media seconds. Only playback
// counts: a seek (or any jump larger than the time that passed allows)
// starts a new interval instead of filling the gap, so dragging the
// scrubber to the end covers nothing.

export type Range = [number, number];

/** Adds [a, b] to sorted, disjoint ranges and merges what touches. */
export function addRange(ranges: Range[], a: number, b: number): Range[] {
  if (!(b > a)) return ranges;
  const out: Range[] = [];
  let cur: Range = [a, b];
  let placed = false;
  for (const r of ranges) {
    if (r[1] < cur[0]) {
      out.push(r);
    } else if (r[0] > cur[1]) {
      if (!placed) {
        out.push(cur);
        placed = true;
      }
      out.push(r);
    } else {
      cur = [Math.min(r[0], cur[0]), Math.max(r[1], cur[1])];
    }
  }
  if (!placed) out.push(cur);
  return out;
}

/** Seconds covered by ranges. */
export function covered(ranges: Range[]): number {
  return ranges.reduce((s, r) => s + (r[1] - r[0]), 0);
}

/**
 * The ranges as whole seconds for the server: each interval's start rounded
 * down and its end rounded up, capped at the duration, merged again.
 */
export function wholeSeconds(ranges: Range[], duration: number): Array<[number, number]> {
  let out: Range[] = [];
  const cap = Number.isFinite(duration) && duration > 0 ? Math.ceil(duration) : Infinity;
  for (const [a, b] of ranges) out = addRange(out, Math.floor(a), Math.min(Math.ceil(b), cap));
  return out as Array<[number, number]>;
}

/**
 * Tracker follows one media element. A step from the last seen time to the
 * current one counts as played when the element is playing, no seek
 * happened in between, and the step is no larger than the wall-clock time
 * since the last step allows at the current playback rate (with slack for
 * timer jitter).
 */
export class Tracker {
  ranges: Range[] = [];
  private last: number | null = null;
  private lastWall = 0;
  changed = false;

  constructor(private readonly el: HTMLMediaElement) {
    const reset = () => {
      this.last = null;
    };
    el.addEventListener('seeking', reset);
    el.addEventListener('emptied', reset);
    el.addEventListener('pause', () => this.step());
    el.addEventListener('play', () => {
      this.last = el.currentTime;
      this.lastWall = performance.now();
    });
    el.addEventListener('timeupdate', () => this.step());
    el.addEventListener('ended', () => {
      this.step();
      this.last = null;
    });
  }

  private step(): void {
    const el = this.el;
    const now = performance.now();
    const t = el.currentTime;
    if (el.seeking) {
      this.last = null;
      return;
    }
    if (this.last !== null) {
      const d = t - this.last;
      const allowed = ((now - this.lastWall) / 1000) * Math.max(el.playbackRate, 0.1) * 1.5 + 0.5;
      if (d > 0 && d <= allowed) {
        this.ranges = addRange(this.ranges, this.last, t);
        this.changed = true;
      }
    }
    this.last = el.paused ? null : t;
    this.lastWall = now;
  }
}
