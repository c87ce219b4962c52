// Icons of the board's tools (decorative: each button has its own label).
import type { JSX } from 'preact';

function Svg(props: { children: JSX.Element | JSX.Element[] }) {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      {props.children}
    </svg>
  );
}

const line = { fill: 'none', stroke: 'currentColor', 'stroke-width': 2, 'stroke-linecap': 'round', 'stroke-linejoin': 'round' } as const;

export const ToolIcons: Record<string, () => JSX.Element> = {
  pen: () => (
    <Svg>
      <path d="m4 20 1-4.5L15.5 5a2.1 2.1 0 0 1 3 3L8 18.5zM13.5 7l3 3" {...line} />
    </Svg>
  ),
  highlighter: () => (
    <Svg>
      <path d="m9 15 7.5-10.5 3.5 3.5L9.5 15.5zM9 15l-2 2.5 1.5 1.5 2-2" {...line} />
      <path d="M3 21h9" stroke="currentColor" stroke-width="3" stroke-linecap="round" opacity="0.5" />
    </Svg>
  ),
  line: () => (
    <Svg>
      <path d="M5 19 19 5" {...line} />
    </Svg>
  ),
  arrow: () => (
    <Svg>
      <path d="M5 19 19 5M10 5h9v9" {...line} />
    </Svg>
  ),
  rect: () => (
    <Svg>
      <rect x="4" y="6" width="16" height="12" rx="1" {...line} />
    </Svg>
  ),
  ellipse: () => (
    <Svg>
      <ellipse cx="12" cy="12" rx="8.5" ry="6.5" {...line} />
    </Svg>
  ),
  text: () => (
    <Svg>
      <path d="M5 6V4.5h14V6M12 4.5v15M9 19.5h6" {...line} />
    </Svg>
  ),
  eraser: () => (
    <Svg>
      <path d="m8.5 19.5-4-4a1.5 1.5 0 0 1 0-2.1L14 3.9a1.5 1.5 0 0 1 2.1 0l4 4a1.5 1.5 0 0 1 0 2.1l-9.5 9.5zM9.5 8.5l6 6M8.5 19.5H20" {...line} />
    </Svg>
  ),
  select: () => (
    <Svg>
      <path d="m6 3 12 9.5-5.5.8 3.2 6.2-2.4 1.2-3.2-6.3L6 18.5z" {...line} />
    </Svg>
  ),
  laser: () => (
    <Svg>
      <circle cx="12" cy="12" r="3.2" fill="currentColor" />
      <path d="M12 2.5v3M12 18.5v3M2.5 12h3M18.5 12h3M5.3 5.3l2.1 2.1M16.6 16.6l2.1 2.1M5.3 18.7l2.1-2.1M16.6 7.4l2.1-2.1" {...line} stroke-width="1.6" />
    </Svg>
  ),
};

export function UndoIcon() {
  return (
    <Svg>
      <path d="M9 14 4 9l5-5M4 9h10.5a5.5 5.5 0 0 1 0 11H11" {...line} />
    </Svg>
  );
}

export function RedoIcon() {
  return (
    <Svg>
      <path d="m15 14 5-5-5-5M20 9H9.5a5.5 5.5 0 0 0 0 11H13" {...line} />
    </Svg>
  );
}

export function TrashIcon() {
  return (
    <Svg>
      <path d="M4 7h16M10 11v6M14 11v6M5.5 7l1 12.5a1.5 1.5 0 0 0 1.5 1.5h8a1.5 1.5 0 0 0 1.5-1.5l1-12.5M9 7V4.5h6V7" {...line} />
    </Svg>
  );
}

export function PrevIcon() {
  return (
    <Svg>
      <path d="m14.5 6-6 6 6 6" {...line} />
    </Svg>
  );
}

export function NextIcon() {
  return (
    <Svg>
      <path d="m9.5 6 6 6-6 6" {...line} />
    </Svg>
  );
}

export function PlusIcon() {
  return (
    <Svg>
      <path d="M12 5v14M5 12h14" {...line} />
    </Svg>
  );
}

export function MinusIcon() {
  return (
    <Svg>
      <path d="M5 12h14" {...line} />
    </Svg>
  );
}

export function DownloadIcon() {
  return (
    <Svg>
      <path d="M12 4v11M7 10.5l5 5 5-5M5 20h14" {...line} />
    </Svg>
  );
}

export function UploadIcon() {
  return (
    <Svg>
      <path d="M12 16V5M7 9.5l5-5 5 5M5 20h14" {...line} />
    </Svg>
  );
}

export function FileIcon() {
  return (
    <Svg>
      <path d="M14 3.5H7A1.5 1.5 0 0 0 5.5 5v14A1.5 1.5 0 0 0 7 20.5h10a1.5 1.5 0 0 0 1.5-1.5V8zM14 3.5V8h4.5" {...line} />
    </Svg>
  );
}

export function CloseIcon() {
  return (
    <Svg>
      <path d="M6 6l12 12M18 6 6 18" {...line} />
    </Svg>
  );
}
