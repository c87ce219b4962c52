import { language } from '../../shared/i18n';

/** h:mm:ss or m:ss until `endsAt` (an RFC 3339 time), never negative. */
export function timeLeft(endsAt: string, now: number): string {
  const end = Date.parse(endsAt);
  if (!endsAt || Number.isNaN(end)) return '--:--';
  let s = Math.max(0, Math.floor((end - now) / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** Minutes left, rounded up. */
export function minutesLeft(endsAt: string, now: number): number {
  const end = Date.parse(endsAt);
  if (Number.isNaN(end)) return 0;
  return Math.max(0, Math.ceil((end - now) / 60000));
}

const clocks = new Map<string, Intl.DateTimeFormat>();

/** The local clock time of an RFC 3339 time, in the interface language. */
export function clockTime(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return '';
  const lang = language();
  let f = clocks.get(lang);
  if (!f) {
    f = new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit' });
    clocks.set(lang, f);
  }
  return f.format(d);
}

export function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const first = [...(parts[0] ?? '?')][0] ?? '?';
  const last = parts.length > 1 ? [...parts[parts.length - 1]][0] : '';
  return (first + (last ?? '')).toUpperCase();
}
