/**
 * What call interceptors cost (issue #30 item 4), `handle.callTool('echo')` over Streamable HTTP
 * (JSON answers) against the bench server, three connections taking turns in slices:
 *
 * - `before`: the call as it went before interceptors existed (ServerTools' own path to the
 *   server, reached past the check that picks it);
 * - `none`: `callTool` with no interceptors configured (every user who does not opt in): must
 *   stay within 2 % of `before`;
 * - `one pass-through`: one interceptor that only calls `next()`.
 *
 * Part of `npm run bench` (bench/run.ts, section `interceptors`).
 */
import { connect, type ServerHandle, type ToolCallInterceptor } from '../src/index.js';
import type { BenchClient } from './clients.js';
import { concurrent, startServer, throughput, type BenchCounts, type ClientResult } from './measure.js';

const MODES = ['before', 'none', 'one pass-through'] as const;
type Mode = (typeof MODES)[number];

export type InterceptorsReport = Record<Mode, ClientResult>;

const passThrough: ToolCallInterceptor = (_call, next) => next();

/** The path `handle.callTool` took before interceptors: ServerTools' private `callServer`. */
interface ToolsInside {
  tools: { callServer(name: string, args: Record<string, unknown>, options: undefined): Promise<unknown> };
}

async function open(url: string, mode: Mode): Promise<BenchClient> {
  const keepalive = { intervalMs: 3_600_000, timeoutMs: 10_000, maxMissed: 3 };
  const handle: ServerHandle = await connect(
    { url, type: 'http', keepalive },
    { name: 'bench', interceptors: mode === 'one pass-through' ? [passThrough] : undefined },
  );
  const args = {};
  if (mode === 'before') {
    const tools = (handle as unknown as ToolsInside).tools;
    return { call: () => tools.callServer('echo', args, undefined), close: () => handle.close() };
  }
  return { call: () => handle.callTool('echo', args), close: () => handle.close() };
}

export async function runInterceptors(counts: BenchCounts): Promise<InterceptorsReport> {
  const server = await startServer('json');
  try {
    const clients = Object.fromEntries(
      await Promise.all(MODES.map(async (mode) => [mode, await open(server.url, mode)] as const)),
    ) as Record<Mode, BenchClient>;
    for (const mode of MODES) await concurrent(clients[mode], Math.min(500, counts.concCalls), 8); // warm-up
    // Each mode in each place of the turn order (the one after another client's 64-wide burst
    // measured slower here, whoever it was): the median of the three orders.
    // (One order when the counts allow one round: the smoke test's --quick.)
    const orders = Math.min(MODES.length, counts.rounds);
    const rounds = Math.max(1, Math.round(counts.rounds / orders));
    const runs: Record<Mode, ClientResult>[] = [];
    for (let shift = 0; shift < orders; shift++) {
      const order = [...MODES.slice(shift), ...MODES.slice(0, shift)];
      runs.push(await throughput(clients, order, [], { ...counts, rounds }));
    }
    for (const mode of MODES) await clients[mode].close();
    return Object.fromEntries(
      MODES.map((mode) => [mode, medianRun(runs.map((run) => run[mode]))]),
    ) as InterceptorsReport;
  } finally {
    server.child.kill();
  }
}

/** Per figure, the median of the runs. */
function medianRun(results: ClientResult[]): ClientResult {
  const median = (pick: (r: ClientResult) => number) => results.map(pick).sort((a, b) => a - b)[results.length >> 1]!;
  return {
    seqOps: median((r) => r.seqOps),
    concOps: median((r) => r.concOps),
    concCpuUs: median((r) => r.concCpuUs),
    concSamples: results.flatMap((r) => r.concSamples),
    p50Ms: median((r) => r.p50Ms),
    p99Ms: median((r) => r.p99Ms),
  };
}

const fmt = (n: number, digits = 0) => n.toFixed(digits);

export function formatInterceptors(report: InterceptorsReport): string {
  const before = report.before;
  const lines = [
    '| callTool over json | seq calls/s | 64-conc calls/s | CPU µs/call at 64 | /before seq | /before conc | /before CPU at 64 |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const mode of MODES) {
    const r = report[mode];
    const ratios =
      mode === 'before'
        ? ['', '', '']
        : [
            fmt(r.seqOps / before.seqOps, 3),
            fmt(r.concOps / before.concOps, 3),
            fmt(r.concCpuUs / before.concCpuUs, 3),
          ];
    lines.push(`| ${mode} | ${fmt(r.seqOps)} | ${fmt(r.concOps)} | ${fmt(r.concCpuUs, 1)} | ${ratios.join(' | ')} |`);
  }
  return lines.join('\n');
}
