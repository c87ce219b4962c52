import { useEffect, useRef } from 'preact/hooks';
import { t } from '../../shared/i18n';
import { CamIcon, HandIcon, MicIcon, ScreenIcon } from '../../shared/icons';
import type { Classroom, RemoteMedia, State } from '../client';
import type { StreamLabel } from '../protocol';

/** Plays a MediaStream; reports when the browser refuses autoplay with sound. */
function Player(props: {
  media: MediaStream;
  kind: 'video' | 'audio';
  muted: boolean;
  id?: string;
  attrs?: Record<string, string>;
  onBlocked?: () => void;
  class?: string;
  label?: string;
}) {
  const ref = useRef<HTMLVideoElement & HTMLAudioElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (el.srcObject !== props.media) el.srcObject = props.media;
    el.muted = props.muted;
    el.play().catch((err: unknown) => {
      if (err instanceof DOMException && err.name === 'NotAllowedError') props.onBlocked?.();
    });
  }, [props.media, props.muted]);
  const common = {
    ref,
    id: props.id,
    class: props.class,
    autoplay: true,
    'aria-label': props.label,
    ...props.attrs,
  };
  return props.kind === 'video' ? <video {...common} playsInline muted={props.muted} /> : <audio {...common} />;
}

function nameOf(s: State, userId: string): string {
  return s.participants[userId]?.name ?? userId;
}

/** Shared screens, large: while someone presents, they lead the page. */
export function Screens({ room, s }: { room: Classroom; s: State }) {
  const screens = s.remote.filter((r) => r.label === 'screen');
  if (screens.length === 0) return null;
  return (
    <section class="screens" aria-labelledby="screens-heading">
      <h2 id="screens-heading" class="sr-only">
        {t('media.screens')}
      </h2>
      <ul class="screen-list">
        {screens.map((r) => {
          const label = t('media.screenOf', { name: nameOf(s, r.userId) });
          return (
            <li key={r.stream} class="tile tile-screen">
              <Player
                media={r.media}
                kind="video"
                muted={false}
                label={label}
                attrs={{ 'data-stream-id': r.stream, 'data-user-id': r.userId, 'data-label': r.label }}
                onBlocked={() => room.setNeedsAudioUnlock(true)}
              />
              <span class="tile-name">{label}</span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** Camera tiles (one's own preview first), plus hidden <audio> players for microphones. */
export function Cameras({ room, s }: { room: Classroom; s: State }) {
  const blocked = () => room.setNeedsAudioUnlock(true);
  const cameras = s.remote.filter((r) => r.label === 'camera');
  const audio = s.remote.filter((r) => r.label === 'mic');
  const order = (r: RemoteMedia) => (s.participants[r.userId]?.role === 'teacher' ? 0 : 1);
  cameras.sort((a, b) => order(a) - order(b));
  const you = s.you;
  const empty = cameras.length === 0 && !s.localCamera && !s.remote.some((r) => r.label === 'screen');
  return (
    <section class="stage" aria-labelledby="stage-heading">
      <h2 id="stage-heading" class="sr-only">
        {t('media.title')}
      </h2>
      {empty ? <p class="stage-empty">{t('media.none')}</p> : null}
      {cameras.length > 0 || s.localCamera ? (
        <ul class="tiles">
          {s.localCamera && you ? (
            <li class="tile tile-local">
              <Player
                media={s.localCamera}
                kind="video"
                muted
                id="local-camera"
                class="mirror"
                label={t('media.yourCamera')}
              />
              <span class="tile-name">{t('media.you', { name: you.name })}</span>
            </li>
          ) : null}
          {cameras.map((r) => {
            const label = t('media.cameraOf', { name: nameOf(s, r.userId) });
            return (
              <li key={r.stream} class="tile">
                <Player
                  media={r.media}
                  kind="video"
                  muted
                  label={label}
                  attrs={{ 'data-stream-id': r.stream, 'data-user-id': r.userId, 'data-label': r.label }}
                  onBlocked={blocked}
                />
                <span class="tile-name">{label}</span>
              </li>
            );
          })}
        </ul>
      ) : null}
      <div class="audio-sinks">
        {audio.map((r) => (
          <Player
            key={r.stream}
            media={r.media}
            kind="audio"
            muted={false}
            label={t('media.micOf', { name: nameOf(s, r.userId) })}
            attrs={{ 'data-stream-id': r.stream, 'data-user-id': r.userId, 'data-label': r.label }}
            onBlocked={blocked}
          />
        ))}
      </div>
    </section>
  );
}

function Toggle(props: {
  id: string;
  on: boolean;
  busy: boolean;
  disabled: boolean;
  label: string;
  icon: (p: { off?: boolean }) => preact.JSX.Element;
  onClick: () => void;
  hint?: string;
}) {
  const Icon = props.icon;
  return (
    <button
      type="button"
      id={props.id}
      class={`ctl ${props.on ? 'ctl-on' : ''}`}
      aria-pressed={props.on ? 'true' : 'false'}
      aria-busy={props.busy ? 'true' : undefined}
      disabled={props.disabled}
      title={props.hint}
      onClick={props.onClick}
    >
      <Icon off={!props.on} />
      <span>{props.label}</span>
    </button>
  );
}

/** The bottom bar: microphone, camera, screen (media layout) and the hand. */
export function Controls({ room, s, media }: { room: Classroom; s: State; media: boolean }) {
  const joined = s.phase === 'joined' && !s.reconnecting;
  const me = s.you ? s.participants[s.you.userId] : undefined;
  const op = s.permissions.includes('op');
  const toggle = (label: StreamLabel) => () => void room.toggle(label);
  const can = (label: StreamLabel) => room.mayPublish(label);
  const noMedia = media && !op && !can('mic') && !can('camera');
  const hand = !!me?.hand;
  return (
    <div class="controls" role="toolbar" aria-label={t('controls.label')}>
      {media ? (
        <>
          <Toggle
            id="toggle-mic"
            on={s.pub.mic !== 'off'}
            busy={s.pub.mic === 'starting'}
            disabled={!joined || !can('mic')}
            label={t('controls.mic')}
            icon={MicIcon}
            hint={can('mic') ? undefined : t('controls.notAllowed')}
            onClick={toggle('mic')}
          />
          <Toggle
            id="toggle-cam"
            on={s.pub.camera !== 'off'}
            busy={s.pub.camera === 'starting'}
            disabled={!joined || !can('camera')}
            label={t('controls.camera')}
            icon={CamIcon}
            hint={can('camera') ? undefined : t('controls.notAllowed')}
            onClick={toggle('camera')}
          />
          <Toggle
            id="toggle-screen"
            on={s.pub.screen !== 'off'}
            busy={s.pub.screen === 'starting'}
            disabled={!joined || !can('screen') || !navigator.mediaDevices?.getDisplayMedia}
            label={t('controls.screen')}
            icon={ScreenIcon}
            hint={can('screen') ? undefined : t('controls.notAllowed')}
            onClick={toggle('screen')}
          />
        </>
      ) : null}
      {!op ? (
        <button
          type="button"
          id="raise-hand"
          class={`ctl ${hand ? 'ctl-on ctl-hand' : ''}`}
          aria-pressed={hand ? 'true' : 'false'}
          disabled={!joined}
          onClick={() => room.setHand(!hand)}
        >
          <HandIcon />
          <span>{t('controls.raiseHand')}</span>
        </button>
      ) : null}
      {noMedia ? <p class="controls-hint">{t('controls.askHint')}</p> : null}
    </div>
  );
}
