import type { TargetedKeyboardEvent } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { t } from '../../shared/i18n';
import { PenIcon } from '../../shared/icons';
import { BoardView, type TextRequest, type UiTool } from '../board/view';
import type { Classroom, State } from '../client';
import {
  CloseIcon,
  DownloadIcon,
  MinusIcon,
  NextIcon,
  PlusIcon,
  PrevIcon,
  RedoIcon,
  ToolIcons,
  TrashIcon,
  UndoIcon,
  UploadIcon,
} from './boardIcons';
import { failedText, useUpload, UploadStatus } from './Files';
import { usePresentationPage } from './presentationView';

const TOOLS: Array<{ tool: UiTool; key: string }> = [
  { tool: 'select', key: 'v' },
  { tool: 'pen', key: 'p' },
  { tool: 'highlighter', key: 'h' },
  { tool: 'line', key: 'l' },
  { tool: 'arrow', key: 'a' },
  { tool: 'rect', key: 'r' },
  { tool: 'ellipse', key: 'o' },
  { tool: 'text', key: 't' },
  { tool: 'eraser', key: 'e' },
  { tool: 'laser', key: 'k' },
];

const COLORS: Array<{ name: string; value: string }> = [
  { name: 'black', value: '#1b2230' },
  { name: 'blue', value: '#1d4ed8' },
  { name: 'red', value: '#dc2626' },
  { name: 'green', value: '#15803d' },
  { name: 'orange', value: '#ea580c' },
  { name: 'purple', value: '#7c3aed' },
  { name: 'yellow', value: '#facc15' },
];

const WIDTHS: Array<{ name: string; value: number }> = [
  { name: 'thin', value: 3 },
  { name: 'medium', value: 6 },
  { name: 'thick', value: 12 },
  { name: 'heavy', value: 24 },
];

const ZOOMS = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4];

const PRES_ACCEPT =
  '.pdf,.docx,.pptx,.odp,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/vnd.openxmlformats-officedocument.presentationml.presentation,application/vnd.oasis.opendocument.presentation';

function isTyping(el: EventTarget | null): boolean {
  const n = el as HTMLElement | null;
  return !!n && (n.tagName === 'INPUT' || n.tagName === 'TEXTAREA' || n.tagName === 'SELECT' || n.isContentEditable);
}

export function Board({ room, s }: { room: Classroom; s: State }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const presCanvas = useRef<HTMLCanvasElement>(null);
  const frame = useRef<HTMLDivElement>(null);
  const viewRef = useRef<BoardView | null>(null);
  const [tool, setTool] = useState<UiTool>('pen');
  const [color, setColor] = useState(COLORS[1].value);
  const [width, setWidth] = useState(6);
  const [selected, setSelected] = useState(0);
  const [editing, setEditing] = useState<TextRequest | null>(null);
  const [busy, setBusy] = useState('');
  const canDraw = s.permissions.includes('draw') && s.phase === 'joined';
  const op = s.permissions.includes('op');
  const me = s.you?.userId ?? '';
  const pres = s.presentation;
  const page = pres ? `pdf:${pres.file}:${pres.page}` : s.boardPage;
  const zoom = pres ? pres.zoom || 1 : 1;
  const opts = { tool, color, width, canDraw, teacher: op, me, page, zoom, presenting: !!pres };

  // One view for the component's life; options pass through set(), at
  // once after each render (a pointer event may follow a click directly).
  useLayoutEffect(() => {
    if (!canvas.current) return;
    const view = new BoardView(room, canvas.current, presCanvas.current, opts);
    view.onSelection = setSelected;
    view.onText = setEditing;
    viewRef.current = view;
    return () => {
      view.destroy();
      viewRef.current = null;
    };
  }, [room]);
  useLayoutEffect(() => {
    const view = viewRef.current;
    if (!view) return;
    view.nameOf = (id) => s.participants[id]?.name ?? id;
    view.set(opts);
  });
  // A text being typed shows only while its page, the text tool and the
  // right to draw last (the click that opened it may come before the
  // render that selected the tool, so no effect resets it).
  const typing = editing && editing.page === page && tool === 'text' && canDraw ? editing : null;

  // The presentation page under the board.
  const [presState, docPages] = usePresentationPage(viewRef, pres);

  const pickTool = (v: UiTool) => {
    if (v !== 'text') setEditing(null);
    let c = color;
    if (v === 'highlighter') c = COLORS[6].value;
    else if (tool === 'highlighter' && color === COLORS[6].value) c = COLORS[1].value;
    setTool(v);
    setColor(c);
    viewRef.current?.set({ tool: v, color: c });
  };

  const undo = () => room.boardOp({ op: 'undo' });
  const redo = () => room.boardOp({ op: 'redo' });
  const clear = () => {
    if (window.confirm(t('board.confirmClear'))) room.boardOp({ op: 'clear', page });
  };

  const onKey = (e: TargetedKeyboardEvent<HTMLElement>) => {
    if (isTyping(e.target) || !canDraw) return;
    const view = viewRef.current;
    const mod = e.ctrlKey || e.metaKey;
    const k = e.key.toLowerCase();
    if (mod && k === 'z') {
      e.preventDefault();
      if (e.shiftKey) redo();
      else undo();
      return;
    }
    if (mod && k === 'y') {
      e.preventDefault();
      redo();
      return;
    }
    // The rest only on the canvas itself: buttons keep their own keys.
    if (e.target !== canvas.current || !view) return;
    if (mod && k === 'a' && tool === 'select') {
      e.preventDefault();
      view.selectAll();
      return;
    }
    if ((e.key === 'Delete' || e.key === 'Backspace') && selected) {
      e.preventDefault();
      view.deleteSelection();
      return;
    }
    if (e.key === 'Escape') {
      view.clearSelection();
      return;
    }
    if (e.key.startsWith('Arrow') && view.nudge(e.key, e.shiftKey)) {
      e.preventDefault();
      return;
    }
    if (!mod && !e.altKey) {
      const hit = TOOLS.find((x) => x.key === k);
      if (hit) {
        e.preventDefault();
        pickTool(hit.tool);
      }
    }
  };

  const pages = s.boardPages.includes(s.boardPage) ? s.boardPages : [...s.boardPages, s.boardPage];
  const index = pages.indexOf(s.boardPage);
  const joined = s.phase === 'joined' && !s.reconnecting;
  const students = Object.values(s.participants).filter((p) => p.role !== 'teacher');
  // The room does not say whether "everyone may draw" is on: with
  // students present, it is whether they all may; else what was clicked.
  const drawAll = students.length ? students.every((p) => p.canDraw) : s.drawAll;
  const title = s.klass?.title || t('board.title');

  // Presenting: the teacher's upload, opened once ready (office documents
  // are converted first: a later file event says ready or failed).
  const presUpload = useUpload(room, 'presentation');
  const waiting = presUpload.waitingFor;
  useEffect(() => {
    if (waiting === null) return;
    const f = s.files.find((x) => String(x.id) === String(waiting));
    if (f && (f.status === 'ready' || !f.status)) {
      presUpload.setWaitingFor(null);
      void room.openPresentation(f.id);
    } else if (f?.status === 'failed') {
      presUpload.setWaitingFor(null);
      presUpload.setError(failedText(f));
    }
  }, [waiting, s.files]);
  const presFile = pres ? s.files.find((x) => String(x.id) === String(pres.file)) : undefined;
  const presPages = pres?.pages || docPages;
  const zoomTo = (dir: 1 | -1) => {
    const next = dir > 0 ? ZOOMS.find((z) => z > zoom + 1e-6) : [...ZOOMS].reverse().find((z) => z < zoom - 1e-6);
    if (next) room.presentationAction('zoom', next);
  };

  const run = async (what: string, f: () => Promise<void>) => {
    setBusy(what);
    try {
      await f();
    } catch {
      room.localError('export-failed', 'board');
    } finally {
      setBusy('');
    }
  };

  return (
    <section class={`board ${pres ? 'board-presenting' : ''}`} aria-labelledby="board-heading" onKeyDown={onKey}>
      <div class="section-head board-head">
        <h2 id="board-heading">{pres ? t('pres.title') : t('board.title')}</h2>
        {pres ? (
          <div class="pres-nav" role="group" aria-label={t('pres.controls')}>
            {op ? (
              <button
                type="button"
                id="pres-prev"
                class="tbtn"
                disabled={!joined || pres.page <= 1}
                aria-label={t('pres.prev')}
                title={t('pres.prev')}
                onClick={() => room.presentationAction('page', pres.page - 1)}
              >
                <PrevIcon />
              </button>
            ) : null}
            <span class="pres-page-label">
              <span class="sr-only">{t('pres.page')} </span>
              <span id="pres-page">
                {pres.page} / {presPages || '?'}
              </span>
              <span id="board-page" class="sr-only">
                {page}
              </span>
            </span>
            {op ? (
              <>
                <button
                  type="button"
                  id="pres-next"
                  class="tbtn"
                  disabled={!joined || (presPages > 0 && pres.page >= presPages)}
                  aria-label={t('pres.next')}
                  title={t('pres.next')}
                  onClick={() => room.presentationAction('page', pres.page + 1)}
                >
                  <NextIcon />
                </button>
                <button
                  type="button"
                  id="pres-zoom-out"
                  class="tbtn"
                  disabled={!joined || zoom <= ZOOMS[0]}
                  aria-label={t('pres.zoomOut')}
                  title={t('pres.zoomOut')}
                  onClick={() => zoomTo(-1)}
                >
                  <MinusIcon />
                </button>
              </>
            ) : null}
            <span class="pres-zoom" title={t('pres.zoom')}>
              <span class="sr-only">{t('pres.zoom')} </span>
              {Math.round(zoom * 100)}%
            </span>
            {op ? (
              <>
                <button
                  type="button"
                  id="pres-zoom-in"
                  class="tbtn"
                  disabled={!joined || zoom >= ZOOMS[ZOOMS.length - 1]}
                  aria-label={t('pres.zoomIn')}
                  title={t('pres.zoomIn')}
                  onClick={() => zoomTo(1)}
                >
                  <PlusIcon />
                </button>
                <button
                  type="button"
                  id="pres-close"
                  class="btn btn-small"
                  disabled={!joined}
                  onClick={() => room.presentationAction('close')}
                >
                  {t('pres.close')}
                </button>
              </>
            ) : null}
            {presFile ? (
              <span class="pres-name" title={presFile.name}>
                {presFile.name}
              </span>
            ) : null}
          </div>
        ) : (
          <div class="board-pages" role="group" aria-label={t('board.pages')}>
            {op ? (
              <button
                type="button"
                id="board-page-prev"
                class="tbtn"
                disabled={index <= 0 || !joined}
                aria-label={t('board.pagePrev')}
                title={t('board.pagePrev')}
                onClick={() => room.showPage(pages[index - 1])}
              >
                <PrevIcon />
              </button>
            ) : null}
            <span class="board-page-label">
              <span class="sr-only">{t('board.page')} </span>
              <span id="board-page">{page}</span>
              <span class="muted" aria-hidden="true">
                {' '}
                · {index + 1}/{pages.length}
              </span>
            </span>
            {op ? (
              <>
                <button
                  type="button"
                  id="board-page-next"
                  class="tbtn"
                  disabled={index >= pages.length - 1 || !joined}
                  aria-label={t('board.pageNext')}
                  title={t('board.pageNext')}
                  onClick={() => room.showPage(pages[index + 1])}
                >
                  <NextIcon />
                </button>
                <button
                  type="button"
                  id="board-page-add"
                  class="tbtn"
                  disabled={!joined || pages.length >= 100}
                  aria-label={t('board.pageAdd')}
                  title={t('board.pageAdd')}
                  onClick={() => room.showPage(room.board.nextPageId())}
                >
                  <PlusIcon />
                </button>
              </>
            ) : null}
          </div>
        )}
        {op ? null : (
          <span class={`pill ${canDraw ? 'pill-on' : ''}`} data-can-draw={String(canDraw)}>
            <PenIcon />
            {canDraw ? t('board.canDraw') : t('board.viewOnly')}
          </span>
        )}
        {op ? (
          <div class="board-admin" role="group" aria-label={t('board.teacherTools')}>
            <button
              type="button"
              id="allow-draw-all"
              class={`btn btn-small ${drawAll ? 'btn-on' : ''}`}
              aria-pressed={drawAll ? 'true' : 'false'}
              disabled={!joined}
              onClick={() => room.room(drawAll ? 'revoke-draw-all' : 'allow-draw-all')}
            >
              {t('board.allowDrawAll')}
            </button>
            <label class={`btn btn-small upload-btn ${!joined || presUpload.busy ? 'is-disabled' : ''}`} title={t('pres.uploadHint')}>
              <UploadIcon />
              <span>{pres ? t('pres.uploadOther') : t('pres.upload')}</span>
              <input
                type="file"
                id="pres-upload"
                class="file-input"
                accept={PRES_ACCEPT}
                disabled={!joined || presUpload.busy}
                onChange={(e) => {
                  const el = e.target as HTMLInputElement;
                  const f = el.files?.[0];
                  if (f) presUpload.start(f);
                  el.value = '';
                }}
              />
            </label>
            <button
              type="button"
              id="board-export-png"
              class="btn btn-small"
              disabled={!!busy}
              aria-busy={busy === 'png' ? 'true' : undefined}
              title={t('board.exportPngHint')}
              onClick={() => void run('png', async () => (await import('../board/export')).exportPng(room, page, title))}
            >
              <DownloadIcon />
              PNG
              <span class="sr-only"> {t('board.exportPngHint')}</span>
            </button>
            <button
              type="button"
              id="board-export-pdf"
              class="btn btn-small"
              disabled={!!busy}
              aria-busy={busy === 'pdf' ? 'true' : undefined}
              title={t('board.exportPdfHint')}
              onClick={() => void run('pdf', async () => (await import('../board/export')).exportPdf(room, title))}
            >
              <DownloadIcon />
              PDF
              <span class="sr-only"> {t('board.exportPdfHint')}</span>
            </button>
          </div>
        ) : null}
        <UploadStatus u={presUpload} room={room} />
      </div>

      <div class="board-tools" role="group" aria-label={t('board.tools')}>
        <div class="tool-group" role="group" aria-label={t('board.toolsDraw')}>
          {TOOLS.map(({ tool: v, key }) => {
            const Icon = ToolIcons[v];
            const label = t(`board.tool.${v}`);
            return (
              <button
                type="button"
                key={v}
                id={`tool-${v}`}
                class={`tbtn ${tool === v ? 'tbtn-on' : ''}`}
                aria-pressed={tool === v ? 'true' : 'false'}
                aria-label={label}
                aria-keyshortcuts={key.toUpperCase()}
                title={`${label} (${key.toUpperCase()})`}
                disabled={!canDraw}
                onClick={() => pickTool(v)}
              >
                <Icon />
              </button>
            );
          })}
        </div>
        <div class="tool-group" role="group" aria-label={t('board.colors')}>
          {COLORS.map((c) => (
            <button
              type="button"
              key={c.value}
              class={`swatch ${color === c.value ? 'swatch-on' : ''}`}
              data-color={c.value}
              style={{ '--swatch': c.value }}
              aria-pressed={color === c.value ? 'true' : 'false'}
              aria-label={t(`board.color.${c.name}`)}
              title={t(`board.color.${c.name}`)}
              disabled={!canDraw}
              onClick={() => {
                setColor(c.value);
                viewRef.current?.set({ color: c.value });
              }}
            />
          ))}
          <label class={`swatch swatch-custom ${COLORS.some((c) => c.value === color) ? '' : 'swatch-on'}`} title={t('board.color.custom')}>
            <span class="sr-only">{t('board.color.custom')}</span>
            <input
              type="color"
              id="board-color"
              value={color}
              disabled={!canDraw}
              onInput={(e) => setColor((e.target as HTMLInputElement).value)}
            />
          </label>
        </div>
        <div class="tool-group" role="group" aria-label={t('board.widths')}>
          {WIDTHS.map((w) => (
            <button
              type="button"
              key={w.value}
              class={`tbtn width-btn ${width === w.value ? 'tbtn-on' : ''}`}
              data-width={w.value}
              aria-pressed={width === w.value ? 'true' : 'false'}
              aria-label={t(`board.width.${w.name}`)}
              title={t(`board.width.${w.name}`)}
              disabled={!canDraw}
              onClick={() => {
                setWidth(w.value);
                viewRef.current?.set({ width: w.value });
              }}
            >
              <span class="width-dot" style={{ width: `${3 + Math.round(w.value / 2)}px`, height: `${3 + Math.round(w.value / 2)}px` }} />
            </button>
          ))}
        </div>
        <div class="tool-group" role="group" aria-label={t('board.edit')}>
          <button
            type="button"
            id="board-undo"
            class="tbtn"
            disabled={!canDraw || !joined}
            aria-label={t('board.undo')}
            aria-keyshortcuts="Control+Z"
            title={`${t('board.undo')} (Ctrl+Z)`}
            onClick={undo}
          >
            <UndoIcon />
          </button>
          <button
            type="button"
            id="board-redo"
            class="tbtn"
            disabled={!canDraw || !joined}
            aria-label={t('board.redo')}
            aria-keyshortcuts="Control+Y"
            title={`${t('board.redo')} (Ctrl+Y)`}
            onClick={redo}
          >
            <RedoIcon />
          </button>
          <button
            type="button"
            id="board-delete"
            class="tbtn"
            disabled={!canDraw || selected === 0}
            aria-label={t('board.deleteSelected', { count: selected })}
            title={t('board.deleteSelected', { count: selected })}
            onClick={() => viewRef.current?.deleteSelection()}
          >
            <CloseIcon />
          </button>
          {op ? (
            <button
              type="button"
              id="board-clear"
              class="tbtn tbtn-danger"
              disabled={!joined}
              aria-label={t('board.clear')}
              title={t('board.clear')}
              onClick={clear}
            >
              <TrashIcon />
            </button>
          ) : null}
        </div>
      </div>

      <div class="board-frame" ref={frame}>
        <canvas id="pres-canvas" ref={presCanvas} aria-hidden="true" hidden={!pres} />
        <canvas
          id="board"
          ref={canvas}
          tabIndex={0}
          role="img"
          aria-label={canDraw ? t('board.labelDraw') : t('board.label')}
          aria-describedby="board-hint"
          data-page={page}
          data-tool={tool}
        />
        {typing ? (
          <TextEditor
            req={typing}
            color={color}
            size={viewRef.current?.textSizeOnScreen() ?? 24}
            onDone={(text) => {
              if (text) viewRef.current?.addText(text, typing.x, typing.y);
              setEditing(null);
              canvas.current?.focus({ preventScroll: true });
            }}
          />
        ) : null}
        {pres && presState !== 'ready' ? (
          <div class={`board-note ${presState === 'error' ? 'board-note-error' : ''}`} role="status">
            {presState === 'error' ? t('pres.error') : t('pres.loading')}
          </div>
        ) : null}
      </div>
      <p id="board-hint" class="sr-only">
        {canDraw ? t('board.keyboardHint') : t('board.viewOnlyHint')}
      </p>
    </section>
  );
}

function TextEditor({ req, color, size, onDone }: { req: TextRequest; color: string; size: number; onDone: (text: string) => void }) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const done = useRef(false);
  // At once: typing may follow the click straight away.
  useLayoutEffect(() => {
    ref.current?.focus({ preventScroll: true });
  }, []);
  const finish = (text: string) => {
    if (done.current) return;
    done.current = true;
    onDone(text);
  };
  return (
    <textarea
      ref={ref}
      id="board-text-input"
      class="board-text"
      aria-label={t('board.textLabel')}
      placeholder={t('board.textPlaceholder')}
      maxLength={2000}
      rows={1}
      style={{ left: `${req.left}px`, top: `${req.top}px`, color, fontSize: `${size}px` }}
      onKeyDown={(e) => {
        e.stopPropagation();
        if (e.key === 'Escape') finish('');
        else if (e.key === 'Enter' && !e.shiftKey) {
          e.preventDefault();
          finish((e.target as HTMLTextAreaElement).value);
        }
      }}
      onInput={(e) => {
        const el = e.target as HTMLTextAreaElement;
        el.style.height = 'auto';
        el.style.height = `${el.scrollHeight}px`;
      }}
      onBlur={(e) => finish((e.target as HTMLTextAreaElement).value)}
    />
  );
}
