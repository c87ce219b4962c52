import { useEffect, useRef } from 'preact/hooks';
import { t } from '../../shared/i18n';
import { PenIcon } from '../../shared/icons';

/**
 * The whiteboard region. For now a blank sheet on a real <canvas id="board">
 * that follows its box's size; the drawing tools come with the board work.
 */
export function Board({ canDraw }: { canDraw: boolean }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const el = canvas.current;
    if (!el) return;
    const paint = () => {
      const ratio = window.devicePixelRatio || 1;
      const w = Math.max(1, Math.round(el.clientWidth * ratio));
      const h = Math.max(1, Math.round(el.clientHeight * ratio));
      if (el.width !== w || el.height !== h) {
        el.width = w;
        el.height = h;
      }
      const ctx = el.getContext('2d');
      if (!ctx) return;
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, w, h);
      ctx.fillStyle = '#d5dbe5';
      const step = 24 * ratio;
      const r = Math.max(1, ratio);
      for (let y = step; y < h; y += step) {
        for (let x = step; x < w; x += step) ctx.fillRect(x - r / 2, y - r / 2, r, r);
      }
    };
    paint();
    const ro = new ResizeObserver(paint);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return (
    <section class="board" aria-labelledby="board-heading">
      <div class="section-head">
        <h2 id="board-heading">{t('board.title')}</h2>
        <span class={`pill ${canDraw ? 'pill-on' : ''}`} data-can-draw={String(canDraw)}>
          <PenIcon />
          {canDraw ? t('board.canDraw') : t('board.viewOnly')}
        </span>
      </div>
      <div class="board-frame">
        <canvas id="board" ref={canvas} role="img" aria-label={t('board.label')} />
      </div>
    </section>
  );
}
