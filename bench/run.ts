/**
 * `npm run bench`: raw floor vs the official SDK client vs mcp-supervisor, per transport.
 * Options: --quick (tiny counts), --json <file>, --only json,sse,legacy,stdio,scale
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getHeapCodeStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openClient, type BenchClient, type ClientName, type Kind, type Target } from './clients.js';
import type { ScaleReport } from './scale.js';

export interface BenchCounts {
  seqCalls: number;
  concCalls: number;
  concurrency: number;
  rounds: number;
  /** Each round's calls per client are split into this many slices, raw's and ours taking turns. */
  slices: number;
  idleConnections: number;
  retainedCalls: number;
  /** Wait before each retained-heap sample (see `retained`). */
  retainedSettleMs: number;
  expiryCalls: number;
  /** Servers in one supervisor for the scale measurement, and the server processes they are spread over. */
  scaleServers: number;
  scaleProcesses: number;
}
export const FULL: BenchCounts = {
  seqCalls: 2000,
  concCalls: 10000,
  concurrency: 64,
  rounds: 5,
  slices: 5,
  idleConnections: 300,
  retainedCalls: 20000,
  retainedSettleMs: 1100,
  expiryCalls: 4000,
  scaleServers: 1000,
  scaleProcesses: 4,
};
export const QUICK: BenchCounts = {
  seqCalls: 50,
  concCalls: 200,
  concurrency: 8,
  rounds: 1,
  slices: 2,
  idleConnections: 3,
  retainedCalls: 200,
  retainedSettleMs: 0,
  expiryCalls: 200,
  scaleServers: 20,
  scaleProcesses: 2,
};

export interface ClientResult {
  seqOps: number;
  concOps: number;
  /** Client CPU (user + system of the bench process) per call at 64 in flight, median slice. */
  concCpuUs: number;
  /** Calls/s of every slice at 64 in flight, in the order run (the median is `concOps`). */
  concSamples: number[];
  p50Ms: number;
  p99Ms: number;
  idleHeapBytes?: number | undefined;
  /** Ours only: the same connections as the servers of one supervisor (no supervisor of one each). */
  sharedIdleHeapBytes?: number | undefined;
  retainedBytesPerCall?: number | undefined;
  expiry?: { lost: number; recoverMs: number | undefined } | undefined;
}
export interface BenchReport {
  machine: { node: string; cpu: string; cores: number; platform: string };
  counts: BenchCounts;
  transports: Partial<Record<Kind, Partial<Record<ClientName, ClientResult>>>>;
  /** Many servers in one supervisor (bench/scale.ts), when measured. */
  scale?: ScaleReport | undefined;
}

/** What `--only` may name: the transports and the scale measurement. */
export type Section = Kind | 'scale';

/**
 * `npm run bench` runs the tsc output (.bench-build/bench/*.js): the library as shipped, like the
 * SDK's compiled JS. Under tsx (the smoke test) every named function is wrapped in esbuild's
 * `__name`, which costs ours, and not the SDK (node_modules are not transformed), ~6 KB per idle connection.
 */
const COMPILED = import.meta.url.endsWith('.js');
const script = (name: string) => fileURLToPath(new URL(`./${name}.${COMPILED ? 'js' : 'ts'}`, import.meta.url));
const runScript = (file: string): string[] => (COMPILED ? [file] : ['--import', 'tsx', file]);
const SERVER = script('server');
const STDIO = fileURLToPath(new URL(`${COMPILED ? '../..' : '..'}/servers/stdio-server.mjs`, import.meta.url));
const IDLE_HEAP = script('idle-heap');
const SCALE = script('scale');

async function startServer(mode: string): Promise<{ url: string; origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...runScript(SERVER), '--mode', mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { port: number }).port));
    child.once('exit', () => reject(new Error('bench server exited')));
  });
  const origin = `http://127.0.0.1:${port}`;
  return { url: mode === 'legacy' ? `${origin}/sse` : `${origin}/mcp`, origin, child };
}

/** `global.gc` from --expose-gc, or (in the test runner) the same function obtained through v8 flags. */
function findGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const gc = (): void => {
  const collect = findGc();
  for (let i = 0; i < 4; i++) collect();
};
const heap = async (): Promise<number> => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc();
  return process.memoryUsage().heapUsed;
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function sequential(client: BenchClient, n: number, latencies?: number[]): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t = latencies ? performance.now() : 0;
    await client.call();
    if (latencies) latencies.push(performance.now() - t);
  }
  return n / ((performance.now() - start) / 1000);
}

async function concurrent(
  client: BenchClient,
  n: number,
  width: number,
  onError?: () => void,
  cpu?: number[],
): Promise<number> {
  let next = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const worker = async () => {
    while (next < n) {
      next++;
      try {
        await client.call();
      } catch (error) {
        if (!onError) throw error;
        onError();
      }
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  if (cpu) {
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / n);
  }
  return n / ((performance.now() - start) / 1000);
}

/** In a fresh process per client: see bench/idle-heap.ts. */
async function idleHeap(name: ClientName | 'ours-shared', target: Target, n: number): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', ...runScript(IDLE_HEAP), name, target.kind, target.url, String(n)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`idle heap measurement of ${name} exited with ${code}`);
  return (JSON.parse(out) as { bytesPerConnection: number }).bytesPerConnection;
}

/** In a fresh process: see bench/scale.ts. */
async function scale(counts: BenchCounts): Promise<ScaleReport> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', ...runScript(SCALE), String(counts.scaleServers), String(counts.scaleProcesses)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the scale measurement exited with ${code}`);
  return JSON.parse(out) as ScaleReport;
}

/**
 * Bytes kept per completed call: the least-squares slope of the collected heap over `n` calls,
 * sampled every n/5. Each sample waits `settleMs` first: undici drops the timers of finished
 * requests from its list only on its next tick (every 499 ms), and thousands of them (~250 KB)
 * were still listed at one sample and gone at the next. Compiled code and bytecode are left out:
 * V8 keeps optimising and flushing functions as the calls go on (±200–400 KB per sample), which
 * is not state kept for a call.
 */
async function retained(client: BenchClient, n: number, settleMs: number): Promise<number> {
  await concurrent(client, Math.min(2000, n), 16);
  const steps = 5;
  const sample = async (): Promise<number> => {
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const used = await heap();
    const code = getHeapCodeStatistics();
    return used - code.code_and_metadata_size - code.bytecode_and_metadata_size;
  };
  const points: Array<[calls: number, bytes: number]> = [[0, await sample()]];
  for (let i = 1; i <= steps; i++) {
    await concurrent(client, Math.round(n / steps), 16);
    points.push([Math.round((n / steps) * i), await sample()]);
  }
  return Math.max(0, slope(points));
}

function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** 64-wide load; the server forgets every session a quarter of the way in. */
async function expiry(
  client: BenchClient,
  origin: string,
  n: number,
  width: number,
): Promise<{ lost: number; recoverMs: number | undefined }> {
  let lost = 0;
  let done = 0;
  let expiredAt: number | undefined;
  let recoveredAt: number | undefined;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const issued = performance.now();
      try {
        await client.call();
        done++;
        if (expiredAt !== undefined && recoveredAt === undefined && issued > expiredAt) recoveredAt = performance.now();
      } catch {
        lost++;
      }
      if (done === Math.floor(n / 4) && expiredAt === undefined) {
        expiredAt = performance.now();
        await fetch(`${origin}/__expire`, { method: 'POST' });
      }
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return {
    lost,
    recoverMs: recoveredAt !== undefined && expiredAt !== undefined ? recoveredAt - expiredAt : undefined,
  };
}

/**
 * Sequential and 64-wide throughput. Each round's calls per client run in `slices` slices, raw's
 * and ours taking turns slice by slice (raw, ours; ours, raw; …), then the SDK's slices: on a VM
 * whose speed swings ~2x from one second to the next, raw and ours then meet the same machine,
 * where one segment each per round paired raw's fast second with ours's slow one. Every slice
 * starts on a collected heap: no client pays for another's garbage. The median slice is reported.
 */
async function throughput(
  clients: Record<string, BenchClient>,
  names: readonly ClientName[],
  counts: BenchCounts,
): Promise<Partial<Record<ClientName, ClientResult>>> {
  const seq: Record<string, number[]> = {};
  const conc: Record<string, number[]> = {};
  const concCpu: Record<string, number[]> = {};
  const lat: Record<string, number[]> = {};
  const seqCalls = Math.max(1, Math.round(counts.seqCalls / counts.slices));
  const concCalls = Math.max(1, Math.round(counts.concCalls / counts.slices));
  const slice = async (n: ClientName) => {
    gc();
    (seq[n] ??= []).push(await sequential(clients[n]!, seqCalls, lat[n]));
    gc();
    (conc[n] ??= []).push(await concurrent(clients[n]!, concCalls, counts.concurrency, undefined, (concCpu[n] ??= [])));
  };
  for (let round = 0; round < counts.rounds; round++) {
    for (const n of names) (lat[n] ??= []).length = 0; // p50/p99: the last round's sequential calls
    for (let i = 0; i < counts.slices; i++) {
      const rawFirst = (round * counts.slices + i) % 2 === 0;
      for (const n of rawFirst ? (['raw', 'ours'] as const) : (['ours', 'raw'] as const))
        if (names.includes(n)) await slice(n);
    }
    // The SDK last: its heap grows with the abort listeners it leaks and its sockets wind down after it.
    if (names.includes('sdk')) for (let i = 0; i < counts.slices; i++) await slice('sdk');
  }
  const results: Partial<Record<ClientName, ClientResult>> = {};
  for (const n of names) {
    const sorted = [...lat[n]!].sort((a, b) => a - b);
    results[n] = {
      seqOps: median(seq[n]!),
      concOps: median(conc[n]!),
      concCpuUs: median(concCpu[n]!),
      concSamples: conc[n]!.map((ops) => Math.round(ops)),
      p50Ms: sorted[Math.floor(sorted.length * 0.5)]!,
      p99Ms: sorted[Math.floor(sorted.length * 0.99)]!,
    };
  }
  return results;
}

export async function runBench(
  options: { counts?: BenchCounts; only?: Section[]; log?: (line: string) => void } = {},
): Promise<BenchReport> {
  const counts = options.counts ?? FULL;
  const log = options.log ?? (() => {});
  const os = await import('node:os');
  const report: BenchReport = {
    machine: {
      node: process.version,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      platform: `${os.platform()} ${os.release()}`,
    },
    counts,
    transports: {},
  };
  const sections = options.only ?? (['json', 'sse', 'legacy', 'stdio', 'scale'] as Section[]);
  for (const kind of sections.filter((s): s is Kind => s !== 'scale')) {
    const server = kind === 'stdio' ? undefined : await startServer(kind);
    const target: Target = { kind, url: server ? server.url : STDIO };
    const names: ClientName[] = kind === 'legacy' ? ['sdk', 'ours'] : ['raw', 'sdk', 'ours'];
    try {
      const clients = Object.fromEntries(
        await Promise.all(names.map(async (n) => [n, await openClient(n, target)] as const)),
      );
      for (const n of names) await concurrent(clients[n]!, Math.min(500, counts.concCalls), 8); // warm-up
      const results = await throughput(clients, names, counts);
      // Raw too: what the method reads for a client that keeps nothing is its floor.
      for (const n of names)
        results[n]!.retainedBytesPerCall = await retained(clients[n]!, counts.retainedCalls, counts.retainedSettleMs);
      for (const n of names) await clients[n]!.close();
      if (kind !== 'stdio') {
        for (const n of names)
          if (n !== 'raw') results[n]!.idleHeapBytes = await idleHeap(n, target, counts.idleConnections);
        if (results.ours)
          results.ours.sharedIdleHeapBytes = await idleHeap('ours-shared', target, counts.idleConnections);
      }
      if (server && kind !== 'legacy') {
        for (const n of ['sdk', 'ours'] as const) {
          const client = await openClient(n, target);
          results[n]!.expiry = await expiry(client, server.origin, counts.expiryCalls, counts.concurrency);
          await client.close().catch(() => {});
        }
      }
      report.transports[kind] = results;
      log(formatTable({ ...report, transports: { [kind]: results } }));
    } finally {
      server?.child.kill();
    }
  }
  if (sections.includes('scale')) {
    report.scale = await scale(counts);
    log(formatScale(report.scale));
  }
  return report;
}

/** The scale measurement as a table: per-server figures and the failover of one process. */
export function formatScale(scale: ScaleReport): string {
  const { kill } = scale;
  return [
    '| servers | processes | ready (all) | heap per idle server | status() of all: first / median / max | killed | all left ready after | others that left ready | all back after |',
    '|---|---|---|---|---|---|---|---|---|',
    `| ${scale.servers} | ${scale.processes} | ${fmt(scale.readyMs)} ms | ${fmt(scale.heapPerServerBytes / 1024, 1)} KB | ${fmt(scale.statusFirstMs, 2)} / ${fmt(scale.statusMedianMs, 2)} / ${fmt(scale.statusMaxMs, 2)} ms | ${kill.killed} | ${fmt(kill.allLeftReadyMs)} ms | ${kill.othersLeftReady} | ${fmt(kill.allBackMs)} ms |`,
  ].join('\n');
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined ? 'n/a' : n.toFixed(digits));
export function formatTable(report: BenchReport): string {
  const lines = [
    '| transport | client | seq calls/s | 64-conc calls/s | CPU µs/call at 64 | p50 ms | p99 ms | ours/raw seq | ours/raw conc | ours/raw CPU at 64 | ours/SDK seq | ours/SDK conc | idle heap/conn | retained B/call | expiry lost | recover ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [kind, results] of Object.entries(report.transports)) {
    const ours = results.ours!;
    for (const [name, r] of Object.entries(results)) {
      const ratios =
        name === 'ours'
          ? [
              results.raw ? fmt(ours.seqOps / results.raw.seqOps, 2) : 'n/a',
              results.raw ? fmt(ours.concOps / results.raw.concOps, 2) : 'n/a',
              results.raw ? fmt(ours.concCpuUs / results.raw.concCpuUs, 2) : 'n/a',
              fmt(ours.seqOps / results.sdk!.seqOps, 2),
              fmt(ours.concOps / results.sdk!.concOps, 2),
            ]
          : ['', '', '', '', ''];
      const shared =
        r.sharedIdleHeapBytes === undefined ? '' : ` (${fmt(r.sharedIdleHeapBytes / 1024, 1)} KB in one supervisor)`;
      const idle = r.idleHeapBytes === undefined ? 'n/a' : `${fmt(r.idleHeapBytes / 1024, 1)} KB${shared}`;
      lines.push(
        `| ${kind} | ${name} | ${fmt(r.seqOps)} | ${fmt(r.concOps)} | ${fmt(r.concCpuUs, 1)} | ${fmt(r.p50Ms, 3)} | ${fmt(r.p99Ms, 3)} | ${ratios.join(' | ')} | ${idle} | ${fmt(r.retainedBytesPerCall, 1)} | ${r.expiry ? r.expiry.lost : 'n/a'} | ${r.expiry ? fmt(r.expiry.recoverMs, 1) : 'n/a'} |`,
      );
    }
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // The SDK's StreamableHTTPClientTransport adds an abort listener per fetch to one shared signal;
  // Node warns once per call past 1,500. Report it once instead of flooding the table.
  process.removeAllListeners('warning');
  let sdkListenerWarnings = 0;
  process.on('warning', (warning) => {
    if (warning.name === 'MaxListenersExceededWarning') {
      if (sdkListenerWarnings++ === 0) process.stderr.write(`note: ${warning.message}\n`);
    } else process.stderr.write(`${warning.name}: ${warning.message}\n`);
  });
  const argv = process.argv.slice(2);
  const arg = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  const only = arg('--only')?.split(',') as Section[] | undefined;
  const report = await runBench({
    counts: argv.includes('--quick') ? QUICK : FULL,
    only,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const { machine } = report;
  process.stdout.write(
    `node ${machine.node}, ${machine.cpu} x${machine.cores}, ${machine.platform}\n\n${formatTable(report)}\n${report.scale ? `\n${formatScale(report.scale)}\n` : ''}`,
  );
  const out = arg('--json');
  if (out) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
}
