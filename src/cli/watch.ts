/**
 * `watch`: a live view of every server. On a terminal, a table redrawn on each transition (at
 * most a few times a second) and every second for the ages; otherwise one plain line per
 * transition, no ANSI. Ctrl-C (SIGINT) or SIGTERM stops the supervisor, then resolves 0.
 */
import type { Dashboard } from '../dashboard/dashboard.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { startChaos, type ChaosRun, type Fault } from './chaos.js';
import { watchFiles, type FileWatcher } from './config-watch.js';
import type { WorkloadRun } from './workload.js';
import {
  formatNote,
  formatTransition,
  renderScreen,
  renderTable,
  rowsOf,
  screenFrame,
  truncate,
  type RenderOptions,
  type SeenError,
} from './render.js';

export interface WatchOptions {
  /** Print the table once, after every server is ready or down once, then stop. */
  once?: boolean | undefined;
  /** Stop by itself after this many milliseconds. */
  durationMs?: number | undefined;
  /** Plain lines even on a terminal. */
  plain?: boolean | undefined;
  /** One JSON object per event (NDJSON): `{"type":"transition",…}`, `note`, `log`, `listChanged`, and `status` with --once. */
  json?: boolean | undefined;
  /** The first line of the screen. */
  title?: string | undefined;
  /** Lines shown before the first transition (skipped demo servers, the inspector's address). */
  notes?: readonly string[] | undefined;
  chaos?:
    | {
        faults: readonly Fault[];
        everyMs: number;
        /** Steady traffic while the faults hit (answered and lost calls are shown as notes). */
        workload?: ((note: (text: string) => void) => WorkloadRun) | undefined;
      }
    | undefined;
  out?: NodeJS.WriteStream | undefined;
  /** Follow the config files: on a change, `reload()` applies them and says what changed (or why nothing did). */
  reload?: { files: readonly string[]; reload: () => Promise<string> } | undefined;
  /** Serve the dashboard (`sup.dashboard()`) while watching; its URL is the first note. */
  ui?: { port?: number | undefined; host?: string | undefined } | undefined;
  /** Stop on SIGINT / SIGTERM (default true; the handlers stay until the process exits). */
  handleSignals?: boolean | undefined;
}

const MIN_REDRAW_MS = 200;
const TICK_MS = 1_000;
const KEPT_LINES = 500;
const REPEAT_SIGNAL_MS = 1_000;

/** Runs the view until a signal, `durationMs` or (with `once`) the first outcome; resolves with the exit code. */
export async function watch(sup: Supervisor, options: WatchOptions = {}): Promise<number> {
  const out = options.out ?? process.stdout;
  const json = options.json === true;
  const tty = !options.plain && !json && out.isTTY === true;
  /** A redrawn screen; `once` prints its table as plain lines, colored on a terminal. */
  const screen = tty && !options.once;
  const render: RenderOptions = { color: tty && !process.env.NO_COLOR, width: tty ? out.columns : undefined };
  const title = options.title ?? 'mcp-supervisor watch — Ctrl-C to stop';
  const readySince = new Map<string, number>();
  const lastErrors = new Map<string, SeenError>();
  const recent: string[] = [];
  const write = (text: string) => void out.write(text);

  let lastDraw = 0;
  let drawTimer: NodeJS.Timeout | undefined;
  const draw = () => {
    clearTimeout(drawTimer);
    drawTimer = undefined;
    lastDraw = Date.now();
    render.width = out.columns;
    const table = renderTable(rowsOf(sup.status(), readySince, Date.now(), lastErrors), render);
    const lines = recent.map((line) => truncate(line, (out.columns ?? 120) - 1));
    write(screenFrame(renderScreen(title, table, lines, out.rows ?? 24, render)));
  };
  /** A redraw soon: now if the last one is old enough, else when it is. */
  const scheduleDraw = () => {
    if (!screen || drawTimer) return;
    drawTimer = setTimeout(draw, Math.max(0, lastDraw + MIN_REDRAW_MS - Date.now()));
  };
  /** Set once `--once` wrote its status: the stop's own moves come after it and are not told. */
  let told = false;
  const emit = (type: string, fields: object) => void (told || write(`${JSON.stringify({ type, ...fields })}\n`));
  const line = (text: string) => {
    if (!screen) return write(`${text}\n`);
    recent.push(text);
    if (recent.length > KEPT_LINES) recent.shift();
    scheduleDraw();
  };

  const note = (text: string) =>
    json ? emit('note', { text, at: Date.now() }) : line(formatNote(text, Date.now(), { color: false }));
  const offTransition = sup.on('transition', (event) => {
    if (event.to === 'ready') readySince.set(event.server, event.at);
    else readySince.delete(event.server);
    if (event.error) lastErrors.set(event.server, { text: event.error, at: event.at });
    if (json) emit('transition', event);
    else if (!options.once) line(formatTransition(event, { color: false }));
  });
  const offEvents = json
    ? [
        sup.on('log', (event) => emit('log', { ...event, at: Date.now() })),
        sup.on('listChanged', (event) => emit('listChanged', { ...event, at: Date.now() })),
      ]
    : [];

  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (resolveExit = resolve));
  let stopping = false;
  let chaos: ChaosRun | undefined;
  let workload: WorkloadRun | undefined;
  let ticker: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let files: FileWatcher | undefined;
  let dashboard: Dashboard | undefined;

  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    chaos?.stop();
    workload?.stop();
    files?.close();
    clearInterval(ticker);
    clearTimeout(deadline);
    try {
      await dashboard?.close();
      await sup.stop();
    } finally {
      if (screen) {
        draw();
        write('\x1b[?25h');
      }
      offTransition();
      for (const off of offEvents) off();
      // The signal handlers stay: a late duplicate of the first signal must not kill the
      // process while the caller cleans up (the CLI exits right after).
      resolveExit(code);
    }
  };
  let firstSignalAt: number | undefined;
  function onSignal(): void {
    // A second Ctrl-C while stopping means "now". The same signal often arrives twice at once
    // (the terminal's process group, and relayed by a wrapper such as tsx or npm): not a second press.
    if (firstSignalAt !== undefined) {
      if (Date.now() - firstSignalAt > REPEAT_SIGNAL_MS) process.exit(130);
      return;
    }
    firstSignalAt = Date.now();
    void shutdown(0);
  }
  if (options.handleSignals !== false) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }

  if (screen) {
    write('\x1b[?25l\x1b[2J');
    draw();
    ticker = setInterval(draw, TICK_MS);
  }
  if (options.ui && !options.once) {
    dashboard = await sup.dashboard(options.ui);
    note(`dashboard: ${dashboard.url}`);
  }
  for (const text of options.notes ?? []) note(text);
  if (options.durationMs !== undefined) deadline = setTimeout(() => void shutdown(0), options.durationMs);

  // Before start(): a server that takes long to answer must not delay following the files.
  if (options.reload && !options.once && options.reload.files.length > 0) {
    const { reload } = options.reload;
    files = watchFiles(options.reload.files, () => {
      void reload().then((text) => {
        if (!stopping) note(text);
      });
    });
  }
  try {
    await sup.start();
  } catch (error) {
    await shutdown(1);
    throw error;
  }
  if (options.once) {
    if (!stopping) {
      const status = sup.status();
      if (json) {
        emit('status', { servers: status, at: Date.now() });
        told = true;
      } else
        for (const row of renderTable(rowsOf(status, readySince, Date.now(), lastErrors), render)) write(`${row}\n`);
      void shutdown(Object.values(status).every((s) => s.state === 'ready' || s.state === 'disabled') ? 0 : 1);
    }
  }
  if (!options.once && options.chaos && !stopping) {
    const { faults, everyMs } = options.chaos;
    chaos = startChaos(faults, everyMs, note);
    workload = options.chaos.workload?.(note);
  }
  return exited;
}
