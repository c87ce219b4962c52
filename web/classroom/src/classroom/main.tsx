// Entry of the live classroom page. The server renders the shell (see
// internal/classroom/webdist) with the boot JSON in #lectern-boot.
import './classroom.css';
import { render } from 'preact';
import { readBoot } from '../shared/boot';
import { onLanguage, preferredLanguage, setLanguage } from '../shared/i18n';
import { Classroom } from './client';
import type { Boot } from './protocol';
import { boardStats } from './board/view';
import { App } from './ui/App';

declare global {
  interface Window {
    lectern: {
      pcs(): ReturnType<Classroom['pcList']>;
      state(): Record<string, unknown>;
      board(): { page: string; pages: Record<string, Array<Record<string, unknown>>> };
      presentation(): { file: number | string; page: number; zoom: number; pages: number } | null;
      boardStats(): typeof boardStats;
    };
  }
}

const root = document.getElementById('app')!;
const boot = readBoot<Boot>();
const room = new Classroom(boot);

window.lectern = {
  pcs: () => room.pcList(),
  state: () => {
    const s = room.state;
    return JSON.parse(
      JSON.stringify({
        seq: s.seq,
        conn: s.conn,
        you: s.you,
        permissions: s.permissions,
        participants: Object.values(s.participants),
        chat: s.chat,
      }),
    );
  },
  // The page shown (a presentation's annotation page while one is open)
  // and every page's objects as the server sent them.
  board: () => {
    const p = room.state.presentation;
    return room.board.dump(p ? `pdf:${p.file}:${p.page}` : room.state.boardPage) as unknown as {
      page: string;
      pages: Record<string, Array<Record<string, unknown>>>;
    };
  },
  boardStats: () => ({ ...boardStats }),
  presentation: () => {
    const p = room.state.presentation;
    return p ? { file: p.file, page: p.page, zoom: p.zoom, pages: p.pages } : null;
  },
};

function mark(): void {
  const s = room.state;
  const state = s.phase === 'joined' && s.reconnecting ? 'connecting' : s.phase;
  if (root.dataset.state !== state) root.dataset.state = state;
  if (s.phase === 'failed') root.dataset.failCode = s.failCode;
  else delete root.dataset.failCode;
}
mark();
room.subscribe(mark);

let forced = '';
room.onWelcome = (w) => {
  const lang = w.lang ?? '';
  if (lang && lang !== forced) void setLanguage(lang);
  else if (!lang && forced) void setLanguage(preferredLanguage());
  forced = lang;
};

const draw = () => render(<App room={room} boot={boot} />, root);
onLanguage(draw);
room.start();
void setLanguage(preferredLanguage()).finally(draw);
