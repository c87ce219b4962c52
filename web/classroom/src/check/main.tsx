// Entry of the pre-class check page (/classroom/check). The server renders
// the shell with {"ice": "...", "offer": "..."} in #lectern-boot.
import './check.css';
import { render } from 'preact';
import { readBoot } from '../shared/boot';
import { onLanguage, preferredLanguage, setLanguage, t } from '../shared/i18n';
import { CheckApp } from './CheckApp';
import type { CheckBoot } from './run';

const root = document.getElementById('app')!;
const boot = readBoot<CheckBoot>();
const draw = () => {
  document.title = `${t('check.title')} · ${t('app.name')}`;
  render(<CheckApp boot={boot} />, root);
};
onLanguage(draw);
void setLanguage(preferredLanguage()).finally(draw);
