/**
 * Backpressure and limits per server (issue #28 items 3, 4 and 7):
 *
 * - a server answering 429 with `Retry-After: 2` to a burst of 100 calls, for 2 s from its first
 *   429: the requests that reach it while it is busy beyond the burst itself (expected 0: nothing
 *   is sent during the window), how many calls were answered, and when (after the window);
 * - what the limits cost per call when unused (the defaults: `maxInFlight` 128 never reached, no
 *   rate limit; must hold: ≤ 2 %), `tools/call` against the bench server in a child process. The
 *   A/B: the same build with the limits' check cut out of the request path (`dispatch` sends
 *   straight to the transport, as before the limits existed), beside the default connection and
 *   one whose rate limit is set and never reached (every request takes the limits' slow path).
 *   Noise-robust: the modes take turns every 250 calls (every order in turn, so a drifting load or
 *   a garbage collection lands on all alike), summed per round; the client's CPU time per call
 *   (`process.cpuUsage`: the server runs in another process, and a busy machine slows wall time
 *   more than CPU time), and the figure is the median of the per-round ratios, with their
 *   interquartile range. Also the unused check alone, timed in a loop, as a share of a call's CPU.
 *
 * With `--baseline <built index.js>` (e.g. an earlier commit's `.bench-build/src/index.js`), a
 * connection made with that build joins the alternating rounds: the A/B of the same calls with and
 * without the limits' code, in one process, against one server.
 *
 *   npm run bench (after the main bench)   or   node --expose-gc .bench-build/bench/limits.js [--quick] [--json file] [--baseline file]
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { connect, ServerBusyError, type ServerHandle } from '../src/index.js';
import { RequestLimits } from '../src/runtime/requests/request-limits.js';
import type { ServerContext } from '../src/runtime/context/server-context.js';
import { startHttpFixture } from '../servers/http-fixture.js';
import { startServer } from './measure.js';

export interface LimitsCounts {
  burst: number;
  retryAfterSeconds: number;
  rounds: number;
  callsPerRound: number;
  concurrency: number;
  checkLoops: number;
  /** The client-path A/B (answers in memory): rounds, and calls per round and mode. */
  pathRounds: number;
  pathCallsPerRound: number;
}
export const LIMITS_FULL: LimitsCounts = {
  burst: 100,
  retryAfterSeconds: 2,
  rounds: 30,
  callsPerRound: 3000,
  concurrency: 64,
  checkLoops: 5_000_000,
  pathRounds: 100,
  pathCallsPerRound: 20_000,
};
export const LIMITS_QUICK: LimitsCounts = {
  burst: 20,
  retryAfterSeconds: 1,
  rounds: 4,
  callsPerRound: 200,
  concurrency: 8,
  checkLoops: 10_000,
  pathRounds: 20,
  pathCallsPerRound: 200,
};

export interface BackpressureResult {
  burst: number;
  retryAfterSeconds: number;
  /** Calls sent again that reached the server while it answered 429 (expected 0: nothing is sent during the window). */
  sentDuringWindow: number;
  answered: number;
  /** From the first to the last request of the burst reaching the server (each answered 429), ms. */
  burstSpreadMs: number;
  /** From the server's first 429 to the first and the last answer, ms. */
  firstAnswerMs: number;
  lastAnswerMs: number;
}

type Mode =
  'limits unused (defaults)' | 'limits cut out (same build)' | 'rate limit set, never reached' | 'baseline build';

/** A mode against the limits cut out, round by round: the median ratio and its interquartile range. */
export interface Ratio {
  median: number;
  q1: number;
  q3: number;
}

export interface LimitsReport {
  counts: LimitsCounts;
  backpressure: BackpressureResult;
  modes: Partial<Record<Mode, { callsPerSecond: number; cpuUsPerCall: number; cpuRatio?: Ratio; wallRatio?: Ratio }>>;
  /** The unused limits' check on the hot path, timed alone: ns per call. */
  unusedCheckNs: number;
  /**
   * The client's own path alone (the transport answers in memory, no network, no server): CPU µs
   * per call with the limits cut out and unused, and the per-round ratio (unused / cut out).
   */
  clientPath: { cutOutUs: number; unusedUs: number; ratio: Ratio; rounds: number; callsPerRound: number };
}

export async function measureBackpressure(burst: number, retryAfterSeconds: number): Promise<BackpressureResult> {
  const server = await startHttpFixture();
  const handle = await connect({ url: server.url, protocolVersion: 'legacy', keepalive: false }, { name: 'busy' });
  try {
    server.faults.busy = { status: 429, retryAfter: String(retryAfterSeconds) };
    const calls = () => server.requests.filter((r) => r.rpcMethod === 'tools/call');
    let busySince = 0;
    let busyUntil = Infinity;
    // The server stays busy for the Retry-After it names, from its first 429.
    const watch = setInterval(() => {
      const first = calls()[0];
      if (first && busySince === 0) {
        busySince = first.at;
        busyUntil = busySince + retryAfterSeconds * 1000;
        setTimeout(() => (server.faults.busy = undefined), busyUntil - Date.now());
      }
    }, 1);
    const answeredAt: number[] = [];
    const results = await Promise.allSettled(
      Array.from({ length: burst }, (_, i) =>
        handle.callTool('echo', { text: `${i}` }).then((answer) => (answeredAt.push(Date.now()), answer)),
      ),
    );
    clearInterval(watch);
    // A call sent again (its text seen before) while the server was busy: what the window must prevent.
    const seen = new Set<string>();
    let whileBusy = 0;
    for (const r of calls()) {
      const text = String((r.body as { params?: { arguments?: { text?: unknown } } }).params?.arguments?.text);
      if (seen.has(text) && r.at < busyUntil) whileBusy++;
      seen.add(text);
    }
    const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (failed.some((error) => !(error instanceof ServerBusyError))) throw failed[0];
    return {
      burst,
      retryAfterSeconds,
      sentDuringWindow: whileBusy,
      burstSpreadMs: calls()[burst - 1]!.at - busySince,
      answered: results.length - failed.length,
      firstAnswerMs: Math.min(...answeredAt) - busySince,
      lastAnswerMs: Math.max(...answeredAt) - busySince,
    };
  } finally {
    await handle.close();
    await server.close();
  }
}

async function round(handle: ServerHandle, calls: number, concurrency: number) {
  let next = 0;
  const worker = async () => {
    while (next++ < calls) await handle.callTool('echo', {});
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { callsPerSecond: calls / seconds, cpuUsPerCall: (used.user + used.system) / calls };
}

const gc = (globalThis as { gc?: () => void }).gc;

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.min(low + 1, sorted.length - 1)]! - sorted[low]!) * (at - low);
};
const median = (values: number[]) => quantile(values, 0.5);
export const ratioOf = (values: number[]): Ratio => ({
  median: round4(quantile(values, 0.5)),
  q1: round4(quantile(values, 0.25)),
  q3: round4(quantile(values, 0.75)),
});
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * The B of the A/B: this connection's request path with the limits' check cut out (`dispatch`
 * puts every request straight on the wire, as the path did before the limits), same build.
 */
function cutOutLimits(handle: ServerHandle): ServerHandle {
  const path = (Reflect.get(Reflect.get(handle, 'runtime') as object, 'requests') ?? {}) as {
    dispatch?: unknown;
    put?: unknown;
  };
  if (typeof path.dispatch !== 'function' || typeof path.put !== 'function')
    throw new Error('the request path changed: cannot cut the limits out for the A/B');
  path.dispatch = function (
    this: { put(request: unknown, handshake: boolean): void },
    request: unknown,
    handshake: boolean,
  ) {
    this.put(request, handshake);
  };
  return handle;
}

/** The hot path's check with the limits unused (what `dispatch` reads before the transport), alone. */
function unusedCheckNs(loops: number): number {
  const context = {
    config: { maxInFlight: 128, rateLimit: undefined },
    pending: { size: 1 },
    gate: { waiting: 0, limited: 0 },
  } as unknown as ServerContext;
  const limits = new RequestLimits(context, () => {});
  let sent = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < loops; i++) if (limits.free && limits.inFlight() <= limits.maxInFlight) sent++;
  const ns = Number(process.hrtime.bigint() - started) / loops;
  if (sent !== loops) throw new Error('the unused limits held a request');
  return Math.round(ns * 100) / 100;
}

/**
 * The transport of this connection answers every request in memory, on the next microtask: what
 * is left to time is the client's own path (request path, pending requests, result checks).
 */
export function answerInMemory(handle: ServerHandle): ServerHandle {
  const runtime = Reflect.get(handle, 'runtime') as object;
  const context = Reflect.get(runtime, 'context') as {
    transport?: { send: unknown; sink: { onMessage(message: object): void } };
  };
  const transport = context.transport;
  if (!transport) throw new Error('no transport to answer in memory');
  const result = { content: [{ type: 'text', text: 'ok' }] };
  transport.send = (message: { id?: unknown }) => {
    if (message.id !== undefined)
      queueMicrotask(() => transport.sink.onMessage({ jsonrpc: '2.0', id: message.id, result }));
    return Promise.resolve();
  };
  return handle;
}

/** One mode's client CPU for `calls` in-memory calls, 64 at a time. */
export async function pathRound(handle: ServerHandle, calls: number): Promise<number> {
  const cpu = process.cpuUsage();
  for (let sent = 0; sent < calls; sent += 64)
    await Promise.all(Array.from({ length: Math.min(64, calls - sent) }, () => handle.callTool('echo', {})));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / calls;
}

/** The A/B on the client's path alone: limits unused vs cut out, interleaved finely (AB, BA, …). */
async function measureClientPath(url: string, counts: LimitsCounts): Promise<LimitsReport['clientPath']> {
  const base = { url, type: 'http' as const, keepalive: false as const };
  const unused = answerInMemory(await connect(base, { name: 'path-unused' }));
  const cut = answerInMemory(cutOutLimits(await connect(base, { name: 'path-cut' })));
  try {
    for (let i = 0; i < 5; i++) for (const h of [unused, cut]) await pathRound(h, 2_000); // warm-up
    // Fine-grained interleaving: the modes alternate every SLICE calls (AB, then BA), each
    // mode's CPU summed over a round of many alternations. A passing load, or a young-generation
    // collection, lands on both alike; the ratio is read per round, the figure is their median.
    const ratios: number[] = [];
    const a: number[] = [];
    const b: number[] = [];
    const SLICE = 256;
    for (let r = 0; r < counts.pathRounds; r++) {
      let u = 0;
      let c = 0;
      for (let done = 0; done < counts.pathCallsPerRound; done += SLICE) {
        const unusedFirst = (done / SLICE) % 2 === 0;
        const x = await pathRound(unusedFirst ? unused : cut, SLICE);
        const y = await pathRound(unusedFirst ? cut : unused, SLICE);
        u += unusedFirst ? x : y;
        c += unusedFirst ? y : x;
      }
      a.push(u / (counts.pathCallsPerRound / SLICE));
      b.push(c / (counts.pathCallsPerRound / SLICE));
      ratios.push(u / c);
    }
    return {
      cutOutUs: Math.round(median(b) * 100) / 100,
      unusedUs: Math.round(median(a) * 100) / 100,
      ratio: ratioOf(ratios),
      rounds: counts.pathRounds,
      callsPerRound: counts.pathCallsPerRound,
    };
  } finally {
    await unused.close();
    await cut.close();
  }
}

type Connect = (config: Record<string, unknown>, options: { name: string }) => Promise<ServerHandle>;

export async function runLimitsBench(counts: LimitsCounts, baseline?: string): Promise<LimitsReport> {
  const backpressure = await measureBackpressure(counts.burst, counts.retryAfterSeconds);
  const server = await startServer('json');
  const base = { url: server.url, type: 'http' as const, keepalive: false as const };
  const handles: Partial<Record<Mode, ServerHandle>> = {
    'limits unused (defaults)': await connect(base, { name: 'unused' }),
    'limits cut out (same build)': cutOutLimits(await connect(base, { name: 'cut' })),
    'rate limit set, never reached': await connect(
      { ...base, rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } },
      { name: 'rate' },
    ),
  };
  if (baseline) {
    const older = (await import(pathToFileURL(baseline).href)) as { connect: Connect };
    handles['baseline build'] = await older.connect(base, { name: 'baseline' });
  }
  const clientPath = await measureClientPath(server.url, counts);
  const modes = Object.keys(handles) as Mode[];
  const samples = Object.fromEntries(
    modes.map((mode) => [mode, [] as { callsPerSecond: number; cpuUsPerCall: number }[]]),
  );
  try {
    // Warm-up: the JIT settles on every path before the rounds count.
    for (const mode of modes) await round(handles[mode]!, Math.max(2_000, counts.callsPerRound), counts.concurrency);
    const orders = permutations(modes);
    // Each round: the modes take turns every SLICE calls (every order in turn), each mode's CPU and
    // time summed over the round; a passing load or a collection lands on all of them alike.
    const SLICE = 250;
    gc?.();
    for (let r = 0; r < counts.rounds; r++) {
      const sums = new Map(modes.map((mode) => [mode, { cpu: 0, seconds: 0 }]));
      for (let done = 0, turn = 0; done < counts.callsPerRound; done += SLICE, turn++)
        for (const mode of orders[(r + turn) % orders.length]!) {
          const slice = await round(handles[mode]!, SLICE, counts.concurrency);
          const sum = sums.get(mode)!;
          sum.cpu += slice.cpuUsPerCall * SLICE;
          sum.seconds += SLICE / slice.callsPerSecond;
        }
      for (const [mode, sum] of sums)
        samples[mode]!.push({
          cpuUsPerCall: sum.cpu / counts.callsPerRound,
          callsPerSecond: counts.callsPerRound / sum.seconds,
        });
    }
  } finally {
    for (const handle of Object.values(handles)) await handle.close();
    server.child.kill();
  }
  const cut = samples['limits cut out (same build)']!;
  const result = (mode: Mode) => ({
    callsPerSecond: Math.round(median(samples[mode]!.map((s) => s.callsPerSecond))),
    cpuUsPerCall: Math.round(median(samples[mode]!.map((s) => s.cpuUsPerCall)) * 10) / 10,
    ...(mode === 'limits cut out (same build)'
      ? {}
      : {
          // Per round: this mode's CPU per call over the cut-out's in the same round (> 1: costs more).
          cpuRatio: ratioOf(samples[mode]!.map((s, i) => s.cpuUsPerCall / cut[i]!.cpuUsPerCall)),
          wallRatio: ratioOf(samples[mode]!.map((s, i) => cut[i]!.callsPerSecond / s.callsPerSecond)),
        }),
  });
  return {
    counts,
    backpressure,
    modes: Object.fromEntries(modes.map((mode) => [mode, result(mode)])),
    unusedCheckNs: unusedCheckNs(counts.checkLoops),
    clientPath,
  };
}

export function formatLimits(report: LimitsReport): string {
  const b = report.backpressure;
  const unused = report.modes['limits unused (defaults)']!;
  const pct = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(2)}%`;
  const row = (mode: Mode) => {
    const m = report.modes[mode];
    if (!m) return [];
    const versus = m.cpuRatio
      ? `   CPU ${pct(m.cpuRatio.median)} (IQR ${pct(m.cpuRatio.q1)} … ${pct(m.cpuRatio.q3)}), wall ${pct(m.wallRatio!.median)}`
      : '   (the A/B reference)';
    return [
      `  ${mode.padEnd(30)}${String(m.callsPerSecond).padStart(10)}   ${m.cpuUsPerCall.toFixed(1).padStart(11)}${versus}`,
    ];
  };
  const cost = unused.cpuRatio!;
  return [
    `Backpressure: a burst of ${b.burst} calls answered 429 (Retry-After: ${b.retryAfterSeconds}) for ${b.retryAfterSeconds} s`,
    `  requests sent to the server during the window: ${b.sentDuringWindow} (expected 0)`,
    `  calls answered: ${b.answered}/${b.burst}, the first ${b.firstAnswerMs} ms and the last ${b.lastAnswerMs} ms after the first 429 (the burst reached the server over ${b.burstSpreadMs} ms)`,
    `Limits per call: tools/call over Streamable HTTP (JSON), ${report.counts.concurrency} in flight, ${report.counts.rounds} interleaved rounds of ${report.counts.callsPerRound} calls`,
    `  (per mode: median calls/s and client CPU µs per call; against the limits cut out: the median of the per-round ratios)`,
    `  mode                             calls/s   CPU µs/call`,
    ...row('limits cut out (same build)'),
    ...row('limits unused (defaults)'),
    ...row('rate limit set, never reached'),
    ...row('baseline build'),
    `  A/B end to end, limits unused vs cut out: ${pct(cost.median)} CPU per call (IQR ${pct(cost.q1)} … ${pct(cost.q3)}: a loaded machine's noise)`,
    `Limits per call on the client's path alone (the transport answers in memory: no network, no server; the largest share the check can be),`,
    `  ${report.clientPath.rounds} interleaved rounds of ${report.clientPath.callsPerRound} calls: cut out ${report.clientPath.cutOutUs} µs, unused ${report.clientPath.unusedUs} µs CPU per call`,
    `  A/B, limits unused vs cut out: ${pct(report.clientPath.ratio.median)} CPU per call (must hold: ≤ +2%; IQR ${pct(report.clientPath.ratio.q1)} … ${pct(report.clientPath.ratio.q3)})`,
    `  the unused limits' check alone: ${report.unusedCheckNs} ns per call (${((report.unusedCheckNs / 1000 / unused.cpuUsPerCall) * 100).toFixed(3)}% of a call's CPU)`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--path-only')) {
  // The client-path A/B alone (node --expose-gc --single-threaded-gc … --path-only).
  const server = await startServer('json');
  const path = await measureClientPath(server.url, LIMITS_FULL);
  server.child.kill();
  process.stdout.write(`${JSON.stringify(path)}\n`);
  process.exit(0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const baseline = argv.includes('--baseline') ? argv[argv.indexOf('--baseline') + 1] : undefined;
  const report = await runLimitsBench(argv.includes('--quick') ? LIMITS_QUICK : LIMITS_FULL, baseline);
  process.stdout.write(`\n${formatLimits(report)}\n`);
  const out = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : undefined;
  if (out) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
}
