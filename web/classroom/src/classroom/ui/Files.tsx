import { useRef, useState } from 'preact/hooks';
import { language, t } from '../../shared/i18n';
import type { Classroom, State } from '../client';
import type { SharedFile } from '../protocol';
import { uploadFile, type Upload } from '../upload';
import { DownloadIcon, FileIcon, UploadIcon } from './boardIcons';
import { clockTime } from './format';

export interface UploadState {
  busy: boolean;
  name: string;
  progress: number;
  error: string;
  /** A presentation being converted by the server: its file id. */
  waitingFor: number | string | null;
  setWaitingFor(id: number | string | null): void;
  setError(e: string): void;
  start(f: File): void;
  abort(): void;
}

/** One upload at a time, with its progress and the server's error text. */
export function useUpload(room: Classroom, kind: 'file' | 'presentation'): UploadState {
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState('');
  const [progress, setProgress] = useState(0);
  const [error, setError] = useState('');
  const [waitingFor, setWaitingFor] = useState<number | string | null>(null);
  const current = useRef<Upload | null>(null);
  const start = (f: File) => {
    if (current.current) return;
    setBusy(true);
    setName(f.name);
    setProgress(0);
    setError('');
    setWaitingFor(null);
    const up = uploadFile(room.session(), f, kind, setProgress);
    current.current = up;
    void up.promise.then((r) => {
      current.current = null;
      setBusy(false);
      if (r.ok && r.file) {
        room.mergeFile(r.file);
        if (kind === 'presentation') {
          if (r.file.status === 'converting') setWaitingFor(r.file.id);
          else if (r.file.status === 'failed') setError(failedText(r.file));
          else void room.openPresentation(r.file.id);
        }
        return;
      }
      if (r.status === -1) return; // cancelled
      setError(r.error || (r.status ? t('upload.failedStatus', { status: r.status }) : t('upload.failedNetwork')));
    });
  };
  return {
    busy,
    name,
    progress,
    error,
    waitingFor,
    setWaitingFor,
    setError,
    start,
    abort: () => current.current?.abort(),
  };
}

export function failedText(f: SharedFile): string {
  return f.error ? `${t('files.convertFailed', { name: f.name })} ${f.error}` : t('files.convertFailed', { name: f.name });
}

export function UploadStatus({ u, room }: { u: UploadState; room?: Classroom }) {
  const converting = u.waitingFor !== null;
  const file = converting && room ? room.state.files.find((x) => String(x.id) === String(u.waitingFor)) : undefined;
  return (
    <div class="upload-status" aria-live="polite">
      {u.busy ? (
        <div class="upload-progress" data-testid="upload-progress">
          <span class="upload-name">{t('upload.uploading', { name: u.name })}</span>
          <progress max={1} value={u.progress} aria-label={t('upload.progress', { name: u.name })} />
          <span class="upload-pct">{Math.round(u.progress * 100)}%</span>
          <button type="button" class="btn btn-small" onClick={u.abort}>
            {t('upload.cancel')}
          </button>
        </div>
      ) : null}
      {converting ? (
        <div class="upload-progress" data-testid="converting">
          <span class="spinner spinner-small" aria-hidden="true" />
          <span>{t('files.converting', { name: file?.name ?? u.name })}</span>
        </div>
      ) : null}
      {u.error ? (
        <div class="error" role="alert" data-testid="upload-error">
          <span class="error-text">{u.error}</span>
          <button type="button" class="icon-btn" aria-label={t('common.dismiss')} onClick={() => u.setError('')}>
            ×
          </button>
        </div>
      ) : null}
    </div>
  );
}

const sizes = new Map<string, Intl.NumberFormat>();

function formatSize(bytes: number): string {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
  let v = Math.max(0, bytes || 0);
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  const key = `${language()}:${units[i]}`;
  let f = sizes.get(key);
  if (!f) {
    f = new Intl.NumberFormat(language(), { style: 'unit', unit: units[i], unitDisplay: 'short', maximumFractionDigits: i ? 1 : 0 });
    sizes.set(key, f);
  }
  return f.format(v);
}

/** The room opens only files shared as presentations, once ready. */
export function presentable(f: SharedFile): boolean {
  return f.kind === 'presentation' && (!f.status || f.status === 'ready');
}

export function Files({ room, s }: { room: Classroom; s: State }) {
  const op = s.permissions.includes('op');
  const canUpload = op || s.permissions.includes('files');
  const upload = useUpload(room, 'file');
  const joined = s.phase === 'joined' && !s.reconnecting;
  const files = [...s.files].reverse();
  return (
    <section class="files" aria-labelledby="files-heading">
      <div class="section-head">
        <h2 id="files-heading">{t('files.title', { count: s.files.length })}</h2>
        {op ? (
          <button
            type="button"
            id="allow-files-all"
            class={`btn btn-small ${s.filesAll ? 'btn-on' : ''}`}
            aria-pressed={s.filesAll ? 'true' : 'false'}
            disabled={!joined}
            onClick={() => room.room(s.filesAll ? 'revoke-files-all' : 'allow-files-all')}
          >
            {t('files.allowAll')}
          </button>
        ) : null}
        {canUpload ? (
          <label class={`btn btn-small upload-btn ${!joined || upload.busy ? 'is-disabled' : ''}`}>
            <UploadIcon />
            <span>{t('files.upload')}</span>
            <input
              type="file"
              id="file-upload"
              class="file-input"
              disabled={!joined || upload.busy}
              onChange={(e) => {
                const el = e.target as HTMLInputElement;
                const f = el.files?.[0];
                if (f) upload.start(f);
                el.value = '';
              }}
            />
          </label>
        ) : null}
      </div>
      <UploadStatus u={upload} room={room} />
      {files.length === 0 ? (
        <p class="files-empty">{canUpload ? t('files.emptyUpload') : t('files.empty')}</p>
      ) : (
        <ul class="file-list">
          {files.map((f) => {
            const status = f.status || 'ready';
            const mine = f.by === s.you?.userId;
            return (
              <li key={String(f.id)} class="file" data-testid="file" data-file-id={String(f.id)} data-status={status}>
                <FileIcon />
                <div class="file-main">
                  <span class="file-name">{f.name}</span>
                  <span class="file-meta">
                    {formatSize(f.size)} · {mine ? t('files.byYou') : f.byName || f.by} · {clockTime(f.at)}
                  </span>
                  {status !== 'ready' ? (
                    <span class={`file-status file-status-${status}`} data-status={status} role="status">
                      {status === 'converting' ? (
                        <>
                          <span class="spinner spinner-small" aria-hidden="true" /> {t('files.statusConverting')}
                        </>
                      ) : status === 'failed' ? (
                        f.error ? `${t('files.statusFailed')} ${f.error}` : t('files.statusFailed')
                      ) : (
                        status
                      )}
                    </span>
                  ) : null}
                </div>
                <div class="file-actions">
                  {op && presentable(f) ? (
                    <button
                      type="button"
                      class="btn btn-small"
                      data-action="present"
                      disabled={!joined || String(s.presentation?.file) === String(f.id)}
                      onClick={() => void room.openPresentation(f.id)}
                    >
                      {t('files.present')}
                    </button>
                  ) : null}
                  {f.url ? (
                    <a class="download btn btn-small" href={f.url} download={f.name}>
                      <DownloadIcon />
                      <span>{t('files.download')}</span>
                      <span class="sr-only"> {f.name}</span>
                    </a>
                  ) : null}
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
