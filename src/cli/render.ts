/**
 * Text for the `watch` view: the server table and the transition lines. Pure functions of the
 * status, the clock and the terminal width, so they are easy to test and to reuse.
 */
import type { ServerStatus } from '../handle/server-handle.js';
import type { TransitionEvent } from '../runtime/context/events.js';

export interface Row {
  server: string;
  state: string;
  transport: string;
  /** `legacy` (2025: initialize, a session) or `modern` (2026-07-28: stateless), as status() says; `-` until known. */
  era: string;
  sessionAge: string;
  restarts: string;
  rtt: string;
  lastError: string;
  /** The server is ready again and `lastError` is from before (shown dimmed, with its age). */
  pastError?: boolean;
}

/** The last error a server reported, and when: kept after it recovered (status().lastError is cleared). */
export interface SeenError {
  text: string;
  at: number;
}

export interface RenderOptions {
  color: boolean;
  /** Terminal width; the last-error column is cut to fit. Without one (a pipe, a file) nothing is cut. */
  width?: number | undefined;
}

const COLUMNS: { key: Exclude<keyof Row, 'pastError'>; title: string }[] = [
  { key: 'server', title: 'SERVER' },
  { key: 'state', title: 'STATE' },
  { key: 'transport', title: 'TRANSPORT' },
  { key: 'era', title: 'ERA' },
  { key: 'sessionAge', title: 'SESSION' },
  { key: 'restarts', title: 'RESTARTS' },
  { key: 'rtt', title: 'RTT' },
  { key: 'lastError', title: 'LAST ERROR' },
];

const ANSI = {
  reset: '\x1b[0m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
  red: '\x1b[31m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
  cyan: '\x1b[36m',
};

/** 850ms, 12s, 3m04s, 2h05m. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.floor(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

export function truncate(text: string, width: number): string {
  const flat = text.replace(/[\r\n\t]+/g, ' ').trimEnd();
  if (width <= 1) return flat.slice(0, Math.max(0, width));
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

/**
 * One row per server; `readySince` holds when each server last became ready, `lastErrors` the
 * last error each one reported (status().lastError is cleared once it recovers): on a ready
 * server it is history, given its age.
 */
export function rowsOf(
  status: Record<string, ServerStatus>,
  readySince: ReadonlyMap<string, number>,
  now: number,
  lastErrors: ReadonlyMap<string, SeenError> = new Map(),
): Row[] {
  return Object.values(status).map((s) => {
    const since = s.state === 'ready' ? readySince.get(s.name) : undefined;
    const seen = lastErrors.get(s.name);
    const past = s.lastError === undefined && seen !== undefined && s.state === 'ready';
    return {
      server: s.name,
      state: s.state,
      transport: s.transport ?? '-',
      era: s.era ?? '-',
      sessionAge: since === undefined ? '-' : formatDuration(now - since),
      restarts: String(s.restarts),
      rtt: s.keepalive.lastRttMs === undefined ? '-' : `${Math.round(s.keepalive.lastRttMs)}ms`,
      lastError: past ? `${formatDuration(now - seen.at)} ago: ${seen.text}` : (s.lastError ?? seen?.text ?? ''),
      ...(past ? { pastError: true } : {}),
    };
  });
}

/** Serving is green, failed red, ended dim; every other state (on its way) yellow. Typed: only states that exist. */
const STATE_COLORS: Partial<Record<ServerStatus['state'], string>> = {
  ready: ANSI.green,
  failed: ANSI.red,
  closing: ANSI.dim,
  closed: ANSI.dim,
  stopped: ANSI.dim,
  disabled: ANSI.dim,
};

function stateColor(state: string): string {
  return STATE_COLORS[state as ServerStatus['state']] ?? ANSI.yellow;
}

/** The table as lines: a header and one line per server. */
export function renderTable(rows: readonly Row[], options: RenderOptions): string[] {
  const fixed = COLUMNS.slice(0, -1);
  const widths = fixed.map((column) => Math.max(column.title.length, ...rows.map((row) => row[column.key].length)));
  const used = widths.reduce((sum, w) => sum + w + 2, 0);
  const errorWidth = options.width === undefined ? Infinity : Math.max(12, options.width - used - 1);
  const paint = (text: string, code: string) => (options.color ? `${code}${text}${ANSI.reset}` : text);
  const header = [...fixed.map((column, i) => column.title.padEnd(widths[i]!)), 'LAST ERROR'].join('  ');
  const lines = [paint(header.trimEnd(), ANSI.bold)];
  for (const row of rows) {
    const cells = fixed.map((column, i) => {
      const cell = row[column.key].padEnd(widths[i]!);
      return column.key === 'state' ? paint(cell, stateColor(row.state)) : cell;
    });
    const error = row.lastError ? paint(truncate(row.lastError, errorWidth), row.pastError ? ANSI.dim : ANSI.red) : '';
    lines.push([...cells, error].join('  ').trimEnd());
  }
  return lines;
}

function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 23);
}

/** `12:00:01.234  docs  ready -> expired  (session expired (HTTP 404))`: whole, on one line (a screen cuts it to its width). */
export function formatTransition(event: TransitionEvent, options: RenderOptions): string {
  const to = options.color ? `${stateColor(event.to)}${event.to}${ANSI.reset}` : event.to;
  const why = event.error ? `${event.cause}: ${event.error}` : event.cause;
  return `${clock(event.at)}  ${event.server}  ${event.from ?? '(start)'} -> ${to}  (${truncate(why, Infinity)})`;
}

/** A line that is not a transition (chaos, the inspector's address). */
export function formatNote(text: string, at: number, options: RenderOptions): string {
  return `${clock(at)}  ${options.color ? `${ANSI.cyan}${text}${ANSI.reset}` : text}`;
}

/** The whole screen of a terminal: title, table, then as many recent lines as fit. */
export function renderScreen(
  title: string,
  table: readonly string[],
  recent: readonly string[],
  rows: number,
  options: RenderOptions,
): string[] {
  const head = [
    options.color ? `${ANSI.bold}${title}${ANSI.reset}` : title,
    '',
    ...table,
    '',
    options.color ? `${ANSI.dim}recent transitions${ANSI.reset}` : 'recent transitions',
  ];
  const room = Math.max(3, rows - head.length - 1);
  return [...head, ...recent.slice(-room)];
}

/** Move home, draw each line over the old one, clear the rest: no flicker. */
export function screenFrame(lines: readonly string[]): string {
  return `\x1b[H${lines.map((line) => `${line}\x1b[K`).join('\n')}\n\x1b[J`;
}
