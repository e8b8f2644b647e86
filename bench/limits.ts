/**
 * Backpressure and limits per server (issue #28 items 3, 4 and 7):
 *
 * - a server answering 429 with `Retry-After: 2` to a burst of 100 calls, for 2 s from its first
 *   429: the requests that reach it while it is busy beyond the burst itself (expected 0: nothing
 *   is sent during the window), how many calls were answered, and when (after the window);
 * - what the limits cost per call when unused (the defaults: `maxInFlight` 128 never reached, no
 *   rate limit), `tools/call` against the bench server in a child process, in alternating
 *   rounds beside a connection whose rate limit is set and never reached (every request takes
 *   the limits' slow path); and the unused check alone, timed in a loop, as a share of a call's
 *   CPU (what the hot path pays for the feature).
 *
 * With `--baseline <built index.js>` (e.g. an earlier commit's `.bench-build/src/index.js`), a
 * connection made with that build joins the alternating rounds: the A/B of the same calls with and
 * without the limits' code, in one process, against one server.
 *
 *   npm run bench (after the main bench)   or   node .bench-build/bench/limits.js [--quick] [--json file] [--baseline file]
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
}
export const LIMITS_FULL: LimitsCounts = {
  burst: 100,
  retryAfterSeconds: 2,
  rounds: 6,
  callsPerRound: 4000,
  concurrency: 64,
  checkLoops: 5_000_000,
};
export const LIMITS_QUICK: LimitsCounts = {
  burst: 20,
  retryAfterSeconds: 1,
  rounds: 2,
  callsPerRound: 200,
  concurrency: 8,
  checkLoops: 10_000,
};

export interface BackpressureResult {
  burst: number;
  retryAfterSeconds: number;
  /** Requests that reached the server while it answered 429, beyond the burst itself (expected 0). */
  sentDuringWindow: number;
  answered: number;
  /** From the first to the last request of the burst reaching the server (each answered 429), ms. */
  burstSpreadMs: number;
  /** From the server's first 429 to the first and the last answer, ms. */
  firstAnswerMs: number;
  lastAnswerMs: number;
}

type Mode = 'limits unused (defaults)' | 'rate limit set, never reached' | 'baseline build';

export interface LimitsReport {
  counts: LimitsCounts;
  backpressure: BackpressureResult;
  modes: Partial<Record<Mode, { callsPerSecond: number; cpuUsPerCall: number }>>;
  /** The unused limits' check on the hot path, timed alone: ns per call. */
  unusedCheckNs: number;
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
    const whileBusy = calls().filter((r) => r.at < busyUntil).length;
    const failed = results.filter((r) => r.status === 'rejected').map((r) => r.reason);
    if (failed.some((error) => !(error instanceof ServerBusyError))) throw failed[0];
    return {
      burst,
      retryAfterSeconds,
      sentDuringWindow: whileBusy - burst,
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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

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

type Connect = (config: Record<string, unknown>, options: { name: string }) => Promise<ServerHandle>;

export async function runLimitsBench(counts: LimitsCounts, baseline?: string): Promise<LimitsReport> {
  const backpressure = await measureBackpressure(counts.burst, counts.retryAfterSeconds);
  const server = await startServer('json');
  const base = { url: server.url, type: 'http' as const, keepalive: false as const };
  const handles: Partial<Record<Mode, ServerHandle>> = {
    'limits unused (defaults)': await connect(base, { name: 'unused' }),
    'rate limit set, never reached': await connect(
      { ...base, rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } },
      { name: 'rate' },
    ),
  };
  if (baseline) {
    const older = (await import(pathToFileURL(baseline).href)) as { connect: Connect };
    handles['baseline build'] = await older.connect(base, { name: 'baseline' });
  }
  const modes = Object.keys(handles) as Mode[];
  const samples = Object.fromEntries(
    modes.map((mode) => [mode, [] as { callsPerSecond: number; cpuUsPerCall: number }[]]),
  );
  try {
    for (const mode of modes) await round(handles[mode]!, counts.callsPerRound / 4, counts.concurrency); // warm-up
    for (let r = 0; r < counts.rounds; r++) {
      // Rotate which goes first: a drifting machine load favours none.
      const order = modes.map((_, i) => modes[(i + r) % modes.length]!);
      for (const mode of order)
        samples[mode]!.push(await round(handles[mode]!, counts.callsPerRound, counts.concurrency));
    }
  } finally {
    for (const handle of Object.values(handles)) await handle.close();
    server.child.kill();
  }
  const result = (mode: Mode) => ({
    callsPerSecond: Math.round(median(samples[mode]!.map((s) => s.callsPerSecond))),
    cpuUsPerCall: Math.round(median(samples[mode]!.map((s) => s.cpuUsPerCall)) * 10) / 10,
  });
  return {
    counts,
    backpressure,
    modes: Object.fromEntries(modes.map((mode) => [mode, result(mode)])),
    unusedCheckNs: unusedCheckNs(counts.checkLoops),
  };
}

export function formatLimits(report: LimitsReport): string {
  const b = report.backpressure;
  const unused = report.modes['limits unused (defaults)']!;
  const pct = (a: number, x: number) => `${x >= a ? '+' : ''}${(((x - a) / a) * 100).toFixed(1)}%`;
  const row = (mode: Mode) => {
    const m = report.modes[mode];
    if (!m) return [];
    const versus =
      mode === 'limits unused (defaults)'
        ? ''
        : `   (unused vs this: ${pct(m.callsPerSecond, unused.callsPerSecond)} calls/s, ${pct(m.cpuUsPerCall, unused.cpuUsPerCall)} CPU)`;
    return [
      `  ${mode.padEnd(30)}${String(m.callsPerSecond).padStart(10)}   ${m.cpuUsPerCall.toFixed(1).padStart(11)}${versus}`,
    ];
  };
  return [
    `Backpressure: a burst of ${b.burst} calls answered 429 (Retry-After: ${b.retryAfterSeconds}) for ${b.retryAfterSeconds} s`,
    `  requests sent to the server during the window: ${b.sentDuringWindow} (expected 0)`,
    `  calls answered: ${b.answered}/${b.burst}, the first ${b.firstAnswerMs} ms and the last ${b.lastAnswerMs} ms after the first 429 (the burst reached the server over ${b.burstSpreadMs} ms)`,
    `Limits per call: tools/call over Streamable HTTP (JSON), ${report.counts.concurrency} in flight, median of ${report.counts.rounds} rotating rounds`,
    `  mode                             calls/s   CPU µs/call`,
    ...row('limits unused (defaults)'),
    ...row('rate limit set, never reached'),
    ...row('baseline build'),
    `  the unused limits' check alone: ${report.unusedCheckNs} ns per call (${((report.unusedCheckNs / 1000 / unused.cpuUsPerCall) * 100).toFixed(3)}% of a call's CPU)`,
  ].join('\n');
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
