// The classroom client: one WebSocket speaking protocol v1
// (docs/classroom-protocol.md), the room state it keeps, and the WebRTC
// peer connections (one per stream; the sender offers).
import {
  PROTOCOL,
  type Boot,
  type ChatMessage,
  type ClassInfo,
  type ClassTest,
  type ModerateAction,
  type Participant,
  type Presentation,
  type QuizAggregate,
  type QuizResponse,
  type QuizState,
  type RoomAction,
  type RoomEvent,
  type Rtc,
  type ServerMessage,
  type Settings,
  type SharedFile,
  type StreamInfo,
  type StreamLabel,
  type Welcome,
  type You,
} from './protocol';
import { BoardModel, isBlankPage, type BoardLive } from './board/model';
import { openPdf } from './board/pdf';
import { QualityMeter } from './quality';

export type Phase = 'connecting' | 'joined' | 'failed' | 'ended';
export type PubState = 'off' | 'starting' | 'on';

export interface UiError {
  id: number;
  code: string;
  message: string;
  /** Where it shows: under the chat box, or as a room toast. */
  where: 'chat' | 'room';
  /** What failed, for a precise text: 'private' chat, a media label, a moderation action. */
  context?: string;
}

export interface Toast {
  id: number;
  key: string;
  by?: string;
}

export interface RemoteMedia {
  stream: string;
  userId: string;
  label: string;
  media: MediaStream;
}

export interface State {
  phase: Phase;
  /** The socket dropped after a welcome and the client is reconnecting. */
  reconnecting: boolean;
  /** Seconds until the next connection attempt while the server cannot be reached, else 0. */
  retryIn: number;
  failCode: string;
  failMessage: string;
  endReason: string;
  conn: string;
  seq: number;
  you: You | null;
  permissions: string[];
  settings: Settings;
  lang: string;
  klass: ClassInfo | null;
  endsAt: string;
  participants: Record<string, Participant>;
  chat: ChatMessage[];
  hands: string[];
  streams: Record<string, StreamInfo>;
  toasts: Toast[];
  errors: UiError[];
  endingSoon: string;
  pub: Record<StreamLabel, PubState>;
  localCamera: MediaStream | null;
  remote: RemoteMedia[];
  /** Autoplay with sound was refused; a click must start playback. */
  needsAudioUnlock: boolean;
  /** The blank board page the teacher shows (the objects live in Classroom.board). */
  boardPage: string;
  /** Blank pages known (p1, p2, ...), in order. */
  boardPages: string[];
  presentation: Presentation | null;
  files: SharedFile[];
  /** What this teacher last did with room allow-draw-all / revoke-draw-all (the room does not tell). */
  drawAll: boolean;
  /** Likewise for allow-files-all / revoke-files-all. */
  filesAll: boolean;
  /** The class is being recorded (everyone sees it). */
  recording: boolean;
  /** The in-class quiz launched in this sitting (deadline in this machine's clock). */
  quiz: QuizState | null;
  /** Teachers: the tests attached to the class. */
  quizTests: ClassTest[];
  /** Teachers: the open quiz's aggregate so far. */
  quizTally: QuizAggregate | null;
  /** This student's answers to the open quiz, by slot. */
  quizAnswers: Record<number, QuizAnswer>;
}

/** A student's answer to one quiz question and whether the server has it. */
export interface QuizAnswer {
  response: QuizResponse;
  seq: number;
  status: 'saving' | 'saved' | 'failed';
  /** The server's reason when it refused the answer. */
  error?: string;
}

export interface PcInfo {
  stream: string;
  label: string;
  direction: 'send' | 'recv';
  userId: string;
  pc: RTCPeerConnection;
}

interface PcEntry extends PcInfo {
  media: MediaStream;
  remoteSet: boolean;
  pendingIce: RTCIceCandidateInit[];
}

type RefContext =
  | { kind: 'chat'; to: string; text: string }
  | { kind: 'rtc-offer'; stream: string; label: StreamLabel }
  | { kind: 'rtc-close' }
  | { kind: 'moderate'; action: string; userId: string }
  | { kind: 'room'; action: string }
  | { kind: 'board'; op: string }
  | { kind: 'presentation'; action: string }
  | { kind: 'quiz'; action: string; slot?: number; seq?: number }
  | { kind: 'other' };

const DEFAULT_SETTINGS: Settings = {
  board: 0,
  corporate: 0,
  screenshare: 0,
  privateChat: 0,
  lang: 0,
  record: 0,
  extend: 1,
  seats: 0,
};

/**
 * The capture of the classroom tab (isRecordingLayout 1): the browser
 * offers this tab first (preferCurrentTab), picture only (every voice is
 * recorded from its microphone).
 */
const TAB_CAPTURE = {
  video: { displaySurface: 'browser', frameRate: { ideal: 15 } },
  audio: false,
  preferCurrentTab: true,
  selfBrowserSurface: 'include',
  surfaceSwitching: 'exclude',
} as DisplayMediaStreamOptions;

const CHAT_KEEP = 500;
const PING_EVERY = 10_000;
const QUALITY_EVERY = 5_000;
/** Without any message for this long, the socket is taken as dead. */
const SILENCE_LIMIT = 20_000;
const HELLO_TIMEOUT = 15_000;

const SHORT: Record<StreamLabel, string> = { camera: 'cam', mic: 'mic', screen: 'screen', recording: 'tab' };
const PERMISSION: Record<StreamLabel, string> = { camera: 'video', mic: 'audio', screen: 'screen', recording: 'record:tab' };

export class Classroom {
  state: State = {
    phase: 'connecting',
    reconnecting: false,
    retryIn: 0,
    failCode: '',
    failMessage: '',
    endReason: '',
    conn: '',
    seq: 0,
    you: null,
    permissions: [],
    settings: DEFAULT_SETTINGS,
    lang: '',
    klass: null,
    endsAt: '',
    participants: {},
    chat: [],
    hands: [],
    streams: {},
    toasts: [],
    errors: [],
    endingSoon: '',
    pub: { camera: 'off', mic: 'off', screen: 'off', recording: 'off' },
    localCamera: null,
    remote: [],
    needsAudioUnlock: false,
    boardPage: 'p1',
    boardPages: ['p1'],
    presentation: null,
    files: [],
    drawAll: false,
    filesAll: false,
    recording: false,
    quiz: null,
    quizTests: [],
    quizTally: null,
    quizAnswers: {},
  };

  /** The whiteboard's objects and live strokes (kept out of state: pages may be large). */
  readonly board = new BoardModel();
  /** Told when the server refuses a board operation this client sent (by its ref). */
  onBoardRefused: (ref: number) => void = () => {};
  /** Stored board operations sent while the socket was down, sent after the next welcome. */
  private boardOutbox: Array<Record<string, unknown>> = [];

  /** Called after a welcome, with the forced language ('' when the user chooses). */
  onWelcome: (w: Welcome) => void = () => {};

  private ws: WebSocket | null = null;
  private welcomed = false;
  private terminal = false;
  private attempt = 0;
  private retryTimer = 0;
  private countdownTimer = 0;
  private pingTimer = 0;
  private qualityTimer = 0;
  private helloTimer = 0;
  private lastHeard = 0;
  private pingSentAt = 0;
  private wsRtt = -1;
  private nextRef = 1;
  private refs = new Map<number, RefContext>();
  private nextId = 1;
  private streamCounter = 0;
  private pcs = new Map<string, PcEntry>();
  private sending: Partial<Record<StreamLabel, PcEntry>> = {};
  /** Labels that were on when a non-resumed welcome replaced the connection. */
  private republish: StreamLabel[] = [];
  private meter = new QualityMeter();
  private ice: RTCConfiguration | undefined;
  private listeners = new Set<() => void>();
  private emitQueued = false;

  constructor(private boot: Boot) {}

  // ---- state plumbing ----

  subscribe(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  private set(patch: Partial<State>): void {
    this.state = { ...this.state, ...patch };
    if (!this.emitQueued) {
      this.emitQueued = true;
      queueMicrotask(() => {
        this.emitQueued = false;
        this.listeners.forEach((f) => f());
      });
    }
  }

  can(permission: string): boolean {
    return this.state.permissions.includes(permission);
  }

  pcList(): PcInfo[] {
    return [...this.pcs.values()].map(({ stream, label, direction, userId, pc }) => ({
      stream,
      label,
      direction,
      userId,
      pc,
    }));
  }

  // ---- connection ----

  start(): void {
    window.addEventListener('online', () => {
      if (!this.ws && !this.terminal) this.connectNow();
    });
    window.addEventListener('offline', () => {
      // The socket may linger for a while on a dead network: drop it now.
      const ws = this.ws;
      if (ws && !this.terminal) {
        ws.close();
        this.dropped();
      }
    });
    window.addEventListener('pagehide', () => this.shutdown());
    // Back from the back/forward cache, the connection is gone: start over.
    window.addEventListener('pageshow', (ev) => {
      if (ev.persisted) location.reload();
    });
    this.connect();
  }

  private wsURL(): string {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}${this.boot.ws}`;
  }

  private connectNow(): void {
    clearTimeout(this.retryTimer);
    clearInterval(this.countdownTimer);
    this.connect();
  }

  private connect(): void {
    if (this.terminal || this.ws) return;
    this.set({ retryIn: 0 });
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.wsURL());
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.lastHeard = Date.now();
      const hello: Record<string, unknown> = { type: 'hello', protocol: PROTOCOL, session: this.boot.session };
      if (this.state.conn) hello.resume = { conn: this.state.conn, seq: this.state.seq };
      ws.send(JSON.stringify(hello));
      this.helloTimer = window.setTimeout(() => {
        if (this.ws === ws && !this.welcomed) ws.close();
      }, HELLO_TIMEOUT);
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws) return;
      this.lastHeard = Date.now();
      let msg: ServerMessage;
      try {
        msg = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      this.handle(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      // Close reasons of the protocol's "Closing": removed and replaced are
      // final; anything else (restart, slow, network) is resumed.
      if (ev.reason === 'removed') this.fail('removed', '');
      else if (ev.reason === 'replaced') this.fail('session-replaced', '');
      this.dropped();
    };
  }

  private dropped(): void {
    this.ws = null;
    this.welcomed = false;
    clearTimeout(this.helloTimer);
    clearInterval(this.pingTimer);
    clearInterval(this.qualityTimer);
    if (this.terminal) return;
    this.set({ reconnecting: this.state.phase === 'joined' });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const base = Math.min(15_000, 500 * 2 ** this.attempt);
    const delay = Math.round(base / 2 + Math.random() * (base / 2));
    this.attempt++;
    const due = Date.now() + delay;
    const tick = () => this.set({ retryIn: Math.max(0, Math.ceil((due - Date.now()) / 1000)) });
    tick();
    clearInterval(this.countdownTimer);
    this.countdownTimer = window.setInterval(tick, 1000);
    clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => {
      clearInterval(this.countdownTimer);
      this.connect();
    }, delay);
  }

  /** Retries at once (the "Try now" button). */
  retryNow(): void {
    if (!this.ws && !this.terminal) this.connectNow();
  }

  private send(msg: Record<string, unknown>, ctx?: RefContext): number {
    const ref = this.nextRef++;
    if (ctx) this.refs.set(ref, ctx);
    if (this.refs.size > 200) this.refs.delete(this.refs.keys().next().value as number);
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN && this.welcomed) {
      ws.send(JSON.stringify({ ...msg, ref }));
    }
    return ref;
  }

  private connected(): boolean {
    return !!this.ws && this.ws.readyState === WebSocket.OPEN && this.welcomed;
  }

  private startTimers(): void {
    clearInterval(this.pingTimer);
    clearInterval(this.qualityTimer);
    const ws = this.ws;
    this.pingTimer = window.setInterval(() => {
      if (!ws || this.ws !== ws) return;
      if (Date.now() - this.lastHeard > SILENCE_LIMIT) {
        ws.close();
        this.dropped();
        return;
      }
      this.pingSentAt = Date.now();
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'ping' }));
    }, PING_EVERY);
    this.qualityTimer = window.setInterval(() => void this.reportQuality(), QUALITY_EVERY);
    // A first ping at once gives a round-trip time before any media flows.
    this.pingSentAt = Date.now();
    ws?.send(JSON.stringify({ type: 'ping' }));
  }

  private async reportQuality(): Promise<void> {
    if (!this.connected()) return;
    let sample = await this.meter.sample(this.pcs.values());
    if (!sample && this.wsRtt >= 0) sample = { rtt: this.wsRtt, loss: 0 };
    if (sample && this.connected()) this.send({ type: 'quality', rtt: sample.rtt, loss: sample.loss });
  }

  private shutdown(): void {
    this.terminal = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.countdownTimer);
    clearInterval(this.pingTimer);
    clearInterval(this.qualityTimer);
    clearTimeout(this.helloTimer);
    for (const label of Object.keys(this.sending) as StreamLabel[]) this.unpublish(label, false);
    for (const e of [...this.pcs.values()]) this.closePc(e);
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close(1000);
  }

  // ---- incoming ----

  private handle(msg: ServerMessage): void {
    switch (msg.type) {
      case 'welcome':
        this.welcome(msg);
        break;
      case 'fail':
        this.fail(msg.code, msg.message ?? '');
        break;
      case 'event':
        this.event(msg);
        break;
      case 'notice':
        this.notice(msg.key, msg.by, msg.endsAt);
        break;
      case 'error':
        this.serverError(msg.code, msg.message ?? '', msg.ref);
        break;
      case 'rtc':
        void this.rtc(msg);
        break;
      case 'board-live':
        this.board.applyLive(msg as BoardLive);
        break;
      case 'quiz-answered':
        this.quizAnswered(msg.slot, msg.seq, msg.saved, msg.ref);
        break;
      case 'quiz-tally':
        if (this.state.quiz?.open) this.set({ quizTally: msg.aggregate });
        break;
      case 'pong':
        if (this.pingSentAt) this.wsRtt = Date.now() - this.pingSentAt;
        this.pingSentAt = 0;
        break;
    }
  }

  /**
   * localTime turns a server instant into this machine's clock, so a
   * laptop whose clock is wrong still counts down to the right moment.
   */
  private localTime(iso: string | undefined): string {
    if (!iso) return '';
    const t = Date.parse(iso);
    return Number.isNaN(t) ? iso : new Date(t - this.skew).toISOString();
  }

  /** Server clock minus local clock, in ms, from the last welcome. */
  private skew = 0;

  private welcome(w: Welcome): void {
    clearTimeout(this.helloTimer);
    const serverNow = w.now ? Date.parse(w.now) : NaN;
    this.skew = Number.isNaN(serverNow) ? 0 : serverNow - Date.now();
    this.welcomed = true;
    this.attempt = 0;
    const patch: Partial<State> = {
      phase: 'joined',
      reconnecting: false,
      retryIn: 0,
      conn: w.conn,
      seq: w.seq,
      you: w.you,
      permissions: w.permissions ?? [],
      settings: { ...DEFAULT_SETTINGS, ...w.settings },
      lang: w.lang ?? '',
      klass: w.class ?? null,
      endsAt: this.localTime(w.endsAt ?? w.class?.endsAt),
    };
    this.ice = w.ice;
    // The server ends a connection's streams when its socket closes, resumed
    // or not: drop every peer connection, publish again what was on, and
    // the server offers the others' streams again.
    this.republish = [];
    for (const label of Object.keys(this.sending) as StreamLabel[]) {
      if (this.state.pub[label] !== 'off') this.republish.push(label);
      this.unpublish(label, false);
    }
    for (const e of [...this.pcs.values()]) this.closePc(e);
    patch.remote = [];
    if (!w.resumed || w.snapshot) {
      const snap = w.snapshot ?? { participants: [], chat: [], hands: [], streams: [] };
      const participants: Record<string, Participant> = {};
      for (const p of snap.participants ?? []) participants[p.userId] = p;
      const streams: Record<string, StreamInfo> = {};
      for (const s of snap.streams ?? []) streams[s.id] = s;
      Object.assign(patch, {
        participants,
        streams,
        chat: (snap.chat ?? []).slice(-CHAT_KEEP),
        hands: snap.hands ?? [],
        presentation: snap.presentation ?? null,
        files: snap.files ?? [],
        recording: !!snap.recording,
        quizTests: snap.quizTests ?? [],
      });
      this.setQuiz(snap.quiz ?? null);
      this.mergeQuizMine(snap.quizMine ?? []);
      this.syncTabCapture(!!snap.recording);
      this.board.load(snap.board);
      patch.boardPage = this.board.page;
      patch.boardPages = this.board.blankPages();
    }
    this.set(patch);
    this.startTimers();
    this.onWelcome(w);
    const outbox = this.boardOutbox;
    this.boardOutbox = [];
    for (const m of outbox) this.send(m, { kind: 'board', op: String(m.op) });
    this.resendQuizAnswers();
    // Re-publish what was on before a reconnect that lost the connection.
    const again = this.republish;
    this.republish = [];
    for (const label of again) void this.publish(label);
  }

  private fail(code: string, message: string): void {
    this.terminal = true;
    this.set({ phase: 'failed', failCode: code || 'invalid', failMessage: message, reconnecting: false });
    this.shutdown();
  }

  private event(ev: RoomEvent): void {
    if (typeof ev.seq === 'number' && ev.seq > this.state.seq) {
      // Board events come many a second and change nothing on screen by
      // themselves: their seq is kept without a re-render.
      if (ev.kind === 'board') this.state.seq = ev.seq;
      else this.set({ seq: ev.seq });
    }
    const s = this.state;
    switch (ev.kind) {
      case 'join':
      case 'update': {
        const p = ev.participant;
        this.set({ participants: { ...s.participants, [p.userId]: p } });
        if (s.you && p.userId === s.you.userId) this.syncOwnPermissions(p);
        break;
      }
      case 'leave': {
        const participants = { ...s.participants };
        delete participants[ev.userId];
        this.set({ participants, hands: s.hands.filter((h) => h !== ev.userId) });
        break;
      }
      case 'chat': {
        if (s.chat.some((m) => m.id === ev.message.id)) break;
        this.set({ chat: [...s.chat, ev.message].slice(-CHAT_KEEP) });
        break;
      }
      case 'hands':
        this.set({ hands: ev.hands ?? [] });
        break;
      case 'timer':
        this.set({ endsAt: this.localTime(ev.endsAt), endingSoon: '' });
        break;
      case 'stream':
        this.set({ streams: { ...s.streams, [ev.stream.id]: ev.stream } });
        break;
      case 'unstream': {
        const streams = { ...s.streams };
        delete streams[ev.id];
        this.set({ streams });
        const e = this.pcs.get(ev.id);
        if (e && e.direction === 'recv') this.closePc(e);
        break;
      }
      case 'board': {
        this.board.apply(ev);
        const pages = this.board.blankPages();
        if (this.board.page !== s.boardPage || pages.join() !== s.boardPages.join()) {
          this.set({ boardPage: this.board.page, boardPages: pages });
        }
        break;
      }
      case 'presentation':
        this.set({ presentation: ev.presentation ?? null });
        break;
      case 'file':
        if (ev.file) this.mergeFile(ev.file);
        break;
      case 'recording':
        this.set({ recording: !!ev.recording });
        this.syncTabCapture(!!ev.recording);
        break;
      case 'speaking': {
        const p = s.participants[ev.userId];
        if (p) this.set({ participants: { ...s.participants, [p.userId]: { ...p, speaking: !!ev.speaking } } });
        break;
      }
      case 'quiz':
        this.setQuiz(ev.quiz ?? null);
        break;
      case 'ended':
        this.terminal = true;
        this.set({ phase: 'ended', endReason: ev.reason ?? '', reconnecting: false });
        this.shutdown();
        break;
    }
  }

  /** The can* fields of one's own participant are one's media and draw permissions. */
  private syncOwnPermissions(p: Participant): void {
    const keep = this.state.permissions.filter((x) => !['audio', 'video', 'screen', 'draw'].includes(x));
    if (p.canAudio) keep.push('audio');
    if (p.canVideo) keep.push('video');
    if (p.canScreen) keep.push('screen');
    if (p.canDraw) keep.push('draw');
    this.setPermissions(keep);
  }

  private setPermissions(perms: string[]): void {
    this.set({ permissions: perms });
    for (const label of Object.keys(SHORT) as StreamLabel[]) {
      if (this.state.pub[label] !== 'off' && !perms.includes(PERMISSION[label])) this.unpublish(label, true);
    }
  }

  private grant(add: string[], remove: string[]): void {
    const perms = this.state.permissions.filter((p) => !remove.includes(p));
    for (const p of add) if (!perms.includes(p)) perms.push(p);
    this.setPermissions(perms);
  }

  private notice(key: string, by?: string, endsAt?: string): void {
    switch (key) {
      case 'muted':
        if (this.state.pub.mic !== 'off') this.unpublish('mic', true);
        break;
      case 'camera-stopped':
        if (this.state.pub.camera !== 'off') this.unpublish('camera', true);
        break;
      case 'media-allowed':
        this.grant(['audio', 'video'], []);
        break;
      case 'media-revoked':
        this.grant([], ['audio', 'video']);
        break;
      case 'screen-allowed':
        this.grant(['screen'], []);
        break;
      case 'screen-revoked':
        this.grant([], ['screen']);
        break;
      case 'draw-allowed':
        this.grant(['draw'], []);
        break;
      case 'draw-revoked':
        this.grant([], ['draw']);
        break;
      case 'files-allowed':
        this.grant(['files'], []);
        break;
      case 'files-revoked':
        this.grant([], ['files']);
        break;
      case 'ending-soon':
        this.set({ endingSoon: this.localTime(endsAt) || this.state.endsAt, endsAt: this.localTime(endsAt) || this.state.endsAt });
        return;
      case 'removed':
        // The server closes the socket; do not come back.
        this.terminal = true;
        this.set({ phase: 'failed', failCode: 'removed', reconnecting: false });
        this.shutdown();
        return;
      case 'session-replaced':
        this.terminal = true;
        this.set({ phase: 'failed', failCode: 'session-replaced', reconnecting: false });
        this.shutdown();
        return;
    }
    this.toast(key, by);
  }

  private toast(key: string, by?: string): void {
    const id = this.nextId++;
    this.set({ toasts: [...this.state.toasts, { id, key, by }].slice(-4) });
    window.setTimeout(() => this.dismissToast(id), 8000);
  }

  dismissToast(id: number): void {
    this.set({ toasts: this.state.toasts.filter((x) => x.id !== id) });
  }

  private serverError(code: string, message: string, ref?: number): void {
    const ctx = ref !== undefined ? this.refs.get(ref) : undefined;
    if (ref !== undefined) this.refs.delete(ref);
    if (ctx?.kind === 'rtc-close') return; // closing something the server already closed
    if (ctx?.kind === 'rtc-offer') {
      const e = this.pcs.get(ctx.stream);
      if (e) this.unpublish(ctx.label, false);
      this.addError({ code, message, where: 'room', context: ctx.label });
      return;
    }
    if (ctx?.kind === 'board') {
      if (ref !== undefined) this.onBoardRefused(ref);
      // "Nothing to undo" needs no message: the board simply stays as it is.
      if ((ctx.op === 'undo' || ctx.op === 'redo') && code === 'invalid') return;
      this.addError({ code, message, where: 'room', context: 'board' });
      return;
    }
    if (ctx?.kind === 'quiz' && ctx.action === 'answer' && ctx.slot !== undefined) {
      const a = this.state.quizAnswers[ctx.slot];
      if (a && a.seq === ctx.seq) {
        this.set({ quizAnswers: { ...this.state.quizAnswers, [ctx.slot]: { ...a, status: 'failed', error: message } } });
      }
      return;
    }
    if (ctx?.kind === 'chat') {
      this.addError({ code, message, where: 'chat', context: ctx.to ? 'private' : 'group' });
      return;
    }
    this.addError({ code, message, where: 'room', context: ctx && 'action' in ctx ? ctx.action : undefined });
  }

  private addError(e: Omit<UiError, 'id'>): void {
    const id = this.nextId++;
    const errors = [...this.state.errors.filter((x) => x.where !== e.where || e.where === 'room'), { ...e, id }];
    this.set({ errors: errors.slice(-4) });
    if (e.where === 'room') window.setTimeout(() => this.dismissError(id), 10_000);
  }

  dismissError(id: number): void {
    this.set({ errors: this.state.errors.filter((x) => x.id !== id) });
  }

  /** A client-side problem (e.g. no camera) shown like a server error. */
  localError(code: string, context: string): void {
    this.addError({ code, message: '', where: 'room', context });
  }

  // ---- actions ----

  sendChat(text: string, to: string): boolean {
    const body = text.trim();
    if (!body || !this.connected()) return false;
    this.set({ errors: this.state.errors.filter((x) => x.where !== 'chat') });
    const msg: Record<string, unknown> = { type: 'chat', text: body };
    if (to) msg.to = to;
    this.send(msg, { kind: 'chat', to, text: body });
    return true;
  }

  setHand(up: boolean): void {
    this.send({ type: 'hand', up }, { kind: 'other' });
  }

  moderate(action: ModerateAction, userId: string): void {
    this.send({ type: 'moderate', action, userId }, { kind: 'moderate', action, userId });
  }

  room(action: RoomAction): void {
    this.send({ type: 'room', action }, { kind: 'room', action });
    if (action === 'allow-draw-all' || action === 'revoke-draw-all') this.set({ drawAll: action === 'allow-draw-all' });
    if (action === 'allow-files-all' || action === 'revoke-files-all') this.set({ filesAll: action === 'allow-files-all' });
  }

  // ---- in-class quiz ----

  /** A quiz state from a snapshot or event; a new launch starts with no answers. */
  private setQuiz(q: QuizState | null): void {
    const old = this.state.quiz;
    const quiz = q ? { ...q, deadline: q.deadline ? this.localTime(q.deadline) : undefined } : null;
    const same = !!old && !!quiz && old.launchedAt === quiz.launchedAt;
    this.set({
      quiz,
      quizAnswers: same ? this.state.quizAnswers : {},
      quizTally: same && quiz?.open ? this.state.quizTally : null,
    });
  }

  /** The server's copy of this student's answers (after a reload or reconnect); a newer unsent local one wins. */
  private mergeQuizMine(mine: { slot: number; response: QuizResponse; seq: number }[]): void {
    if (!mine.length) return;
    const answers = { ...this.state.quizAnswers };
    for (const m of mine) {
      const local = answers[m.slot];
      if (!local || local.seq <= m.seq) answers[m.slot] = { response: m.response ?? {}, seq: m.seq, status: 'saved' };
    }
    this.set({ quizAnswers: answers });
  }

  /** Teachers: launch a test attached to the class (question 0: all of it; seconds 0: until closed). */
  quizLaunch(testId: number, question: number, seconds: number): void {
    this.send({ type: 'quiz', action: 'launch', testId, question, seconds }, { kind: 'quiz', action: 'launch' });
  }

  quizClose(): void {
    this.send({ type: 'quiz', action: 'close' }, { kind: 'quiz', action: 'close' });
  }

  /**
   * A student's answer to one question. seq is the time in ms, so a
   * reloaded page still sends a higher counter than before; an answer
   * given while the socket is down is sent after the next welcome.
   */
  quizAnswer(slot: number, response: QuizResponse): void {
    if (!this.state.quiz?.open) return;
    const prev = this.state.quizAnswers[slot];
    const seq = Math.max(Date.now(), (prev?.seq ?? 0) + 1);
    const status = this.connected() ? 'saving' : 'failed';
    this.set({ quizAnswers: { ...this.state.quizAnswers, [slot]: { response, seq, status } } });
    if (status === 'saving') this.sendQuizAnswer(slot, response, seq);
  }

  private sendQuizAnswer(slot: number, response: QuizResponse, seq: number): void {
    this.send({ type: 'quiz', action: 'answer', slot, response, seq }, { kind: 'quiz', action: 'answer', slot, seq });
  }

  private quizAnswered(slot: number, seq: number, saved: boolean, ref?: number): void {
    if (ref !== undefined) this.refs.delete(ref);
    const a = this.state.quizAnswers[slot];
    // saved false: a later answer was already stored; the latest one's own ack decides.
    if (!a || a.seq !== seq || !saved) return;
    this.set({ quizAnswers: { ...this.state.quizAnswers, [slot]: { ...a, status: 'saved', error: undefined } } });
  }

  private resendQuizAnswers(): void {
    if (!this.state.quiz?.open) return;
    const answers = { ...this.state.quizAnswers };
    for (const [slot, a] of Object.entries(answers)) {
      if (a.status === 'saved' || a.error) continue;
      answers[Number(slot)] = { ...a, status: 'saving' };
      this.sendQuizAnswer(Number(slot), a.response, a.seq);
    }
    this.set({ quizAnswers: answers });
  }

  // ---- board, presentation, files ----

  /**
   * Sends a stored board operation ({op, ...}); answers its ref. While the
   * socket is down it waits and goes after the next welcome.
   */
  boardOp(op: Record<string, unknown>): number {
    const msg = { type: 'board', ...op };
    if (!this.connected()) {
      if (this.boardOutbox.length < 500) this.boardOutbox.push(msg);
      return -1;
    }
    return this.send(msg, { kind: 'board', op: String(op.op) });
  }

  /** Sends a live board message (progress, laser): dropped when offline. */
  boardLive(op: Record<string, unknown>): void {
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN && this.welcomed) ws.send(JSON.stringify({ type: 'board', ...op }));
  }

  /** The teacher shows a blank page to everyone. */
  showPage(page: string): void {
    if (!isBlankPage(page)) return;
    this.board.known.add(page);
    this.boardOp({ op: 'page', page });
    // Shown at once here; the server's page event confirms it.
    this.board.apply({ op: 'page', page });
    this.set({ boardPage: page, boardPages: this.board.blankPages() });
  }

  /**
   * Opens a shared PDF for everyone. The room cannot count a PDF's pages,
   * so the teacher's browser does (pdf.js, loaded now) and says how many.
   */
  async openPresentation(file: number | string): Promise<void> {
    const f = this.state.files.find((x) => String(x.id) === String(file));
    let pages = 0;
    if (f?.url) {
      try {
        pages = (await openPdf(String(file), f.url)).numPages;
      } catch {
        pages = 0; // the room still opens it; the viewers show what they can
      }
    }
    this.send({ type: 'presentation', action: 'open', file: Number(file), pages }, { kind: 'presentation', action: 'open' });
  }

  presentationAction(action: 'page' | 'zoom' | 'close', value?: number | string): void {
    const msg: Record<string, unknown> = { type: 'presentation', action };
    if (action === 'page') msg.page = value;
    if (action === 'zoom') msg.zoom = value;
    this.send(msg, { kind: 'presentation', action });
  }

  /** Adds or replaces a shared file in the list (by id). */
  mergeFile(f: SharedFile): void {
    const files = this.state.files.filter((x) => String(x.id) !== String(f.id));
    const old = this.state.files.find((x) => String(x.id) === String(f.id));
    files.push(old ? { ...old, ...f } : f);
    files.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    this.set({ files });
  }

  /** The session token, for the upload's X-Lectern-Session header. */
  session(): string {
    return this.boot.session;
  }

  // ---- media ----

  private rtcConfig(): RTCConfiguration {
    return { ...(this.ice ?? {}) };
  }

  mayPublish(label: StreamLabel): boolean {
    return this.can(PERMISSION[label]) && this.state.settings.board === 0;
  }

  async toggle(label: StreamLabel): Promise<void> {
    if (this.state.pub[label] === 'off') await this.publish(label);
    else this.unpublish(label, true);
  }

  private pubState(label: StreamLabel): PubState {
    return this.state.pub[label];
  }

  private setPub(label: StreamLabel, v: PubState): void {
    this.set({ pub: { ...this.state.pub, [label]: v } });
  }

  async publish(label: StreamLabel): Promise<void> {
    if (this.state.pub[label] !== 'off' || !this.mayPublish(label) || !this.connected()) return;
    this.setPub(label, 'starting');
    let media: MediaStream;
    try {
      const md = navigator.mediaDevices;
      if (!md) throw new DOMException('no media devices', 'NotSupportedError');
      media =
        label === 'screen'
          ? await md.getDisplayMedia({ video: true, audio: true })
          : label === 'recording'
            ? await md.getDisplayMedia(TAB_CAPTURE)
            : label === 'camera'
            ? await md.getUserMedia({ video: { width: { ideal: 1280 }, height: { ideal: 720 } } })
            : await md.getUserMedia({
                audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
              });
    } catch (err) {
      this.setPub(label, 'off');
      const name = err instanceof DOMException ? err.name : '';
      if (label === 'recording') this.toast('tab-capture-off');
      else if (name !== 'AbortError' && !(label === 'screen' && name === 'NotAllowedError')) {
        this.localError(deviceErrorCode(name), label);
      }
      return;
    }
    // Only the tracks the protocol allows for this label.
    for (const tr of media.getTracks()) {
      const ok = label === 'mic' ? tr.kind === 'audio' : label === 'camera' ? tr.kind === 'video' : true;
      if (!ok) {
        tr.stop();
        media.removeTrack(tr);
      }
    }
    const now = this.pubState(label);
    if (now !== 'starting' || !this.mayPublish(label) || !this.connected()) {
      media.getTracks().forEach((tr) => tr.stop());
      if (now === 'starting') this.setPub(label, 'off');
      return;
    }
    const conn = this.state.conn.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 40) || 'c';
    const stream = `${conn}-${SHORT[label]}-${++this.streamCounter}`;
    const pc = new RTCPeerConnection(this.rtcConfig());
    const entry: PcEntry = {
      stream,
      label,
      direction: 'send',
      userId: this.state.you?.userId ?? '',
      pc,
      media,
      remoteSet: false,
      pendingIce: [],
    };
    this.pcs.set(stream, entry);
    this.sending[label] = entry;
    for (const track of media.getTracks()) {
      pc.addTransceiver(track, { direction: 'sendonly', streams: [media] });
      track.addEventListener('ended', () => {
        if (this.sending[label] !== entry) return;
        this.unpublish(label, true);
        // The teacher stopped the tab's capture from the browser's bar.
        if (label === 'recording' && this.state.recording) this.toast('tab-capture-off');
      });
    }
    this.wirePc(entry);
    this.set({ pub: { ...this.state.pub, [label]: 'on' }, localCamera: label === 'camera' ? media : this.state.localCamera });
    try {
      const offer = await pc.createOffer();
      await pc.setLocalDescription(offer);
      if (this.sending[label] !== entry) return;
      this.send(
        { type: 'rtc', kind: 'offer', stream, label, sdp: pc.localDescription?.sdp ?? offer.sdp },
        { kind: 'rtc-offer', stream, label },
      );
    } catch {
      if (this.sending[label] === entry) this.unpublish(label, true);
      this.localError('media-failed', label);
    }
  }

  /**
   * isRecordingLayout 1: while the class records, the teacher's browser
   * captures this tab and publishes it as the recording's picture; it stops
   * when recording stops. A refusal only costs the tab's picture: every
   * stream is still recorded on its own (the teacher is told, and may try
   * again with captureTab).
   */
  private syncTabCapture(on: boolean): void {
    if (!this.mayPublish('recording')) return;
    if (on && this.state.pub.recording === 'off') void this.publish('recording');
    if (!on && this.state.pub.recording !== 'off') this.unpublish('recording', true);
  }

  /** The teacher's "Record this tab" after a refusal or a stop. */
  captureTab(): void {
    if (this.state.recording) void this.publish('recording');
  }

  /** Stops a publication; tell=true sends rtc close to the server. */
  unpublish(label: StreamLabel, tell: boolean): void {
    const e = this.sending[label];
    delete this.sending[label];
    if (e) {
      if (tell && this.connected()) this.send({ type: 'rtc', kind: 'close', stream: e.stream }, { kind: 'rtc-close' });
      this.closePc(e);
      e.media.getTracks().forEach((tr) => tr.stop());
    }
    const patch: Partial<State> = { pub: { ...this.state.pub, [label]: 'off' } };
    if (label === 'camera') patch.localCamera = null;
    this.set(patch);
  }

  private wirePc(e: PcEntry): void {
    e.pc.onicecandidate = (ev) => {
      if (ev.candidate && this.pcs.get(e.stream) === e) {
        this.send({ type: 'rtc', kind: 'ice', stream: e.stream, candidate: ev.candidate.toJSON() });
      }
    };
    e.pc.onconnectionstatechange = () => {
      if (e.pc.connectionState === 'failed' && this.pcs.get(e.stream) === e) {
        if (e.direction === 'send') {
          this.unpublish(e.label as StreamLabel, true);
          this.localError('media-failed', e.label);
        }
      }
    };
  }

  private closePc(e: PcEntry): void {
    if (this.pcs.get(e.stream) === e) this.pcs.delete(e.stream);
    try {
      e.pc.close();
    } catch {
      /* already closed */
    }
    if (e.direction === 'recv') this.set({ remote: this.state.remote.filter((r) => r.stream !== e.stream) });
  }

  private async rtc(m: Rtc): Promise<void> {
    const e = this.pcs.get(m.stream);
    switch (m.kind) {
      case 'offer':
        if (e && e.direction === 'send') return;
        await this.answerOffer(m, e);
        return;
      case 'answer':
        if (!e || e.direction !== 'send' || !m.sdp) return;
        try {
          await e.pc.setRemoteDescription({ type: 'answer', sdp: m.sdp });
          e.remoteSet = true;
          this.flushIce(e);
        } catch {
          if (this.sending[e.label as StreamLabel] === e) this.unpublish(e.label as StreamLabel, true);
          this.localError('media-failed', e.label);
        }
        return;
      case 'ice':
        if (!e || !m.candidate) return;
        if (!e.remoteSet) e.pendingIce.push(m.candidate);
        else e.pc.addIceCandidate(m.candidate).catch(() => {});
        return;
      case 'close':
        if (!e) return;
        if (e.direction === 'send') this.unpublish(e.label as StreamLabel, false);
        else this.closePc(e);
        return;
    }
  }

  private flushIce(e: PcEntry): void {
    const list = e.pendingIce;
    e.pendingIce = [];
    for (const c of list) e.pc.addIceCandidate(c).catch(() => {});
  }

  private async answerOffer(m: Rtc, existing: PcEntry | undefined): Promise<void> {
    let e = existing;
    if (!e) {
      const pc = new RTCPeerConnection(this.rtcConfig());
      const entry: PcEntry = {
        stream: m.stream,
        label: m.label ?? this.state.streams[m.stream]?.label ?? 'camera',
        direction: 'recv',
        userId: m.userId ?? this.state.streams[m.stream]?.userId ?? '',
        pc,
        media: new MediaStream(),
        remoteSet: false,
        pendingIce: [],
      };
      e = entry;
      this.pcs.set(m.stream, entry);
      this.wirePc(entry);
      pc.ontrack = (ev) => {
        if (this.pcs.get(entry.stream) !== entry) return;
        const tracks = [...entry.media.getTracks().filter((x) => x.id !== ev.track.id), ev.track];
        entry.media = new MediaStream(tracks);
        const item: RemoteMedia = { stream: entry.stream, userId: entry.userId, label: entry.label, media: entry.media };
        this.set({ remote: [...this.state.remote.filter((r) => r.stream !== entry.stream), item] });
      };
    }
    const entry = e;
    try {
      await entry.pc.setRemoteDescription({ type: 'offer', sdp: m.sdp ?? '' });
      entry.remoteSet = true;
      this.flushIce(entry);
      const answer = await entry.pc.createAnswer();
      await entry.pc.setLocalDescription(answer);
      if (this.pcs.get(entry.stream) !== entry) return;
      this.send({ type: 'rtc', kind: 'answer', stream: entry.stream, sdp: entry.pc.localDescription?.sdp ?? answer.sdp });
    } catch {
      if (this.pcs.get(entry.stream) === entry) {
        this.send({ type: 'rtc', kind: 'close', stream: entry.stream }, { kind: 'rtc-close' });
        this.closePc(entry);
      }
    }
  }

  setNeedsAudioUnlock(v: boolean): void {
    if (this.state.needsAudioUnlock !== v) this.set({ needsAudioUnlock: v });
  }
}

function deviceErrorCode(name: string): string {
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return 'device-denied';
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'device-missing';
    case 'NotReadableError':
      return 'device-busy';
    default:
      return 'device-failed';
  }
}
