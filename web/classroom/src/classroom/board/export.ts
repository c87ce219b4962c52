// Export, in the browser: the current page as PNG, the whole board as a
// PDF of rasterised pages (JPEG images in a hand-written PDF).
import type { Classroom } from '../client';
import { drawObject } from './draw';
import { comparePages, PAGE_H, PAGE_W } from './model';
import { openPdf, renderPdfPage } from './pdf';
import { jpegPdf, type JpegPage } from './pdfwriter';

/** pdf:<file>:<page> → [file, page], else null. */
export function parsePdfPage(id: string): [string, number] | null {
  const m = /^pdf:([^:]+):(\d+)$/.exec(id);
  return m ? [m[1], Number(m[2])] : null;
}

function urlOf(room: Classroom, file: string): string {
  const p = room.state.presentation;
  if (p && String(p.file) === file && p.url) return p.url;
  return room.state.files.find((f) => String(f.id) === file)?.url ?? '';
}

/** One board page, 1600 x 900 (times scale), presentation page underneath. */
export async function pageImage(room: Classroom, page: string, scale = 1): Promise<HTMLCanvasElement> {
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(PAGE_W * scale);
  canvas.height = Math.round(PAGE_H * scale);
  const ctx = canvas.getContext('2d')!;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  const pdf = parsePdfPage(page);
  if (pdf) {
    const url = urlOf(room, pdf[0]);
    if (url) {
      try {
        const doc = await openPdf(pdf[0], url);
        const r = await renderPdfPage(doc, pdf[0], pdf[1], scale).promise;
        ctx.drawImage(r.canvas, r.rect[0] * scale, r.rect[1] * scale, r.rect[2] * scale, r.rect[3] * scale);
      } catch {
        /* the annotations alone */
      }
    }
  }
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  for (const o of room.board.objects(page).values()) drawObject(ctx, o);
  return canvas;
}

function toBlob(c: HTMLCanvasElement, type: string, quality?: number): Promise<Blob> {
  return new Promise((resolve, reject) => c.toBlob((b) => (b ? resolve(b) : reject(new Error('toBlob'))), type, quality));
}

export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function safeName(s: string): string {
  const clean = s
    .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80);
  return clean || 'board';
}

export async function exportPng(room: Classroom, page: string, title: string): Promise<void> {
  const c = await pageImage(room, page, 1);
  download(await toBlob(c, 'image/png'), `${safeName(title)} - ${safeName(page.replace(/:/g, '-'))}.png`);
}

/** The pages the PDF holds: every blank page, then annotated presentation pages. */
export function exportPages(room: Classroom): string[] {
  const blank = room.board.blankPages();
  const annotated: string[] = [];
  for (const [id, m] of room.board.pages) if (m.size > 0 && parsePdfPage(id)) annotated.push(id);
  annotated.sort((a, b) => {
    const pa = parsePdfPage(a)!;
    const pb = parsePdfPage(b)!;
    return pa[0] === pb[0] ? pa[1] - pb[1] : comparePages(pa[0], pb[0]);
  });
  return [...blank, ...annotated];
}

export async function exportPdf(room: Classroom, title: string, onProgress?: (done: number, total: number) => void): Promise<void> {
  const ids = exportPages(room);
  const pages: JpegPage[] = [];
  for (let i = 0; i < ids.length; i++) {
    onProgress?.(i, ids.length);
    const c = await pageImage(room, ids[i], 1);
    const blob = await toBlob(c, 'image/jpeg', 0.9);
    pages.push({ jpeg: new Uint8Array(await blob.arrayBuffer()), width: c.width, height: c.height });
  }
  onProgress?.(ids.length, ids.length);
  download(jpegPdf(pages, title), `${safeName(title)}.pdf`);
}
