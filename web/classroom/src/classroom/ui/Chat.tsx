import { useEffect, useState } from 'preact/hooks';
import { t } from '../../shared/i18n';
import type { Classroom, State } from '../client';
import { ChatLog } from './ChatLog';
import { ErrorLine } from './Errors';

const MAX = 2000;

export function Chat({ room, s }: { room: Classroom; s: State }) {
  const [text, setText] = useState('');
  const [to, setTo] = useState('');
  const me = s.you;
  const op = s.permissions.includes('op');
  const canChat = s.permissions.includes('chat');
  // chat:private lets one message anyone privately; without it (a student
  // when isPrivateChat is 1) private messages may go to a teacher only.
  const teacherOnly = !s.permissions.includes('chat:private') && !op;
  const recipients = Object.values(s.participants)
    .filter((p) => p.userId !== me?.userId && (!teacherOnly || p.role === 'teacher'))
    .sort((a, b) => a.name.localeCompare(b.name));

  // A recipient who left (or is no longer allowed) falls back to everyone.
  useEffect(() => {
    if (to && !recipients.some((p) => p.userId === to)) setTo('');
  });

  const joined = s.phase === 'joined' && !s.reconnecting;
  const submit = (e: Event) => {
    e.preventDefault();
    if (room.sendChat(text, to)) {
      setText('');
    }
  };
  const nameOf = (id: string) => s.participants[id]?.name ?? '';
  const errors = s.errors.filter((x) => x.where === 'chat');
  return (
    <section class="panel chat" aria-labelledby="chat-heading">
      <h2 id="chat-heading" class="panel-title">
        {t('chat.title')}
      </h2>
      <ChatLog chat={s.chat} me={me?.userId ?? ''} nameOf={nameOf} />
      <div class="chat-errors">
        {errors.map((e) => (
          <ErrorLine key={e.id} e={e} onDismiss={() => room.dismissError(e.id)} />
        ))}
      </div>
      {canChat ? (
        <form class="chat-form" onSubmit={submit}>
          {recipients.length > 0 || to ? (
            <div class="chat-to">
              <label for="chat-to">{t('chat.to')}</label>
              <select id="chat-to" value={to} onChange={(e) => setTo(e.currentTarget.value)}>
                <option value="">{t('chat.everyone')}</option>
                {recipients.map((p) => (
                  <option key={p.userId} value={p.userId}>
                    {p.role === 'teacher' ? t('chat.teacherName', { name: p.name }) : p.name}
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          <div class="chat-compose">
            <label for="chat-input" class="sr-only">
              {t('chat.message')}
            </label>
            <textarea
              id="chat-input"
              rows={2}
              maxLength={MAX}
              value={text}
              placeholder={to ? t('chat.placeholderPrivate', { name: nameOf(to) }) : t('chat.placeholder')}
              onInput={(e) => setText(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
              }}
            />
            <button type="submit" id="chat-send" class="btn btn-primary" disabled={!joined || !text.trim()}>
              {t('chat.send')}
            </button>
          </div>
          {text.length > MAX - 200 ? (
            <p class="chat-count" aria-live="polite">
              {t('chat.charsLeft', { count: MAX - text.length })}
            </p>
          ) : null}
        </form>
      ) : (
        <p class="chat-off">{t('chat.off')}</p>
      )}
    </section>
  );
}
