import { useLayoutEffect, useRef } from 'preact/hooks';
import { t } from '../../shared/i18n';
import type { ChatMessage } from '../protocol';
import { clockTime } from './format';

/**
 * The chat's messages (a log region under #chat-heading), kept scrolled to
 * the newest unless the reader scrolled up. The live room's chat and a
 * recording's replay show the same list.
 */
export function ChatLog({ chat, me, nameOf }: { chat: ChatMessage[]; me: string; nameOf: (id: string) => string }) {
  const log = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const newest = chat.length ? chat[chat.length - 1] : null;
  useLayoutEffect(() => {
    const el = log.current;
    // One's own new message scrolls down again.
    if (newest && me && newest.from === me) stick.current = true;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [chat.length, newest?.id]);
  return (
    <div
      class="messages"
      ref={log}
      role="log"
      aria-live="polite"
      aria-relevant="additions"
      aria-labelledby="chat-heading"
      tabIndex={0}
      onScroll={(e) => {
        const el = e.currentTarget;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      <ol class="message-list">
        {chat.length === 0 ? <li class="messages-empty">{t('chat.empty')}</li> : null}
        {chat.map((m) => {
          const mine = !!me && m.from === me;
          const priv = !!m.to;
          const toText = priv ? (m.to === me ? t('chat.toYou') : t('chat.toName', { name: nameOf(m.to) || m.to })) : '';
          return (
            <li
              key={m.id}
              class={`message ${mine ? 'message-mine' : ''} ${priv ? 'message-private' : ''}`}
              data-testid="chat-message"
              data-from={m.from}
              data-to={m.to}
            >
              <div class="message-meta">
                <span class="message-from">{mine ? t('chat.you') : m.fromName}</span>
                {priv ? <span class="message-private-tag">{toText}</span> : null}
                <time dateTime={m.at}>{clockTime(m.at)}</time>
              </div>
              <p class="text">{m.text}</p>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
