// The learner portal's lesson player: progressive enhancement of the pages
// the server renders (they work without it).
//
//   - [data-learn-media]: a lesson's <video> or <audio>. Reports the
//     seconds actually played (Tracker) and the position every few seconds
//     and when the page is hidden, resumes at the stored position, and
//     shows the server's answer (percent played, lesson complete).
//   - time[datetime][data-format]: dates shown in the reader's own time
//     zone, in the page's language.
//   - [data-copy]: buttons that copy a link.
import './learn.css';
import { Tracker, wholeSeconds } from './ranges';

const REPORT_EVERY_MS = 5000;

function fill(s: string, params: Record<string, string | number>): string {
  return s.replace(/\{(\w+)\}/g, (m, k: string) => (k in params ? String(params[k]) : m));
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

interface Progress {
  lesson_done: boolean;
  lesson_percent: number;
  course_percent: number;
  course_done: boolean;
}

function media(box: HTMLElement): void {
  const el = box.querySelector<HTMLMediaElement>('video, audio');
  if (!el) return;
  const url = box.dataset.report ?? '';
  const csrf = box.dataset.csrf ?? '';
  const status = box.querySelector<HTMLElement>('[data-status]');
  const watched = box.querySelector<HTMLElement>('[data-watched]');
  const say = (text: string) => {
    if (status) status.textContent = text;
  };
  const tracker = new Tracker(el);
  let lastPosition = -1;
  let inFlight = false;

  const start = Number(box.dataset.position ?? '0');
  const resume = () => {
    if (start > 0 && Number.isFinite(el.duration) && start < el.duration - 2) {
      el.currentTime = start;
      say(fill(box.dataset.sResumed ?? '', { time: clock(start) }));
    }
  };
  if (el.readyState >= HTMLMediaElement.HAVE_METADATA) resume();
  else el.addEventListener('loadedmetadata', resume, { once: true });

  const body = () =>
    JSON.stringify({ ranges: wholeSeconds(tracker.ranges, el.duration), position: Math.floor(el.currentTime) });

  const shown = (p: Progress) => {
    if (watched) watched.textContent = fill(box.dataset.sWatched ?? '', { percent: p.lesson_percent });
    for (const bar of document.querySelectorAll<HTMLProgressElement>('progress[data-course-progress]')) bar.value = p.course_percent;
    for (const n of document.querySelectorAll<HTMLElement>('[data-course-percent]')) {
      n.textContent = fill(n.dataset.sProgress ?? '', { percent: p.course_percent });
    }
    if (p.lesson_done) {
      document.body.dataset.lessonDone = 'true';
      for (const n of document.querySelectorAll<HTMLElement>('[data-when-done]')) n.hidden = false;
      for (const n of document.querySelectorAll<HTMLElement>('[data-until-done]')) n.hidden = true;
      // The outline's row of this lesson: done, as the server renders it.
      const row = document.querySelector<HTMLElement>(`[data-testid="outline-lesson"][data-lesson-id="${box.dataset.lesson}"]`);
      const mark = row?.querySelector<HTMLElement>('.mark');
      if (row && mark) {
        row.dataset.state = 'done';
        mark.className = 'mark mark-done';
        mark.textContent = '✓';
        const sr = mark.nextElementSibling;
        if (sr?.classList.contains('sr-only')) sr.textContent = `${box.dataset.sDone ?? ''}: `;
      }
    }
  };

  // Nothing is reported before the first play: a page left before its
  // metadata loaded (or before it resumed) must not move the stored
  // position back to 0.
  let engaged = false;
  el.addEventListener('play', () => {
    engaged = true;
  });

  const report = async (final = false) => {
    if (!engaged) return;
    const position = Math.floor(el.currentTime);
    if (!tracker.changed && position === lastPosition) return;
    if (inFlight && !final) return;
    const sending = tracker.changed;
    tracker.changed = false;
    lastPosition = position;
    inFlight = true;
    try {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
        body: body(),
        credentials: 'same-origin',
        keepalive: final,
      });
      if (!r.ok) throw new Error(String(r.status));
      const p = (await r.json()) as { data: Progress };
      shown(p.data);
      box.dataset.reported = String(Date.now());
      if (sending) say(box.dataset.sSaved ?? '');
    } catch {
      tracker.changed = tracker.changed || sending;
      lastPosition = -1;
      if (!final) say(box.dataset.sOffline ?? '');
    } finally {
      inFlight = false;
    }
  };

  setInterval(() => void report(), REPORT_EVERY_MS);
  el.addEventListener('pause', () => void report());
  el.addEventListener('ended', () => void report());
  addEventListener('pagehide', () => void report(true));
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') void report(true);
  });
  // For tests and the curious: what has been played so far.
  (window as unknown as { lectern?: object }).lectern = { watched: () => tracker.ranges.map((r) => [...r]) };
}

function dates(): void {
  const lang = document.documentElement.lang || 'en';
  for (const el of document.querySelectorAll<HTMLTimeElement>('time[datetime][data-format]')) {
    const d = new Date(el.dateTime);
    if (Number.isNaN(d.getTime())) continue;
    const opts: Intl.DateTimeFormatOptions =
      el.dataset.format === 'date' ? { dateStyle: 'long' } : { dateStyle: 'medium', timeStyle: 'short' };
    try {
      el.textContent = new Intl.DateTimeFormat(lang, opts).format(d);
    } catch {
      /* keep the server's text */
    }
  }
}

function copyButtons(): void {
  for (const b of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
    b.hidden = false;
    b.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(b.dataset.copy ?? '');
        const out = b.parentElement?.querySelector<HTMLElement>('[data-copied]');
        if (out) out.textContent = b.dataset.sCopied ?? '';
      } catch {
        /* the link stays visible to copy by hand */
      }
    });
  }
}

for (const box of document.querySelectorAll<HTMLElement>('[data-learn-media]')) media(box);
dates();
copyButtons();
