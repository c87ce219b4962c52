// Presentations: pdf.js, loaded only when a presentation is open (its
// library is a chunk of its own and its worker a fixed file next to the
// other assets, never a CDN), and the rendering of one page into a
// canvas of its own that the board view scales onto the screen.
import type { PDFDocumentProxy } from 'pdfjs-dist';
import { PAGE_H, PAGE_W } from './model';

type PdfJs = typeof import('pdfjs-dist');

let lib: Promise<PdfJs> | null = null;

export function loadPdfJs(): Promise<PdfJs> {
  if (!lib) {
    lib = import('pdfjs-dist').then((m) => {
      m.GlobalWorkerOptions.workerSrc = `${import.meta.env.BASE_URL}pdf-worker.js`;
      return m;
    });
    lib.catch(() => {
      lib = null; // try again next time
    });
  }
  return lib;
}

const docs = new Map<string, Promise<PDFDocumentProxy>>();

/** The document of a shared file (by id), loaded once per page load. */
export function openPdf(file: string, url: string): Promise<PDFDocumentProxy> {
  let p = docs.get(file);
  if (!p) {
    p = loadPdfJs().then(
      (m) =>
        m.getDocument({
          url,
          enableXfa: false,
          useWasm: false,
        }).promise,
    );
    docs.set(file, p);
    p.catch(() => docs.delete(file));
  }
  return p;
}

/** Where a page of w x h sits on the 1600 x 900 board page: fitted and centred. */
export function fitRect(w: number, h: number): [number, number, number, number] {
  const k = Math.min(PAGE_W / w, PAGE_H / h);
  const fw = w * k;
  const fh = h * k;
  return [(PAGE_W - fw) / 2, (PAGE_H - fh) / 2, fw, fh];
}

export interface RenderedPage {
  file: string;
  page: number;
  /** The rendered page, pixel size as asked. */
  canvas: HTMLCanvasElement;
  /** Where it goes on the board page (x, y, w, h in page units). */
  rect: [number, number, number, number];
}

const MAX_SIDE = 4096;

export interface PdfRender {
  promise: Promise<RenderedPage>;
  cancel(): void;
}

/**
 * Renders page pageNo so that it is widthPx pixels wide on the board page
 * scale (pixels per page unit = scale): capped to a sane canvas size.
 */
export function renderPdfPage(doc: PDFDocumentProxy, file: string, pageNo: number, scale: number): PdfRender {
  let cancelled = false;
  let task: { cancel(): void } | null = null;
  const promise = (async () => {
    const page = await doc.getPage(pageNo);
    if (cancelled) throw new Error('cancelled');
    const base = page.getViewport({ scale: 1 });
    const rect = fitRect(base.width, base.height);
    let k = (rect[2] / base.width) * scale;
    const side = Math.max(base.width, base.height) * k;
    if (side > MAX_SIDE) k *= MAX_SIDE / side;
    const viewport = page.getViewport({ scale: k });
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.ceil(viewport.width));
    canvas.height = Math.max(1, Math.ceil(viewport.height));
    const render = page.render({ canvas, viewport, background: '#ffffff' });
    task = render;
    await render.promise;
    if (cancelled) throw new Error('cancelled');
    return { file, page: pageNo, canvas, rect };
  })();
  return {
    promise,
    cancel() {
      cancelled = true;
      task?.cancel();
    },
  };
}
