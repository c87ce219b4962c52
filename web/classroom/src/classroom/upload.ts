// Uploads a shared file (docs/classroom-whiteboard.md, "Shared files") with
// XMLHttpRequest, whose upload events give a progress bar.
import type { SharedFile } from './protocol';

export interface UploadResult {
  ok: boolean;
  file?: SharedFile;
  /** The server's own explanation, else ''. */
  error: string;
  status: number;
}

export interface Upload {
  promise: Promise<UploadResult>;
  abort(): void;
}

export function uploadFile(
  session: string,
  file: File,
  kind: 'file' | 'presentation',
  onProgress: (fraction: number) => void,
): Upload {
  const xhr = new XMLHttpRequest();
  const promise = new Promise<UploadResult>((resolve) => {
    const form = new FormData();
    form.append('kind', kind);
    form.append('file', file, file.name);
    xhr.open('POST', '/classroom/files');
    xhr.setRequestHeader('X-Lectern-Session', session);
    xhr.responseType = 'text';
    xhr.upload.onprogress = (ev) => {
      if (ev.lengthComputable && ev.total > 0) onProgress(ev.loaded / ev.total);
    };
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300 && body && typeof body === 'object' && 'id' in body) {
        onProgress(1);
        resolve({ ok: true, file: body as SharedFile, error: '', status: xhr.status });
        return;
      }
      const msg =
        body && typeof body === 'object' && 'error' in body && typeof (body as { error: unknown }).error === 'string'
          ? (body as { error: string }).error
          : xhr.responseText.trim().slice(0, 300);
      resolve({ ok: false, error: msg, status: xhr.status });
    };
    xhr.onerror = () => resolve({ ok: false, error: '', status: 0 });
    xhr.onabort = () => resolve({ ok: false, error: '', status: -1 });
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}
