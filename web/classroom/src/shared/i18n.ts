// Interface strings. The catalogues live in internal/classroom/i18n (the Go
// side embeds the same files): flat key -> string maps with {name}
// placeholders. English is bundled; every other catalogue is its own small
// chunk, loaded when chosen.
import en from '@i18n/en.json';

export type Catalogue = Record<string, string>;

/** Tags with a complete catalogue, each with its own name for the picker. */
export const LANGUAGES: ReadonlyArray<{ tag: string; name: string }> = [
  { tag: 'ar', name: 'العربية' },
  { tag: 'de', name: 'Deutsch' },
  { tag: 'en', name: 'English' },
  { tag: 'es', name: 'Español' },
  { tag: 'fr', name: 'Français' },
  { tag: 'hi', name: 'हिन्दी' },
  { tag: 'it', name: 'Italiano' },
  { tag: 'ja', name: '日本語' },
  { tag: 'ko', name: '한국어' },
  { tag: 'nl', name: 'Nederlands' },
  { tag: 'pt', name: 'Português' },
  { tag: 'ru', name: 'Русский' },
  { tag: 'tr', name: 'Türkçe' },
  { tag: 'zh', name: '中文（简体）' },
];

const RTL = new Set(['ar']);
const STORAGE_KEY = 'lectern.lang';

const loaders = import.meta.glob<Catalogue>(['@i18n/*.json', '!@i18n/en.json'], { import: 'default' });

function loaderFor(tag: string): (() => Promise<Catalogue>) | undefined {
  for (const [path, load] of Object.entries(loaders)) {
    if (path.endsWith(`/${tag}.json`)) return load;
  }
  return undefined;
}

let current: Catalogue = en;
let currentTag = 'en';
const listeners = new Set<() => void>();

/** Maps any BCP 47 tag to one of LANGUAGES' tags, or '' when none fits. */
export function supported(tag: string | null | undefined): string {
  if (!tag) return '';
  const primary = tag.toLowerCase().split(/[-_]/)[0];
  return LANGUAGES.some((l) => l.tag === primary) ? primary : '';
}

/** The user's own choice: a saved pick, else the browser's languages, else English. */
export function preferredLanguage(): string {
  try {
    const saved = supported(localStorage.getItem(STORAGE_KEY));
    if (saved) return saved;
  } catch {
    /* storage may be blocked */
  }
  for (const l of navigator.languages ?? [navigator.language]) {
    const s = supported(l);
    if (s) return s;
  }
  return 'en';
}

export function rememberLanguage(tag: string): void {
  try {
    localStorage.setItem(STORAGE_KEY, tag);
  } catch {
    /* storage may be blocked */
  }
}

/** Loads and applies a language: catalogue, <html lang> and dir. */
let generation = 0;

export async function setLanguage(tag: string): Promise<void> {
  const mine = ++generation;
  const want = supported(tag) || 'en';
  let cat: Catalogue = en;
  if (want !== 'en') {
    const load = loaderFor(want);
    try {
      if (load) cat = await load();
    } catch {
      cat = en;
    }
  }
  if (mine !== generation) return; // a later choice won
  current = cat;
  currentTag = cat === en ? 'en' : want;
  document.documentElement.lang = currentTag;
  document.documentElement.dir = RTL.has(currentTag) ? 'rtl' : 'ltr';
  listeners.forEach((f) => f());
}

export function language(): string {
  return currentTag;
}

export function onLanguage(f: () => void): () => void {
  listeners.add(f);
  return () => listeners.delete(f);
}

/** The string for key in the current language, {name} placeholders filled. */
export function t(key: string, params?: Record<string, string | number>): string {
  let s = current[key] ?? (en as Catalogue)[key] ?? key;
  if (params) {
    s = s.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
  }
  return s;
}
