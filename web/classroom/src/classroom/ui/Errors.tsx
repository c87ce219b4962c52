import { language, t } from '../../shared/i18n';
import type { UiError } from '../client';

const KNOWN = new Set(['forbidden', 'invalid', 'too-long', 'rate-limited', 'not-found']);
// Problems found here, not by the server.
const DEVICE = new Set(['device-denied', 'device-missing', 'device-busy', 'device-failed', 'media-failed', 'export-failed']);

/** A sentence for an error, in the interface language. */
export function errorText(e: UiError): string {
  if (e.where === 'chat' && !(e.message && language() === 'en')) {
    if (e.code === 'forbidden') return e.context === 'private' ? t('error.chat.private') : t('error.chat.forbidden');
    if (e.code === 'too-long') return t('error.chat.tooLong', { max: '2000' });
    if (e.code === 'rate-limited') return t('error.chat.rateLimited');
  }
  // The server explains a refused action in English: more precise than
  // the generic text, so English readers get it as is.
  if (e.message && language() === 'en' && !DEVICE.has(e.code)) {
    return e.context === 'camera' || e.context === 'mic' || e.context === 'screen'
      ? `${t(`error.publish.${e.context}`)} ${e.message}`
      : e.message;
  }
  const reason = KNOWN.has(e.code) || DEVICE.has(e.code) ? t(`error.${e.code}`) : t('error.other');
  if (e.context === 'camera' || e.context === 'mic' || e.context === 'screen') {
    return `${t(`error.publish.${e.context}`)} ${reason}`;
  }
  return reason;
}

export function ErrorLine({ e, onDismiss }: { e: UiError; onDismiss: () => void }) {
  return (
    <div class="error" role="alert" data-testid="error" data-code={e.code}>
      <span class="error-text">{errorText(e)}</span>
      <button type="button" class="icon-btn" onClick={onDismiss} aria-label={t('common.dismiss')}>
        ×
      </button>
    </div>
  );
}
