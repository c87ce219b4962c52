// The open presentation's page under the board: pdf.js renders it (loaded
// on first use), the view shows it, sharper again after zooming in. Shared
// by the live board and a recording's replay.
import type { RefObject } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { openPdf, renderPdfPage, type PdfRender, type RenderedPage } from '../board/pdf';
import type { BoardView } from '../board/view';
import type { Presentation } from '../protocol';

export type PresState = 'idle' | 'loading' | 'ready' | 'error';

/** Renders pres's page into view; answers the state and the document's page count once known. */
export function usePresentationPage(viewRef: RefObject<BoardView | null>, pres: Presentation | null): [PresState, number] {
  const [presState, setPresState] = useState<PresState>('idle');
  const [docPages, setDocPages] = useState(0);
  useEffect(() => {
    const view = viewRef.current;
    if (!view) return;
    if (!pres) {
      view.setRendered(null, '');
      setPresState('idle');
      return;
    }
    const file = String(pres.file);
    const key = `${file}:${pres.page}`;
    let cancelled = false;
    let job: PdfRender | null = null;
    let shown: RenderedPage | null = null;
    let running = false;
    const run = () => {
      if (cancelled || running) return;
      running = true;
      job?.cancel();
      openPdf(file, pres.url)
        .then((doc) => {
          if (cancelled) return;
          setDocPages(doc.numPages);
          const n = Math.min(Math.max(1, pres.page), doc.numPages);
          job = renderPdfPage(doc, file, n, view.pixelScale());
          return job.promise.then((r) => {
            if (cancelled) return;
            shown = r;
            view.setRendered(r, key);
            setPresState('ready');
          });
        })
        .catch(() => {
          if (!cancelled) setPresState('error');
        })
        .finally(() => {
          running = false;
          if (!cancelled && shown && view.wantsSharper(shown)) run();
        });
    };
    view.onLayout = () => {
      if (shown && view.wantsSharper(shown)) run();
    };
    if (view.presKeyShown() !== key) {
      view.setRendered(null, '');
      setPresState('loading');
    }
    run();
    return () => {
      cancelled = true;
      job?.cancel();
      view.onLayout = () => {};
    };
  }, [pres?.file, pres?.page, pres?.url, pres?.zoom]);
  return [presState, docPages];
}
