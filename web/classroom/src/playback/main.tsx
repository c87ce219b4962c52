// Entry of a recording's playback page (/recordings/{id}/play). The server
// renders the shell with the recording's title, files and event log link
// in #lectern-boot (see replay.ts).
import './playback.css';
import { render } from 'preact';
import { readBoot } from '../shared/boot';
import { onLanguage, preferredLanguage, setLanguage } from '../shared/i18n';
import { PlaybackApp } from './PlaybackApp';
import { Replay, type PlaybackBoot } from './replay';

const root = document.getElementById('app')!;
const boot = readBoot<PlaybackBoot>();
const replay = new Replay(boot);

// Test hooks: the replay's state (window.lectern.replay()).
(window as unknown as { lectern: { replay(): Record<string, unknown> } }).lectern = { replay: () => replay.dump() };

function mark(): void {
  if (root.dataset.state !== replay.phase) root.dataset.state = replay.phase;
}
mark();
replay.subscribe(mark);

const draw = () => render(<PlaybackApp replay={replay} title={boot.title ?? ''} />, root);
onLanguage(draw);
void replay.load();
void setLanguage(preferredLanguage()).finally(draw);
