/**
 * What the features nobody turned on cost per call (issue #31 must-hold 3: ≤ 2 % each), measured
 * the way bench/limits.ts measures the unused limits: `callTool('echo')` on connections whose
 * transport answers in memory (no network, no server: the client's own path is all that is
 * timed, the largest share a feature's check can be), 64 at a time, the modes taking turns every
 * 256 calls in a rotating order, client CPU per call (`process.cpuUsage`) summed per round, the
 * figure the median of the per-round ratios with their interquartile range.
 *
 * - `defaults`: `connect()` with nothing turned on (no OpenTelemetry SDK, no interceptors, no store);
 * - `observability cut out`: the same build with the request path's telemetry and call-event hooks
 *   cut out (`RequestPath.request` without `startOperation`, `telemetry.track`, `calls.track`);
 * - `interceptors cut out`: `callTool` straight to ServerTools' path to the server (as before
 *   interceptors existed, like bench/interceptors.ts's `before`);
 * - `store given`: `connect()` with `memoryStore()`; no store reaches the request path, so this
 *   reads what having one costs per call (the A/B's reference is `defaults`).
 *
 *   node --expose-gc .bench-build/bench/unused-features.js [--quick] [--json file]
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { connect, memoryStore, type ServerHandle } from '../src/index.js';
import { answerInMemory, pathRound, ratioOf, type Ratio } from './limits.js';
import { startServer } from './measure.js';
import { mayRequireInput } from '../src/runtime/requests/multi-round-trip.js';

const MODES = ['defaults', 'observability cut out', 'interceptors cut out', 'store given'] as const;
type Mode = (typeof MODES)[number];

export interface UnusedCounts {
  rounds: number;
  callsPerRound: number;
}
export const UNUSED_FULL: UnusedCounts = { rounds: 60, callsPerRound: 20_480 };
export const UNUSED_QUICK: UnusedCounts = { rounds: 3, callsPerRound: 1_024 };

export interface UnusedReport {
  counts: UnusedCounts;
  /** Client CPU µs per call, median round. */
  cpuUs: Record<Mode, number>;
  /** Unused vs cut out (or with vs without a store): the per-round ratios' median and IQR. */
  telemetry: Ratio;
  interceptors: Ratio;
  store: Ratio;
}

interface RequestPathInside {
  context: {
    name: string;
    pending: { create(m: string, p: unknown, o: unknown): { request: unknown; promise: Promise<unknown> } };
  };
  headers: { refusal(params: unknown, server: string): Error | undefined } | undefined;
  mirrorsToolHeaders: boolean;
  createOptions(options: unknown): unknown;
  enqueue(request: unknown): void;
  learnTools(result: unknown, firstPage: boolean): void;
  request: unknown;
}

/**
 * `RequestPath.request` line for line without the telemetry and call-event hooks (`startOperation`,
 * `telemetry.track`, `calls.track`). A 2025-era `tools/call` never requires input rounds
 * (`mayRequireInput` is about the modern era's `InputRequiredResult`), so that branch reads as the
 * original's check alone.
 */
function cutOutObservability(handle: ServerHandle): ServerHandle {
  const path = Reflect.get(Reflect.get(handle, 'runtime') as object, 'requests') as RequestPathInside;
  if (
    typeof path?.request !== 'function' ||
    typeof path.enqueue !== 'function' ||
    typeof path.createOptions !== 'function'
  )
    throw new Error('the request path changed: cannot cut the observability hooks out for the A/B');
  path.request = function (
    this: RequestPathInside,
    method: string,
    params: Record<string, unknown> | undefined,
    options: unknown,
  ) {
    const context = this.context;
    if (method === 'tools/call' && this.mirrorsToolHeaders) {
      const refusal = this.headers?.refusal(params, context.name);
      if (refusal) return Promise.reject(refusal);
    }
    const { request, promise: answered } = context.pending.create(method, params, this.createOptions(options));
    const promise = mayRequireInput(method) ? answered.then((result) => result) : answered;
    this.enqueue(request);
    if (method === 'tools/list')
      promise.then(
        (result) => this.learnTools(result, params?.cursor === undefined),
        () => {},
      );
    return promise;
  };
  return handle;
}

interface ToolsInside {
  tools: { callServer(name: string, args: Record<string, unknown>, options: undefined): Promise<unknown> };
}

/** `callTool` as it went before interceptors: ServerTools' own path to the server. */
function cutOutInterceptors(handle: ServerHandle): ServerHandle {
  const tools = (handle as unknown as ToolsInside).tools;
  if (typeof tools?.callServer !== 'function') throw new Error('ServerTools changed: cannot cut the interceptors out');
  handle.callTool = ((name: string, args: Record<string, unknown>) =>
    tools.callServer(name, args, undefined)) as ServerHandle['callTool'];
  return handle;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function runUnusedFeatures(counts: UnusedCounts): Promise<UnusedReport> {
  const server = await startServer('json');
  const base = { url: server.url, type: 'http' as const, keepalive: false as const };
  const handles: Record<Mode, ServerHandle> = {
    defaults: answerInMemory(await connect(base, { name: 'defaults' })),
    'observability cut out': answerInMemory(cutOutObservability(await connect(base, { name: 'no-hooks' }))),
    'interceptors cut out': answerInMemory(cutOutInterceptors(await connect(base, { name: 'no-interceptors' }))),
    'store given': answerInMemory(await connect(base, { name: 'store', store: memoryStore() })),
  };
  try {
    for (let i = 0; i < 5; i++) for (const mode of MODES) await pathRound(handles[mode], 2_000); // warm-up
    const SLICE = 256;
    const perRound: Record<Mode, number[]> = {
      defaults: [],
      'observability cut out': [],
      'interceptors cut out': [],
      'store given': [],
    };
    for (let r = 0; r < counts.rounds; r++) {
      const sums = { defaults: 0, 'observability cut out': 0, 'interceptors cut out': 0, 'store given': 0 };
      let slices = 0;
      for (let done = 0; done < counts.callsPerRound; done += SLICE, slices++) {
        // Each mode in each place of the order in turn: a passing load or a collection lands on all alike.
        for (let k = 0; k < MODES.length; k++) {
          const mode = MODES[(k + slices) % MODES.length]!;
          sums[mode] += await pathRound(handles[mode], SLICE);
        }
      }
      for (const mode of MODES) perRound[mode].push(sums[mode] / slices);
    }
    const ratios = (a: Mode, b: Mode) => ratioOf(perRound[a].map((x, i) => x / perRound[b][i]!));
    return {
      counts,
      cpuUs: Object.fromEntries(MODES.map((m) => [m, Math.round(median(perRound[m]) * 100) / 100])) as Record<
        Mode,
        number
      >,
      telemetry: ratios('defaults', 'observability cut out'),
      interceptors: ratios('defaults', 'interceptors cut out'),
      store: ratios('store given', 'defaults'),
    };
  } finally {
    for (const mode of MODES) await handles[mode].close();
    server.child.kill();
  }
}

export function formatUnused(report: UnusedReport): string {
  const pct = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(2)}%`;
  const row = (what: string, r: Ratio) =>
    `  ${what.padEnd(44)}${pct(r.median).padStart(8)} CPU per call (IQR ${pct(r.q1)} … ${pct(r.q3)})`;
  const { cpuUs } = report;
  return [
    `Features unused, per call on the client's path (the transport answers in memory), ${report.counts.rounds} interleaved rounds of ${report.counts.callsPerRound} calls, 64 in flight:`,
    `  CPU µs per call: defaults ${cpuUs.defaults}, observability cut out ${cpuUs['observability cut out']}, interceptors cut out ${cpuUs['interceptors cut out']}, store given ${cpuUs['store given']}`,
    `  A/B (must hold: ≤ +2% each; limits: bench/limits.ts)`,
    row('telemetry + call events unused vs cut out', report.telemetry),
    row('interceptors unused vs cut out', report.interceptors),
    row('a store given vs none (not on the path)', report.store),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const report = await runUnusedFeatures(argv.includes('--quick') ? UNUSED_QUICK : UNUSED_FULL);
  process.stdout.write(`${formatUnused(report)}\n`);
  const out = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : undefined;
  if (out) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
}
