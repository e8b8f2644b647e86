/**
 * Idle heap per ready connection, measured in a fresh process per client: a process that just
 * closed other clients frees their sockets and buffers while the next measurement runs, which
 * counted as a discount for whichever client came next (~15-20 KB per connection).
 *
 *   node --expose-gc .bench-build/bench/idle-heap.js <raw|sdk|ours|ours-defaults|ours-shared> <kind> <url> <connections>   (or --import tsx bench/idle-heap.ts)
 *
 * `ours` keeps its keepalive off (one probe an hour), as the throughput clients do; `ours-defaults`
 * is `connect({ url })` with nothing else (keepalive every 30 s, the listening stream, era `auto`).
 * Prints `{"bytesPerConnection":N,"withCodeBytesPerConnection":M}` (compiled code left out of N, see IdleHeap), read once
 * the group has rested past the pools' idle socket time (SETTLE_MS). With `IDLE_HEAP_SNAPSHOTS=<prefix>`, also writes
 * `<prefix>-before.heapsnapshot` and `<prefix>-after.heapsnapshot` around the measured group
 * (bench/heap-breakdown.ts reads them).
 */
import { fileURLToPath } from 'node:url';
import { getHeapCodeStatistics, writeHeapSnapshot } from 'node:v8';
import { connect } from '../src/index.js';
import {
  openClient,
  openSupervisor,
  spreadOverOrigins,
  type BenchClient,
  type ClientName,
  type Kind,
  type Target,
} from './clients.js';

const gc = (globalThis as { gc?: () => void }).gc;

/** The collected heap, and the part of it that is compiled code and bytecode. */
interface HeapReading {
  used: number;
  code: number;
}

const heap = async (): Promise<HeapReading> => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (let i = 0; i < 4; i++) gc!();
  const code = getHeapCodeStatistics();
  return {
    used: process.memoryUsage().heapUsed,
    code: code.code_and_metadata_size + code.bytecode_and_metadata_size,
  };
};

/**
 * Heap per connection without compiled code and bytecode (as bench/measure.ts's retained bytes
 * per call): V8 compiles and optimises functions while a group opens, even after 100 warm-up
 * connections, and that code does not grow with the count (300 and 1,000 connections read the
 * same code total, see docs/performance.md). `withCode` is the figure before that subtraction.
 */
export interface IdleHeap {
  bytesPerConnection: number;
  withCodeBytesPerConnection: number;
}

/** `connect()` with its defaults only (what a user who writes `connect({ url })` holds). */
async function openDefaults(target: Target): Promise<BenchClient> {
  const handle = await connect({ url: target.url });
  return { call: () => handle.callTool('echo', {}), close: () => handle.close() };
}

async function openMany(name: ClientName | 'ours-defaults', target: Target, n: number): Promise<BenchClient[]> {
  const open = (at: Target) => (name === 'ours-defaults' ? openDefaults(at) : openClient(name, at));
  // Spread over a few origins (a leftover from the 128-socket limit, since fixed: see docs/performance.md).
  const at = (i: number): Target => ({ ...target, url: spreadOverOrigins(target.url, i) });
  const clients: BenchClient[] = [];
  for (let i = 0; i < n; i += 10)
    clients.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => open(at(i + j))))));
  return clients;
}

async function closeAll(clients: BenchClient[]): Promise<void> {
  for (let i = 0; i < clients.length; i += 20) await Promise.all(clients.slice(i, i + 20).map((c) => c.close()));
}

/**
 * Warm-up connections opened and closed before the first sample: module state and compiled code
 * are not per connection. Ten were too few: V8 optimised hot functions while the 300 opened, and
 * that code (~1.5 KB per connection for ours) was counted as theirs.
 */
const WARM_UP = 100;

const SNAPSHOTS = process.env.IDLE_HEAP_SNAPSHOTS;

/**
 * How long the measured group rests before the reading: past the pools' idle socket time (10 s,
 * src/transports/pool.ts), so the sockets that only the opening burst needed (a supervisor's
 * start opens hundreds of handshakes at once) have closed, as they have in a long-running agent.
 * Read 300 ms after the start, one supervisor of 300 counted ~4 KB per server more.
 * `IDLE_HEAP_SETTLE_MS` overrides it (300 gives the figure as read before 27 Nov, branch `supheap`).
 */
const SETTLE_MS = Number(process.env.IDLE_HEAP_SETTLE_MS ?? 10_500);

/** Connections opened together and closed together. */
interface Group {
  close(): Promise<void>;
}

/** Heap per connection of a group of `n`, with a resident group of one so shared pools exist in both heaps. */
async function perConnection(
  openGroup: (count: number, label: string) => Promise<Group>,
  n: number,
): Promise<IdleHeap> {
  const resident = await openGroup(1, 'resident');
  await (await openGroup(Math.min(WARM_UP, n), 'warm')).close();
  // The warm-up's idle sockets in the resident's pool close too, or the reading after would gain them.
  await new Promise((resolve) => setTimeout(resolve, Math.max(500, SETTLE_MS)));
  const before = await heap();
  if (SNAPSHOTS) writeHeapSnapshot(`${SNAPSHOTS}-before.heapsnapshot`);
  const group = await openGroup(n, 'server');
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const after = await heap();
  if (SNAPSHOTS) writeHeapSnapshot(`${SNAPSHOTS}-after.heapsnapshot`);
  await group.close();
  await resident.close();
  const withCode = after.used - before.used;
  return { bytesPerConnection: (withCode - (after.code - before.code)) / n, withCodeBytesPerConnection: withCode / n };
}

export function measureIdleHeap(name: ClientName | 'ours-defaults', target: Target, n: number): Promise<IdleHeap> {
  return perConnection(async (count) => {
    const clients = await openMany(name, target, count);
    return { close: () => closeAll(clients) };
  }, n);
}

/**
 * Ours, the way an agent with many servers runs it: one supervisor holding `n` servers, so each
 * connection is its connection, listener and keepalive actors, runtime, handle and GET stream.
 */
export function measureSharedIdleHeap(target: Target, n: number): Promise<IdleHeap> {
  return perConnection((count, label) => openSupervisor(target, count, label), n);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name, kind, url, n] = process.argv.slice(2);
  if (!gc) throw new Error('run with --expose-gc');
  const target = { kind: kind as Kind, url: url! };
  const reading =
    name === 'ours-shared'
      ? await measureSharedIdleHeap(target, Number(n))
      : await measureIdleHeap(name as ClientName | 'ours-defaults', target, Number(n));
  process.stdout.write(`${JSON.stringify(reading)}\n`);
  process.exit(0);
}
