import { LANGUAGES, language, rememberLanguage, setLanguage, t } from './i18n';

/** The interface language select (#lang-picker); the pick is remembered. */
export function LanguagePicker() {
  return (
    <div class="lang">
      <label for="lang-picker" class="sr-only">
        {t('app.language')}
      </label>
      <select
        id="lang-picker"
        value={language()}
        onChange={(e) => {
          const tag = e.currentTarget.value;
          rememberLanguage(tag);
          void setLanguage(tag);
        }}
      >
        {LANGUAGES.map((l) => (
          <option key={l.tag} value={l.tag} lang={l.tag}>
            {l.name}
          </option>
        ))}
      </select>
    </div>
  );
}
