/**
 * What the dashboard costs the agent (issue #29 items 3 and 6): this process's CPU, in alternating
 * rounds of three modes, against the bench server in a child process:
 *
 * - `none`: no dashboard (today's behaviour);
 * - `dashboard, no browser`: `sup.dashboard()` listening, nobody looking;
 * - `dashboard + 1 browser`: one page's event stream open, read by another process (as a browser
 *   is): rows sampled every 500 ms, every call observed and sent to the page in batches.
 *
 * Two shapes: one server under 64 calls in flight (the per-call cost), and 1,000 servers with the
 * same traffic spread over them plus an idle window (what the sampler of a thousand rows costs).
 * Each round warms up in its mode before it is measured (a quarter round, the same in every mode).
 *
 *   npm run bench (after the main bench)   or   node .bench-build/bench/dashboard.js [--quick] [--rounds n] [--json file]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createSupervisor, type ServerHandle, type Supervisor } from '../src/index.js';

export interface DashboardCounts {
  rounds: number;
  callsPerRound: number;
  concurrency: number;
  servers: number;
  idleMs: number;
  /** The first this many rounds also measure the idle CPU (a window of `idleMs` in each mode). */
  idleRounds: number;
}
export const DASHBOARD_FULL: DashboardCounts = {
  rounds: 12,
  callsPerRound: 3000,
  concurrency: 64,
  servers: 1000,
  idleMs: 4000,
  idleRounds: 3,
};
export const DASHBOARD_QUICK: DashboardCounts = {
  rounds: 1,
  callsPerRound: 200,
  concurrency: 8,
  servers: 50,
  idleMs: 300,
  idleRounds: 1,
};

type Mode = 'none' | 'dashboard, no browser' | 'dashboard + 1 browser';
const MODES: Mode[] = ['none', 'dashboard, no browser', 'dashboard + 1 browser'];

interface Sample {
  cpuUsPerCall: number;
  callsPerSecond: number;
  /** CPU of this process while nothing is called, as a share of one core (%). */
  idleCpuPercent: number;
}
export interface ShapeResult {
  servers: number;
  modes: Record<
    Mode,
    {
      cpuUsPerCall: number;
      callsPerSecond: number;
      idleCpuPercent: number;
      /** The median of each round's CPU per call against `none` in the same round, minus one (%): what the mode adds. */
      pairedCpuPercent: number;
      /** The mean of the same (a periodic cost, such as a full sample of 1,000 rows every 4 s, lands in some rounds only). */
      pairedMeanCpuPercent: number;
      samples: Sample[];
    }
  >;
}
export interface DashboardReport {
  counts: DashboardCounts;
  one: ShapeResult;
  many: ShapeResult;
  /** Frames the reader received in the last `+ 1 browser` round of each shape (it was really fed). */
  bytesRead: { one: number; many: number };
}

const COMPILED = import.meta.url.endsWith('.js');
const SERVER = fileURLToPath(new URL(`./server.${COMPILED ? 'js' : 'ts'}`, import.meta.url));

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const args = COMPILED ? [SERVER, '--mode', 'json'] : ['--import', 'tsx', SERVER, '--mode', 'json'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { port: number }).port));
    child.once('exit', () => reject(new Error('bench server exited')));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

/** A browser's share of the work: another process reads the event stream and counts its bytes. */
const READER = `
const http = require('node:http');
let bytes = 0;
http.get(process.argv[1], (res) => res.on('data', (chunk) => { bytes += chunk.length; }));
process.on('message', () => process.send(bytes));
`;

interface Reader {
  bytes(): Promise<number>;
  stop(): void;
}

async function openReader(url: string): Promise<Reader> {
  const child = spawn(process.execPath, ['-e', READER, `${url}events`], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const bytes = () =>
    new Promise<number>((resolve) => {
      child.once('message', (count) => resolve(count as number));
      child.send('bytes?');
    });
  // Attached once the first snapshot arrived.
  while ((await bytes()) === 0) await sleep(20);
  return { bytes, stop: () => child.kill() };
}

async function calls(handles: ServerHandle[], count: number, concurrency: number) {
  let next = 0;
  const worker = async () => {
    while (next < count) await handles[next++ % handles.length]!.callTool('echo', {});
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { callsPerSecond: Math.round(count / seconds), cpuUsPerCall: (used.user + used.system) / count };
}

async function idle(ms: number): Promise<number> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await sleep(ms);
  const used = process.cpuUsage(cpu);
  return ((used.user + used.system) / 1000 / (performance.now() - started)) * 100;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Each round's CPU per call in this mode against `none`'s in the same round, minus one (%). */
const paired = (samples: Record<Mode, Sample[]>, mode: Mode) =>
  samples[mode].map((s, round) => (s.cpuUsPerCall / samples.none[round]!.cpuUsPerCall - 1) * 100);

async function shape(url: string, servers: number, counts: DashboardCounts): Promise<[ShapeResult, number]> {
  const config = Object.fromEntries(
    Array.from({ length: servers }, (_, i) => [`s${i}`, { url, type: 'http' as const, keepalive: false as const }]),
  );
  const sup: Supervisor = createSupervisor({ servers: config });
  await sup.start();
  const handles = Object.keys(config).map((name) => sup.server(name));
  const samples: Record<Mode, Sample[]> = { none: [], 'dashboard, no browser': [], 'dashboard + 1 browser': [] };
  let bytesRead = 0;
  try {
    await calls(handles, counts.callsPerRound / 4, counts.concurrency); // warm-up
    for (let r = 0; r < counts.rounds; r++) {
      for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
        const dashboard = mode === 'none' ? undefined : await sup.dashboard();
        const reader = mode === 'dashboard + 1 browser' ? await openReader(dashboard!.url) : undefined;
        // Unmeasured: what attaching costs once (the snapshot, code paths compiled) is not a cost per call.
        await calls(handles, counts.callsPerRound / 4, counts.concurrency);
        const run = await calls(handles, counts.callsPerRound, counts.concurrency);
        const idleCpuPercent = r < counts.idleRounds ? await idle(counts.idleMs) : Number.NaN;
        samples[mode].push({ ...run, idleCpuPercent });
        if (reader) {
          bytesRead = await reader.bytes();
          reader.stop();
        }
        await dashboard?.close();
      }
    }
  } finally {
    await sup.stop();
  }
  const modes = Object.fromEntries(
    MODES.map((mode) => [
      mode,
      {
        cpuUsPerCall: Math.round(median(samples[mode].map((s) => s.cpuUsPerCall)) * 10) / 10,
        callsPerSecond: median(samples[mode].map((s) => s.callsPerSecond)),
        idleCpuPercent:
          Math.round(median(samples[mode].map((s) => s.idleCpuPercent).filter((v) => !Number.isNaN(v))) * 100) / 100,
        pairedCpuPercent: Math.round(median(paired(samples, mode)) * 10) / 10,
        pairedMeanCpuPercent: Math.round(mean(paired(samples, mode)) * 10) / 10,
        samples: samples[mode],
      },
    ]),
  ) as ShapeResult['modes'];
  return [{ servers, modes }, bytesRead];
}

export async function runDashboardBench(counts: DashboardCounts): Promise<DashboardReport> {
  const server = await startServer();
  try {
    const [one, oneBytes] = await shape(server.url, 1, counts);
    const [many, manyBytes] = await shape(server.url, counts.servers, counts);
    return { counts, one, many, bytesRead: { one: oneBytes, many: manyBytes } };
  } finally {
    server.child.kill();
  }
}

export function formatDashboard(report: DashboardReport): string {
  const pct = (a: number, b: number) => `${b >= a ? '+' : ''}${(((b - a) / a) * 100).toFixed(1)}%`;
  const lines = [
    `Dashboard: tools/call over Streamable HTTP (JSON), ${report.counts.concurrency} in flight, median of ${report.counts.rounds} alternating rounds; idle CPU over ${report.counts.idleMs} ms in ${report.counts.idleRounds} rounds`,
    `  (paired: the median and the mean over rounds of a mode's CPU per call against none's in the same round)`,
  ];
  for (const [label, result] of [
    ['one server', report.one],
    [`${report.many.servers} servers`, report.many],
  ] as const) {
    const none = result.modes.none;
    lines.push(`  ${label}: mode                  calls/s   CPU µs/call   idle CPU (% of a core)`);
    for (const mode of MODES) {
      const m = result.modes[mode];
      const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}%`;
      const vs =
        mode === 'none'
          ? ''
          : `   (${pct(none.cpuUsPerCall, m.cpuUsPerCall)} CPU per call; paired ${signed(m.pairedCpuPercent)}, mean ${signed(m.pairedMeanCpuPercent)})`;
      lines.push(
        `    ${mode.padEnd(24)}${String(m.callsPerSecond).padStart(10)}   ${m.cpuUsPerCall.toFixed(1).padStart(11)}   ${m.idleCpuPercent.toFixed(2).padStart(10)}${vs}`,
      );
    }
  }
  lines.push(
    `  the browser's stream carried ${report.bytesRead.one} B (one) and ${report.bytesRead.many} B (many) in its last round`,
  );
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const counts = { ...(argv.includes('--quick') ? DASHBOARD_QUICK : DASHBOARD_FULL) };
  if (argv.includes('--rounds')) counts.rounds = Number(argv[argv.indexOf('--rounds') + 1]);
  const report = await runDashboardBench(counts);
  process.stdout.write(`\n${formatDashboard(report)}\n`);
  const out = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : undefined;
  if (out) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
}
