// Message shapes of docs/classroom-protocol.md (version 1) and
// docs/classroom-whiteboard.md (board, presentations, shared files).
import type { BoardEvent, BoardLive, BoardSnapshot } from './board/model';

export const PROTOCOL = 1;

export interface Boot {
  session: string;
  ws: string;
  check: string;
  protocol: number;
  title?: string;
  userName?: string;
  role?: string;
}

export type Quality = 'good' | 'fair' | 'poor' | 'unknown';

export interface Participant {
  userId: string;
  name: string;
  role: string;
  devices: number;
  audio: boolean;
  video: boolean;
  screen: boolean;
  hand: boolean;
  canAudio: boolean;
  canVideo: boolean;
  canScreen: boolean;
  canDraw: boolean;
  quality: Quality;
  /** The sound of one of the participant's streams is voice (from its audio level). */
  speaking?: boolean;
}

export interface ChatMessage {
  id: number;
  from: string;
  fromName: string;
  to: string;
  text: string;
  at: string;
}

/** recording: the teacher's capture of the classroom tab (isRecordingLayout 1), recorded and never forwarded. */
export type StreamLabel = 'camera' | 'mic' | 'screen' | 'recording';

export interface StreamInfo {
  id: string;
  userId: string;
  label: StreamLabel | string;
}

export interface Settings {
  board: number;
  corporate: number;
  screenshare: number;
  privateChat: number;
  lang: number;
  record: number;
  extend: number;
  seats: number;
}

export interface You {
  userId: string;
  name: string;
  role: string;
}

export interface ClassInfo {
  id: number;
  title: string;
  sitting: number;
  startsAt: string;
  endsAt: string;
}

/** A shared file. status is absent (ready), or 'converting', 'ready', 'failed' for office documents. */
export interface SharedFile {
  id: number | string;
  name: string;
  size: number;
  type: string;
  kind: 'file' | 'presentation' | string;
  by: string;
  byName: string;
  at: string;
  url: string;
  status?: 'converting' | 'ready' | 'failed' | string;
  error?: string;
  pages?: number;
}

/** The open presentation: a shared PDF, its page (from 1) and zoom. */
export interface Presentation {
  file: number | string;
  page: number;
  zoom: number;
  pages: number;
  url: string;
}

/** A choice, item or matching side of a quiz question (display ids). */
export interface QuizOption {
  id: string;
  text: string;
}

/** A question of an in-class quiz as students see it: no key. */
export interface QuizQuestion {
  slot: number;
  type: string;
  text_md: string;
  points: number;
  choices?: QuizOption[];
  blanks?: { options?: string[] }[];
  lefts?: QuizOption[];
  rights?: QuizOption[];
  items?: QuizOption[];
  max_words?: number;
}

/** One question's anonymous counts: answered, fully right, per choice. */
export interface QuizSlotCount {
  slot: number;
  answered: number;
  right: number;
  options?: Record<string, number>;
}

export interface QuizAggregate {
  participants: number;
  slots: QuizSlotCount[];
}

/** The in-class quiz: questions while open, the aggregate once closed. */
export interface QuizState {
  /** When it was launched: tells one launch from the next. */
  launchedAt: string;
  testId: number;
  open: boolean;
  questions: QuizQuestion[];
  deadline?: string;
  aggregate?: QuizAggregate;
}

/** A test attached to the class (teachers' snapshot): "" for a question drawn at launch. */
export interface ClassTest {
  id: number;
  name: string;
  questions: string[];
}

/** A student's answer (docs/tests.md, response shapes). */
export interface QuizResponse {
  choice?: string;
  choices?: string[];
  bool?: boolean;
  text?: string;
  value?: string;
  blanks?: string[];
  matches?: Record<string, string>;
  order?: string[];
}

export interface Snapshot {
  participants: Participant[];
  chat: ChatMessage[];
  hands: string[];
  streams: StreamInfo[];
  board?: BoardSnapshot | null;
  presentation?: Presentation | null;
  files?: SharedFile[] | null;
  /** Whether the class is being recorded. */
  recording?: boolean;
  quiz?: QuizState | null;
  quizTests?: ClassTest[] | null;
  /** This student's saved answers to the open quiz. */
  quizMine?: { slot: number; response: QuizResponse; seq: number }[] | null;
}

export interface Welcome {
  type: 'welcome';
  protocol: number;
  conn: string;
  seq: number;
  resumed: boolean;
  you: You;
  permissions: string[];
  settings: Settings;
  lang: string;
  class: ClassInfo;
  endsAt: string;
  /** The server's clock when it sent the welcome. */
  now?: string;
  ice?: RTCConfiguration;
  snapshot: Snapshot | null;
}

export interface Fail {
  type: 'fail';
  code: string;
  message?: string;
}

export type RoomEvent =
  | { type: 'event'; seq: number; kind: 'join' | 'update'; participant: Participant }
  | { type: 'event'; seq: number; kind: 'leave'; userId: string }
  | { type: 'event'; seq: number; kind: 'chat'; message: ChatMessage }
  | { type: 'event'; seq: number; kind: 'hands'; hands: string[] }
  | { type: 'event'; seq: number; kind: 'timer'; endsAt: string }
  | { type: 'event'; seq: number; kind: 'stream'; stream: StreamInfo }
  | { type: 'event'; seq: number; kind: 'unstream'; id: string }
  | { type: 'event'; seq: number; kind: 'ended'; reason: string }
  | ({ type: 'event'; seq: number; kind: 'board' } & BoardEvent)
  | { type: 'event'; seq: number; kind: 'presentation'; presentation: Presentation | null }
  | { type: 'event'; seq: number; kind: 'file'; file: SharedFile }
  | { type: 'event'; seq: number; kind: 'recording'; recording: boolean; reason?: 'teacher' | 'failed' | 'ended' | string }
  | { type: 'event'; seq: number; kind: 'speaking'; userId: string; speaking: boolean }
  | { type: 'event'; seq: number; kind: 'quiz'; quiz: QuizState };

export interface Notice {
  type: 'notice';
  key: string;
  by?: string;
  endsAt?: string;
}

export interface ServerError {
  type: 'error';
  ref?: number;
  code: string;
  message?: string;
}

export interface Rtc {
  type: 'rtc';
  kind: 'offer' | 'answer' | 'ice' | 'close';
  stream: string;
  userId?: string;
  label?: string;
  sdp?: string;
  candidate?: RTCIceCandidateInit;
}

export type ServerMessage =
  | Welcome
  | Fail
  | RoomEvent
  | Notice
  | ServerError
  | Rtc
  | ({ type: 'board-live' } & BoardLive)
  | { type: 'quiz-answered'; ref?: number; slot: number; seq: number; saved: boolean }
  | { type: 'quiz-tally'; aggregate: QuizAggregate }
  | { type: 'pong' };

/** Moderation actions a teacher may take on one participant. */
export type ModerateAction =
  | 'mute'
  | 'stop-video'
  | 'allow-media'
  | 'revoke-media'
  | 'allow-screen'
  | 'revoke-screen'
  | 'allow-draw'
  | 'revoke-draw'
  | 'lower-hand'
  | 'remove';

export type RoomAction =
  | 'mute-all'
  | 'extend'
  | 'end'
  | 'allow-draw-all'
  | 'revoke-draw-all'
  | 'allow-files-all'
  | 'revoke-files-all'
  | 'record'
  | 'unrecord';
