// Small inline icons (drawn here, no icon font), always decorative: the
// button or text next to them carries the meaning.
import type { JSX } from 'preact';

type P = { off?: boolean };

function Svg(props: { children: JSX.Element | JSX.Element[] }) {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      {props.children}
    </svg>
  );
}

const slash = <path d="M4 3 21 20" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" />;

export function MicIcon({ off }: P) {
  return (
    <Svg>
      <rect x="9" y="3" width="6" height="11" rx="3" fill="currentColor" />
      <path d="M6 11a6 6 0 0 0 12 0M12 17v4M8.5 21h7" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
      {off ? slash : <g />}
    </Svg>
  );
}

export function CamIcon({ off }: P) {
  return (
    <Svg>
      <rect x="3" y="6" width="13" height="12" rx="2.5" fill="currentColor" />
      <path d="m16 10.5 5-3v9l-5-3z" fill="currentColor" />
      {off ? slash : <g />}
    </Svg>
  );
}

export function ScreenIcon({ off }: P) {
  return (
    <Svg>
      <rect x="3" y="4" width="18" height="12" rx="2" fill="none" stroke="currentColor" stroke-width="2" />
      <path d="M9 20h6M12 16v4" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
      <path d="m12 7-3 3h2v3h2v-3h2z" fill="currentColor" />
      {off ? slash : <g />}
    </Svg>
  );
}

export function HandIcon() {
  return (
    <Svg>
      <path
        d="M8 12V5.5a1.5 1.5 0 0 1 3 0V11m0-6.5v-1a1.5 1.5 0 0 1 3 0V11m0-6a1.5 1.5 0 0 1 3 0v6.5m0-3a1.5 1.5 0 0 1 3 0V15a7 7 0 0 1-7 7h-.6a7 7 0 0 1-5.5-2.7L4.3 15.8a1.6 1.6 0 0 1 2.5-2L8 15.2"
        fill="none"
        stroke="currentColor"
        stroke-width="1.8"
        stroke-linecap="round"
        stroke-linejoin="round"
      />
    </Svg>
  );
}

export function PenIcon() {
  return (
    <Svg>
      <path d="m4 20 1-4.5L15.5 5a2.1 2.1 0 0 1 3 3L8 18.5zM13.5 7l3 3" fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round" />
    </Svg>
  );
}

/** Signal bars: 3 for good, 2 fair, 1 poor, outlines only when unknown. */
export function QualityBars({ level }: { level: string }) {
  const n = level === 'good' ? 3 : level === 'fair' ? 2 : level === 'poor' ? 1 : 0;
  const bars = [
    { x: 4, y: 14, h: 6 },
    { x: 10, y: 9, h: 11 },
    { x: 16, y: 4, h: 16 },
  ];
  return (
    <Svg>
      {bars.map((b, i) => (
        <rect
          x={b.x}
          y={b.y}
          width="4.5"
          height={b.h}
          rx="1"
          fill={i < n ? 'currentColor' : 'none'}
          stroke="currentColor"
          stroke-width="1.2"
          opacity={i < n ? 1 : 0.45}
        />
      ))}
    </Svg>
  );
}
