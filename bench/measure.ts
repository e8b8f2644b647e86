/**
 * The measurements the bench is made of (bench/run.ts and bench/eras.ts): throughput in slices
 * that take turns, retained heap per call, idle heap per connection in a fresh process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getHeapCodeStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BenchClient, ClientName, Target } from './clients.js';

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
  /** Ours only: `connect({ url })` with its defaults (keepalive every 30 s, listening stream, era `auto`). */
  defaultsIdleHeapBytes?: number | undefined;
  retainedBytesPerCall?: number | undefined;
  expiry?: { lost: number; recoverMs: number | undefined } | undefined;
}

/**
 * `npm run bench` runs the tsc output (.bench-build/bench/*.js): the library as shipped, like the
 * SDK's compiled JS. Under tsx (the smoke test) every named function is wrapped in esbuild's
 * `__name`, which costs ours, and not the SDK (node_modules are not transformed), ~6 KB per idle connection.
 */
export const COMPILED = import.meta.url.endsWith('.js');
export const script = (name: string) => fileURLToPath(new URL(`./${name}.${COMPILED ? 'js' : 'ts'}`, import.meta.url));
export const runScript = (file: string): string[] => (COMPILED ? [file] : ['--import', 'tsx', file]);

const IDLE_HEAP = script('idle-heap');
const SERVER = script('server');

/** bench/server.ts in a child process (`--mode json|sse|legacy|dual`). */
export async function startServer(mode: string): Promise<{ url: string; origin: string; child: ChildProcess }> {
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

export async function concurrent(
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

/** Ours's idle heap in one supervisor and with `connect()`'s defaults, in brackets after the bench's own way. */
export function idleVariants(r: ClientResult): string {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const variants = [
    r.sharedIdleHeapBytes === undefined ? '' : `${kb(r.sharedIdleHeapBytes)} in one supervisor`,
    r.defaultsIdleHeapBytes === undefined ? '' : `${kb(r.defaultsIdleHeapBytes)} with connect() defaults`,
  ].filter(Boolean);
  return variants.length === 0 ? '' : ` (${variants.join('; ')})`;
}

/** In a fresh process per client: see bench/idle-heap.ts. */
export async function idleHeap(
  name: ClientName | 'ours-shared' | 'ours-defaults',
  target: Target,
  n: number,
): Promise<number> {
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

/**
 * Bytes kept per completed call: the least-squares slope of the collected heap over `n` calls,
 * sampled every n/5. Each sample waits `settleMs` first: undici drops the timers of finished
 * requests from its list only on its next tick (every 499 ms), and thousands of them (~250 KB)
 * were still listed at one sample and gone at the next. Compiled code and bytecode are left out:
 * V8 keeps optimising and flushing functions as the calls go on (±200–400 KB per sample), which
 * is not state kept for a call.
 */
export async function retained(client: BenchClient, n: number, settleMs: number): Promise<number> {
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

/**
 * Sequential and 64-wide throughput. Each round's calls per client run in `slices` slices; the
 * clients of `turns` (raw and ours) take turns slice by slice (raw, ours; ours, raw; …), then
 * the slices of `after` (the SDK's): on a VM whose speed swings ~2x from one second to the next,
 * raw and ours then meet the same machine, where one segment each per round paired raw's fast
 * second with ours's slow one. Every slice starts on a collected heap: no client pays for
 * another's garbage. The median slice is reported.
 */
export async function throughput<Name extends string>(
  clients: Record<Name, BenchClient>,
  turns: readonly Name[],
  after: readonly Name[],
  counts: BenchCounts,
): Promise<Record<Name, ClientResult>> {
  const seq: Record<string, number[]> = {};
  const conc: Record<string, number[]> = {};
  const concCpu: Record<string, number[]> = {};
  const lat: Record<string, number[]> = {};
  const seqCalls = Math.max(1, Math.round(counts.seqCalls / counts.slices));
  const concCalls = Math.max(1, Math.round(counts.concCalls / counts.slices));
  const slice = async (n: Name) => {
    gc();
    (seq[n] ??= []).push(await sequential(clients[n], seqCalls, lat[n]));
    gc();
    (conc[n] ??= []).push(await concurrent(clients[n], concCalls, counts.concurrency, undefined, (concCpu[n] ??= [])));
  };
  const names = [...turns, ...after];
  for (let round = 0; round < counts.rounds; round++) {
    for (const n of names) (lat[n] ??= []).length = 0; // p50/p99: the last round's sequential calls
    for (let i = 0; i < counts.slices; i++) {
      const forward = (round * counts.slices + i) % 2 === 0;
      for (const n of forward ? turns : [...turns].reverse()) await slice(n);
    }
    // The SDK last: its heap grows with the abort listeners it leaks and its sockets wind down after it.
    for (const n of after) for (let i = 0; i < counts.slices; i++) await slice(n);
  }
  const results = {} as Record<Name, ClientResult>;
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
