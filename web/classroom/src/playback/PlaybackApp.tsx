import type { RefObject } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { language, t } from '../shared/i18n';
import { LanguagePicker } from '../shared/LanguagePicker';
import { BoardView } from '../classroom/board/view';
import { ChatLog } from '../classroom/ui/ChatLog';
import { usePresentationPage } from '../classroom/ui/presentationView';
import { SPEEDS, type Chapter, type PlaybackFile, type Replay } from './replay';

/** m:ss or h:mm:ss of ms. */
export function clock(ms: number): string {
  let s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

function speedText(v: number): string {
  return `${new Intl.NumberFormat(language(), { maximumFractionDigits: 2 }).format(v)}×`;
}

function isTyping(el: EventTarget | null): boolean {
  const n = el as HTMLElement | null;
  return !!n && (n.tagName === 'INPUT' || n.tagName === 'TEXTAREA' || n.tagName === 'SELECT' || n.isContentEditable);
}

export function PlaybackApp({ replay, title }: { replay: Replay; title: string }) {
  const [, force] = useState(0);
  useEffect(() => replay.subscribe(() => force((n) => n + 1)), [replay]);
  useEffect(() => {
    document.title = `${title || t('playback.title')} · ${t('app.name')}`;
  });
  // Space plays and pauses, anywhere but in a control that takes it.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== ' ' || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      const tag = (e.target as HTMLElement | null)?.tagName;
      if (tag === 'BUTTON' || tag === 'A') return;
      e.preventDefault();
      replay.toggle();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [replay]);

  const media = replay.files;
  const withLog = replay.hasBoard || replay.hasChat;
  return (
    <div class={`playback ${withLog ? '' : 'playback-media-only'}`}>
      <header class="topbar">
        <div class="topbar-title">
          <span class="brand-mark" aria-hidden="true">
            L
          </span>
          <h1>{title || t('playback.title')}</h1>
        </div>
        <div class="topbar-tools">
          <LanguagePicker />
        </div>
      </header>
      {replay.phase === 'loading' ? (
        <main class="screen">
          <div class="spinner" aria-hidden="true" />
          <p role="status">{t('playback.loading')}</p>
        </main>
      ) : replay.phase === 'error' ? (
        <main class="screen">
          <p class="error" role="alert">
            {t('playback.error')}
          </p>
        </main>
      ) : (
        <main class="pb-main">
          {replay.eventsFailed ? (
            <p class="banner banner-warn" role="alert">
              {t('playback.eventsError')}
            </p>
          ) : null}
          <div class={`pb-stage ${media.length && replay.hasBoard ? 'pb-stage-videos' : ''}`}>
            {media.length ? <Videos replay={replay} files={media} big={!replay.hasBoard} /> : null}
            {replay.hasBoard ? <ReplayBoard replay={replay} /> : null}
          </div>
          <Controls replay={replay} />
          {withLog ? (
            <aside class="pb-side" aria-label={t('playback.side')}>
              <Chapters replay={replay} />
              <section class="panel chat pb-chat" aria-labelledby="chat-heading">
                <h2 id="chat-heading" class="panel-title">
                  {t('chat.title')}
                </h2>
                <ChatLog chat={replay.chat()} me="" nameOf={(id) => replay.nameOf(id)} />
              </section>
            </aside>
          ) : null}
        </main>
      )}
    </div>
  );
}

function Controls({ replay }: { replay: Replay }) {
  const total = replay.duration;
  return (
    <div class="pb-controls" role="group" aria-label={t('playback.controls')}>
      <button
        type="button"
        id="play-toggle"
        class="btn btn-primary pb-play"
        aria-pressed={replay.playing ? 'true' : 'false'}
        aria-label={replay.playing ? t('playback.pause') : t('playback.play')}
        onClick={() => replay.toggle()}
      >
        {replay.playing ? <PauseGlyph /> : <PlayGlyph />}
      </button>
      <label for="seek" class="sr-only">
        {t('playback.seek')}
      </label>
      <div class="pb-timeline">
        {/* step "any": the thumb reaches the very end; the keys step by seconds (onKeyDown). */}
        <input
          type="range"
          id="seek"
          class="pb-seek"
          min={0}
          max={Math.max(1, total)}
          step="any"
          value={replay.t}
          aria-valuetext={t('playback.timeOf', { time: clock(replay.t), total: clock(total) })}
          onInput={(e) => replay.seek(Number(e.currentTarget.value))}
          onKeyDown={(e) => {
            const by: Record<string, number> = { ArrowLeft: -5000, ArrowDown: -5000, ArrowRight: 5000, ArrowUp: 5000, PageDown: -30000, PageUp: 30000 };
            let to: number | null = null;
            if (e.key in by) to = replay.t + by[e.key];
            else if (e.key === 'Home') to = 0;
            else if (e.key === 'End') to = total;
            if (to === null) return;
            e.preventDefault();
            replay.seek(Math.min(total, Math.max(0, to)));
          }}
        />
        <Speech replay={replay} total={total} />
      </div>
      <span class="pb-time" aria-hidden="true">
        <span id="time">{clock(replay.t)}</span> / {clock(total)}
      </span>
      <SpeakingNow replay={replay} />
      <label class="pb-speed">
        <span class="sr-only">{t('playback.speed')}</span>
        <select id="speed" value={String(replay.speed)} onChange={(e) => replay.setSpeed(Number(e.currentTarget.value))}>
          {SPEEDS.map((v) => (
            <option key={v} value={String(v)}>
              {speedText(v)}
            </option>
          ))}
        </select>
      </label>
      {replay.buffering ? (
        <span class="pb-buffering" role="status">
          {t('playback.buffering')}
        </span>
      ) : null}
    </div>
  );
}

/** Who speaks when: a band under the seek bar, one mark per stretch of speech. */
function Speech({ replay, total }: { replay: Replay; total: number }) {
  if (!replay.speech.length || total <= 0) return null;
  const users = [...new Set(replay.speech.map((s) => s.userId))];
  return (
    <div class="pb-speech" aria-hidden="true">
      {replay.speech.map((s, i) => (
        <span
          key={i}
          class="pb-speech-mark"
          data-user-id={s.userId}
          title={replay.nameOf(s.userId)}
          style={{
            left: `${(100 * s.from) / total}%`,
            width: `${Math.max(0.3, (100 * (s.to - s.from)) / total)}%`,
            background: SPEAKER_COLORS[users.indexOf(s.userId) % SPEAKER_COLORS.length],
          }}
        />
      ))}
    </div>
  );
}

const SPEAKER_COLORS = ['#16a34a', '#7c3aed', '#ea580c', '#0891b2', '#db2777'];

/** Who is speaking at the clock's time, by name. */
function SpeakingNow({ replay }: { replay: Replay }) {
  const names = replay.speaking().map((id) => replay.nameOf(id) || id);
  return (
    <span id="speaking-now" class="pb-speaking" data-count={names.length}>
      {names.length ? (
        <>
          <span class="pb-speaking-dot" aria-hidden="true" />
          {t('playback.speaking')}: {names.join(', ')}
        </>
      ) : null}
    </span>
  );
}

function PlayGlyph() {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
      <path d="M8 5v14l11-7z" fill="currentColor" />
    </svg>
  );
}

function PauseGlyph() {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
      <path d="M7 5h4v14H7zM13 5h4v14h-4z" fill="currentColor" />
    </svg>
  );
}

function chapterText(c: Chapter): string {
  if (c.kind === 'start') return t('playback.chapter.start');
  if (c.kind === 'board') return t('playback.chapter.board', { page: c.page });
  return c.name ? t('playback.chapter.slideOf', { name: c.name, page: c.page }) : t('playback.chapter.slide', { page: c.page });
}

function Chapters({ replay }: { replay: Replay }) {
  const list = replay.chapters;
  let current = 0;
  list.forEach((c, i) => {
    if (c.t <= replay.t) current = i;
  });
  return (
    <nav class="panel pb-chapters" aria-labelledby="chapters-heading">
      <h2 id="chapters-heading" class="panel-title">
        {t('playback.chapters')}
      </h2>
      <ol id="chapters" class="pb-chapter-list">
        {list.map((c, i) => (
          <li key={`${c.t}-${i}`}>
            <button
              type="button"
              class={`pb-chapter ${i === current ? 'is-current' : ''}`}
              aria-current={i === current ? 'true' : undefined}
              data-t={c.t}
              data-kind={c.kind}
              onClick={() => replay.seek(c.t)}
            >
              <span class="pb-chapter-time">{clock(c.t)}</span>
              <span class="pb-chapter-name">{chapterText(c)}</span>
            </button>
          </li>
        ))}
      </ol>
    </nav>
  );
}

/** The board as it was at the clock's time: the live room's view, read-only. */
function ReplayBoard({ replay }: { replay: Replay }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const presCanvas = useRef<HTMLCanvasElement>(null);
  const viewRef = useRef<BoardView | null>(null);
  const pres = replay.presentation();
  const page = replay.page();
  const opts = {
    tool: 'pen' as const,
    color: '#000000',
    width: 6,
    canDraw: false,
    teacher: false,
    me: '',
    page,
    zoom: pres ? pres.zoom || 1 : 1,
    presenting: !!pres,
  };
  useLayoutEffect(() => {
    if (!canvas.current) return;
    const view = new BoardView(replay, canvas.current, presCanvas.current, opts);
    viewRef.current = view;
    return () => {
      view.destroy();
      viewRef.current = null;
    };
  }, [replay]);
  useLayoutEffect(() => {
    viewRef.current?.set(opts);
  });
  const [presState, docPages] = usePresentationPage(viewRef, pres);
  const pages = pres?.pages || docPages;
  return (
    <section class={`board pb-board ${pres ? 'board-presenting' : ''}`} aria-labelledby="board-heading">
      <div class="section-head board-head">
        <h2 id="board-heading">{pres ? t('pres.title') : t('board.title')}</h2>
        <span class="pres-page-label">
          {pres ? (
            <>
              <span class="sr-only">{t('pres.page')} </span>
              <span id="pres-page">
                {pres.page} / {pages || '?'}
              </span>
            </>
          ) : (
            t('playback.chapter.board', { page: /^p(\d+)$/.exec(page)?.[1] ?? '1' })
          )}
          <span id="board-page" class="sr-only">
            {page}
          </span>
        </span>
      </div>
      <div class="board-frame">
        <canvas id="pres-canvas" ref={presCanvas} aria-hidden="true" hidden={!pres} />
        <canvas id="board" ref={canvas} role="img" aria-label={t('board.label')} data-page={page} />
        {pres && presState !== 'ready' ? (
          <div class={`board-note ${presState === 'error' ? 'board-note-error' : ''}`} role="status">
            {presState === 'error' ? t('pres.error') : t('pres.loading')}
          </div>
        ) : null}
      </div>
    </section>
  );
}

function fileName(replay: Replay, f: PlaybackFile): string {
  const name = replay.nameOf(f.userId);
  if (!name) return f.label === 'screen' || f.label === 'recording' ? t('media.screens') : '';
  if (f.label === 'screen') return t('media.screenOf', { name });
  if (f.label === 'recording') return t('media.tabOf', { name });
  if (f.label === 'mic') return t('media.micOf', { name });
  return t('media.cameraOf', { name });
}

function Videos({ replay, files, big }: { replay: Replay; files: PlaybackFile[]; big: boolean }) {
  const videos = files.filter((f) => f.type.startsWith('video/') || f.width > 0 || !f.type.startsWith('audio/'));
  const audios = files.filter((f) => !videos.includes(f));
  const active = videos.filter((f) => replay.mediaTime(f) !== null);
  return (
    <section class={`pb-videos ${big ? 'pb-videos-big' : ''}`} aria-label={t('media.title')}>
      <ul class="tiles">
        {videos.map((f, i) => (
          <MediaTile key={`${f.url}-${i}`} replay={replay} file={f} video shown={active.includes(f)} />
        ))}
      </ul>
      {active.length === 0 && videos.length > 0 ? <p class="pb-no-video">{t('playback.noVideo')}</p> : null}
      <div class="audio-sinks">
        {audios.map((f, i) => (
          <MediaTile key={`${f.url}-${i}`} replay={replay} file={f} video={false} shown={false} />
        ))}
      </div>
    </section>
  );
}

function MediaTile({ replay, file, video, shown }: { replay: Replay; file: PlaybackFile; video: boolean; shown: boolean }) {
  const speaking = video && replay.speaking().includes(file.userId);
  const ref = useRef<HTMLMediaElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    return replay.attach(file, el);
  }, [replay, file]);
  const failed = ref.current ? replay.mediaFailed(ref.current) : false;
  const label = fileName(replay, file);
  const props = {
    src: file.url,
    preload: 'auto' as const,
    'data-user-id': file.userId,
    'data-label': file.label,
    'data-start': file.startMs,
  };
  if (!video) return <audio ref={ref as RefObject<HTMLAudioElement>} {...props} />;
  return (
    <li class={`tile ${file.label === 'screen' || file.label === 'recording' ? 'tile-screen' : ''} ${speaking ? 'tile-speaking' : ''}`} hidden={!shown} data-speaking={String(speaking)}>
      <video ref={ref as RefObject<HTMLVideoElement>} playsInline {...props} />
      {label ? <span class="tile-name">{label}</span> : null}
      {failed ? <span class="pb-media-error">{t('playback.mediaError')}</span> : null}
    </li>
  );
}
