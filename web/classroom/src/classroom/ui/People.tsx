import type { ComponentChildren } from 'preact';
import { t } from '../../shared/i18n';
import { CamIcon, HandIcon, MicIcon, PenIcon, QualityBars, ScreenIcon } from '../../shared/icons';
import type { Classroom, State } from '../client';
import type { ModerateAction, Participant } from '../protocol';
import { initials } from './format';

function sortPeople(list: Participant[]): Participant[] {
  const rank = (p: Participant) => (p.role === 'teacher' ? 0 : 1);
  return [...list].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name) || a.userId.localeCompare(b.userId));
}

function Status(props: { on: boolean; label: string; tone?: string; children: ComponentChildren }) {
  const { on, label, children } = props;
  return (
    <span class={`status ${on ? 'status-on' : 'status-off'} ${props.tone ?? ''}`} title={label}>
      {children}
      <span class="sr-only">{label}</span>
    </span>
  );
}

export function Quality({ level }: { level: string }) {
  const key = ['good', 'fair', 'poor'].includes(level) ? level : 'unknown';
  const label = t(`quality.${key}`);
  return (
    <span class={`quality quality-${key}`} role="img" aria-label={label} title={label} data-quality={key}>
      <QualityBars level={key} />
    </span>
  );
}

function Actions({ room, s, p }: { room: Classroom; s: State; p: Participant }) {
  const media = s.settings.board === 0;
  const student = p.role !== 'teacher';
  const act = (action: ModerateAction) => () => {
    if (action === 'remove' && !window.confirm(t('people.confirmRemove', { name: p.name }))) return;
    room.moderate(action, p.userId);
  };
  const b = (action: ModerateAction, label: string, danger = false) => (
    <button type="button" class={`mini ${danger ? 'mini-danger' : ''}`} data-action={action} onClick={act(action)}>
      {label}
    </button>
  );
  const mediaAllowed = p.canAudio || p.canVideo;
  return (
    <div class="person-actions" role="group" aria-label={t('people.actionsFor', { name: p.name })}>
      {media && p.audio ? b('mute', t('action.mute')) : null}
      {media && p.video ? b('stop-video', t('action.stopVideo')) : null}
      {p.hand ? b('lower-hand', t('action.lowerHand')) : null}
      {media && student
        ? mediaAllowed
          ? b('revoke-media', t('action.revokeMedia'))
          : b('allow-media', t('action.allowMedia'))
        : null}
      {media && student && (s.settings.screenshare === 1 || p.canScreen)
        ? p.canScreen
          ? b('revoke-screen', t('action.revokeScreen'))
          : b('allow-screen', t('action.allowScreen'))
        : null}
      {student ? (p.canDraw ? b('revoke-draw', t('action.revokeDraw')) : b('allow-draw', t('action.allowDraw'))) : null}
      {student ? b('remove', t('action.remove'), true) : null}
    </div>
  );
}

function Row({ room, s, p, op }: { room: Classroom; s: State; p: Participant; op: boolean }) {
  const isYou = s.you?.userId === p.userId;
  const media = s.settings.board === 0;
  return (
    <li
      class="person"
      data-testid="participant"
      data-user-id={p.userId}
      data-role={p.role}
      data-audio={String(!!p.audio)}
      data-video={String(!!p.video)}
      data-hand={String(!!p.hand)}
      data-speaking={String(!!p.speaking)}
    >
      <div class="person-main">
        <span class={`avatar ${p.role === 'teacher' ? 'avatar-teacher' : ''} ${p.speaking ? 'avatar-speaking' : ''}`} aria-hidden="true">
          {initials(p.name)}
        </span>
        <span class="person-name">
          <span class="name-text">{p.name}</span>
          {p.speaking ? <span class="sr-only"> {t('people.speaking')}</span> : null}
          {isYou ? <span class="you"> {t('people.you')}</span> : null}
          {p.role === 'teacher' ? <span class="badge">{t('role.teacher')}</span> : null}
          {p.devices > 1 ? <span class="devices">{t('people.devices', { count: p.devices })}</span> : null}
        </span>
        <span class="person-status">
          {p.hand ? (
            <Status on label={t('people.handUp')} tone="status-hand">
              <HandIcon />
            </Status>
          ) : null}
          {media ? (
            <>
              {p.screen ? (
                <Status on label={t('people.sharingScreen')}>
                  <ScreenIcon />
                </Status>
              ) : null}
              <Status on={p.video} label={p.video ? t('people.camOn') : t('people.camOff')}>
                <CamIcon off={!p.video} />
              </Status>
              <Status on={p.audio} label={p.audio ? t('people.micOn') : t('people.micOff')}>
                <MicIcon off={!p.audio} />
              </Status>
            </>
          ) : null}
          {p.canDraw && p.role !== 'teacher' ? (
            <Status on label={t('people.canDraw')}>
              <PenIcon />
            </Status>
          ) : null}
          <Quality level={p.quality} />
        </span>
      </div>
      {op && !isYou ? <Actions room={room} s={s} p={p} /> : null}
    </li>
  );
}

export function People({ room, s }: { room: Classroom; s: State }) {
  const op = s.permissions.includes('op');
  const people = sortPeople(Object.values(s.participants));
  const hands = s.hands.filter((id) => s.participants[id]);
  return (
    <section class="panel people" aria-labelledby="people-heading">
      <h2 id="people-heading" class="panel-title">
        {t('people.title', { count: people.length })}
      </h2>
      {op && hands.length > 0 ? (
        <div class="hands" aria-labelledby="hands-heading">
          <h3 id="hands-heading">
            <HandIcon /> {t('hands.title')}
          </h3>
          <ol class="hand-queue" data-testid="hand-queue">
            {hands.map((id) => (
              <li key={id} data-user-id={id}>
                {s.participants[id].name}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
      <ul class="people-list">
        {people.map((p) => (
          <Row key={p.userId} room={room} s={s} p={p} op={op} />
        ))}
      </ul>
    </section>
  );
}
