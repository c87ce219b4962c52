import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { t } from '../../shared/i18n';
import { LanguagePicker } from '../../shared/LanguagePicker';
import type { Classroom, State } from '../client';
import type { Boot } from '../protocol';
import { Board } from './Board';
import { Chat } from './Chat';
import { ErrorLine } from './Errors';
import { Files } from './Files';
import { minutesLeft, timeLeft } from './format';
import { useMedia, useNow } from './hooks';
import { Cameras, Controls, Screens } from './Media';
import { People } from './People';
import { Quiz } from './Quiz';

export function App({ room, boot }: { room: Classroom; boot: Boot }) {
  const [, force] = useState(0);
  useEffect(() => room.subscribe(() => force((n) => n + 1)), [room]);
  const s = room.state;
  useEffect(() => {
    const title = s.klass?.title || boot.title;
    document.title = title ? `${title} · ${t('app.name')}` : t('app.name');
  });

  if (s.phase === 'failed') return <FailScreen s={s} boot={boot} />;
  if (s.phase === 'ended') return <EndScreen s={s} />;
  if (!s.you) return <Connecting s={s} boot={boot} room={room} />;
  return <Room room={room} s={s} boot={boot} />;
}

function CheckLink({ boot }: { boot: Boot }) {
  return (
    <a class="check-link" href={boot.check} target="_blank" rel="noopener">
      {t('app.testSetup')}
      <span class="sr-only"> {t('common.newTab')}</span>
    </a>
  );
}

function Screen(props: { title: string; children?: ComponentChildren; tone?: string }) {
  return (
    <main class={`screen ${props.tone ?? ''}`}>
      <div class="screen-card">
        <p class="brand" aria-hidden="true">
          {t('app.name')}
        </p>
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}

function Connecting({ s, boot, room }: { s: State; boot: Boot; room: Classroom }) {
  return (
    <Screen title={boot.title ? t('connect.joining', { title: boot.title }) : t('connect.title')}>
      <div class="spinner" aria-hidden="true" />
      <p role="status" aria-live="polite">
        {s.retryIn > 0 ? t('connect.retrying', { seconds: s.retryIn }) : t('connect.wait')}
      </p>
      {s.retryIn > 0 ? (
        <p>
          <button type="button" class="btn" onClick={() => room.retryNow()}>
            {t('connect.tryNow')}
          </button>
        </p>
      ) : null}
      <p>
        <CheckLink boot={boot} />
      </p>
    </Screen>
  );
}

const FAIL_CODES = ['full', 'removed', 'ended', 'invalid', 'protocol', 'session-replaced'];

function FailScreen({ s, boot }: { s: State; boot: Boot }) {
  const code = FAIL_CODES.includes(s.failCode) ? s.failCode : 'other';
  return (
    <Screen title={t(`fail.${code}.title`)} tone="screen-fail">
      <p>{t(`fail.${code}.text`)}</p>
      {code === 'other' && s.failMessage ? <p class="muted">{s.failMessage}</p> : null}
      {code === 'protocol' || code === 'session-replaced' || code === 'full' ? (
        <p>
          <button type="button" class="btn btn-primary" onClick={() => location.reload()}>
            {code === 'session-replaced' ? t('fail.rejoin') : t('fail.reload')}
          </button>
        </p>
      ) : null}
      {code === 'full' ? (
        <p>
          <CheckLink boot={boot} />
        </p>
      ) : null}
    </Screen>
  );
}

function EndScreen({ s }: { s: State }) {
  const reason = s.endReason === 'teacher' ? t('ended.teacher') : s.endReason === 'time' ? t('ended.time') : '';
  return (
    <Screen title={t('ended.title')}>
      {reason ? <p>{reason}</p> : null}
      <p class="muted">{t('ended.close')}</p>
    </Screen>
  );
}

function Timer({ s }: { s: State }) {
  const now = useNow(1000);
  const mins = s.endsAt ? minutesLeft(s.endsAt, now) : 99;
  return (
    <div class={`timer ${mins <= 5 ? 'timer-low' : ''}`} role="timer" aria-labelledby="timer-label">
      <span id="timer-label" class="timer-label">
        {t('timer.left')}
      </span>{' '}
      <span id="timer">{timeLeft(s.endsAt, now)}</span>
    </div>
  );
}

function RoomControls({ room, s }: { room: Classroom; s: State }) {
  const joined = !s.reconnecting;
  return (
    <div class="room-controls" role="group" aria-label={t('room.controls')}>
      {s.settings.board === 0 ? (
        <button type="button" id="mute-all" class="btn" disabled={!joined} onClick={() => room.room('mute-all')}>
          {t('room.muteAll')}
        </button>
      ) : null}
      {s.settings.extend === 0 ? (
        <button type="button" id="extend" class="btn" disabled={!joined} onClick={() => room.room('extend')}>
          {t('room.extend')}
        </button>
      ) : null}
      <button
        type="button"
        id="end-class"
        class="btn btn-danger"
        disabled={!joined}
        onClick={() => {
          if (window.confirm(t('room.confirmEnd'))) room.room('end');
        }}
      >
        {t('room.end')}
      </button>
    </div>
  );
}

/** The red dot everyone sees while the class is recorded; a live region, so a stop is announced too. */
function RecordingIndicator({ s }: { s: State }) {
  const was = useRef(s.recording);
  const stopped = was.current && !s.recording;
  useEffect(() => {
    if (s.recording) was.current = true;
  }, [s.recording]);
  return (
    <div class="rec-live" role="status" aria-live="polite">
      {s.recording ? (
        <span id="recording-indicator" class="rec-indicator" data-testid="recording">
          <span class="rec-dot" aria-hidden="true" />
          {t('recording.on')}
        </span>
      ) : stopped ? (
        <span class="sr-only">{t('recording.stopped')}</span>
      ) : null}
    </div>
  );
}

/** The teacher's record button (with the record permission: record modes 1 and 2). */
function RecordToggle({ room, s }: { room: Classroom; s: State }) {
  return (
    <button
      type="button"
      id="record-toggle"
      class={`btn rec-toggle ${s.recording ? 'rec-toggle-on' : ''}`}
      data-recording={s.recording ? 'true' : 'false'}
      disabled={s.reconnecting}
      onClick={() => room.room(s.recording ? 'unrecord' : 'record')}
    >
      <span class="rec-dot" aria-hidden="true" />
      {s.recording ? t('recording.stop') : t('recording.toggle')}
    </button>
  );
}

function Banners({ room, s }: { room: Classroom; s: State }) {
  const now = useNow(5000);
  // The server's ending-soon notice reaches those present 5 minutes before
  // the end; someone who joins later sees the same banner from endsAt.
  const left = s.endsAt ? Date.parse(s.endsAt) - now : NaN;
  const endingSoon = !!s.endingSoon || (left > 0 && left <= 5 * 60_000);
  return (
    <div class="banners">
      {s.reconnecting ? (
        <div class="banner banner-warn" role="status">
          <span>{s.retryIn > 0 ? t('connect.lostRetrying', { seconds: s.retryIn }) : t('connect.reconnecting')}</span>
          {s.retryIn > 0 ? (
            <button type="button" class="btn btn-small" onClick={() => room.retryNow()}>
              {t('connect.tryNow')}
            </button>
          ) : null}
        </div>
      ) : null}
      {s.recording && room.mayPublish('recording') && s.pub.recording === 'off' ? (
        <div class="banner banner-warn" role="status" data-testid="tab-capture-off">
          <span>{t('recording.tabOff')}</span>
          <button type="button" id="capture-tab" class="btn btn-small btn-primary" onClick={() => room.captureTab()}>
            {t('recording.captureTab')}
          </button>
        </div>
      ) : null}
      {endingSoon ? (
        <div class="banner banner-warn" role="alert" data-testid="ending-soon">
          {t('timer.endingSoon', { minutes: minutesLeft(s.endsAt, now) })}
        </div>
      ) : null}
      {s.needsAudioUnlock ? (
        <div class="banner">
          <span>{t('media.soundBlocked')}</span>
          <button
            type="button"
            class="btn btn-small btn-primary"
            onClick={() => {
              document.querySelectorAll<HTMLMediaElement>('audio, video[data-stream-id]').forEach((m) => {
                m.play().catch(() => {});
              });
              room.setNeedsAudioUnlock(false);
            }}
          >
            {t('media.soundOn')}
          </button>
        </div>
      ) : null}
    </div>
  );
}

function noticeText(key: string): string {
  const known = [
    'muted',
    'camera-stopped',
    'media-allowed',
    'media-revoked',
    'screen-allowed',
    'screen-revoked',
    'draw-allowed',
    'draw-revoked',
    'files-allowed',
    'files-revoked',
    'recording-failed',
    'tab-capture-off',
  ];
  return known.includes(key) ? t(`notice.${key}`) : key;
}

function Toasts({ room, s }: { room: Classroom; s: State }) {
  const errors = s.errors.filter((e) => e.where === 'room');
  return (
    <div class="toasts">
      <div role="status" aria-live="polite" class="toast-list">
        {s.toasts.map((n) => (
          <div key={n.id} class="toast" data-testid="notice" data-key={n.key}>
            <span>{noticeText(n.key)}</span>
            <button type="button" class="icon-btn" aria-label={t('common.dismiss')} onClick={() => room.dismissToast(n.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
      {errors.map((e) => (
        <ErrorLine key={e.id} e={e} onDismiss={() => room.dismissError(e.id)} />
      ))}
    </div>
  );
}

function Room({ room, s, boot }: { room: Classroom; s: State; boot: Boot }) {
  const narrow = useMedia('(max-width: 899px)');
  const [tab, setTab] = useState<'people' | 'chat'>('people');
  const [seen, setSeen] = useState(s.chat.length);
  const board = s.settings.board;
  const media = board === 0;
  const chat = board !== 1;
  const op = s.permissions.includes('op');
  const tabs = narrow && chat;
  const presenting = media && s.remote.some((r) => r.label === 'screen');
  // The main visual (a shared screen, else the board), then the controls,
  // then the cameras: nothing is ever drawn over a video. Keyed, so the
  // board keeps its state when a screen share moves it down.
  const boardArea = <Board key="board" room={room} s={s} />;
  const controls = media || !op ? <Controls key="controls" room={room} s={s} media={media} /> : null;
  const work = presenting
    ? [<Screens key="screens" room={room} s={s} />, controls, boardArea]
    : [boardArea, controls];
  // The quiz comes first: while one is open it is what the class is doing.
  work.unshift(<Quiz key="quiz" room={room} s={s} />);
  if (media) work.push(<Cameras key="cameras" room={room} s={s} />);
  work.push(<Files key="files" room={room} s={s} />);
  const showPeople = !tabs || tab === 'people';
  const showChat = chat && (!tabs || tab === 'chat');
  useEffect(() => {
    if (showChat) setSeen(s.chat.length);
  }, [showChat, s.chat.length]);
  const unread = showChat ? 0 : Math.max(0, s.chat.length - seen);
  const title = s.klass?.title || boot.title || '';
  const selectTab = (v: 'people' | 'chat') => {
    setTab(v);
    requestAnimationFrame(() => document.getElementById(`tab-${v}`)?.focus());
  };
  return (
    <div class={`room layout-${board} ${tabs ? 'with-tabs' : ''}`}>
      <a class="skip" href={chat ? '#chat-input' : '#people-heading'}>
        {chat ? t('app.skipToChat') : t('app.skipToPeople')}
      </a>
      <header class="topbar">
        <div class="topbar-title">
          <span class="brand-mark" aria-hidden="true">
            L
          </span>
          <h1>{title || t('app.name')}</h1>
          <RecordingIndicator s={s} />
        </div>
        <Timer s={s} />
        <div class="topbar-tools">
          <CheckLink boot={boot} />
          {s.lang ? null : <LanguagePicker />}
          {s.permissions.includes('record') ? <RecordToggle room={room} s={s} /> : null}
          {op ? <RoomControls room={room} s={s} /> : null}
        </div>
      </header>
      <Banners room={room} s={s} />
      <div class="main">
        <div class="work">
          {work}
        </div>
        <aside class="side" aria-label={t('app.sidebar')}>
          {tabs ? (
            <div class="tabs" role="tablist" aria-label={t('app.sidebar')}>
              {(['people', 'chat'] as const).map((v) => (
                <button
                  type="button"
                  role="tab"
                  id={`tab-${v}`}
                  aria-selected={tab === v ? 'true' : 'false'}
                  aria-controls={`panel-${v}`}
                  tabIndex={tab === v ? 0 : -1}
                  class="tab"
                  onClick={() => setTab(v)}
                  onKeyDown={(e) => {
                    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
                      e.preventDefault();
                      selectTab(v === 'people' ? 'chat' : 'people');
                    }
                  }}
                >
                  {v === 'people'
                    ? t('people.title', { count: Object.keys(s.participants).length })
                    : t('chat.title')}
                  {v === 'chat' && unread > 0 ? (
                    <span class="unread">
                      {unread}
                      <span class="sr-only"> {t('chat.unread')}</span>
                    </span>
                  ) : null}
                </button>
              ))}
            </div>
          ) : null}
          <div
            id="panel-people"
            class="side-panel"
            role={tabs ? 'tabpanel' : undefined}
            aria-labelledby={tabs ? 'tab-people' : undefined}
            hidden={!showPeople}
          >
            <People room={room} s={s} />
          </div>
          {chat ? (
            <div
              id="panel-chat"
              class="side-panel side-chat"
              role={tabs ? 'tabpanel' : undefined}
              aria-labelledby={tabs ? 'tab-chat' : undefined}
              hidden={!showChat}
            >
              <Chat room={room} s={s} />
            </div>
          ) : null}
        </aside>
      </div>
      <Toasts room={room} s={s} />
    </div>
  );
}
