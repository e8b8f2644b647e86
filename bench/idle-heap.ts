/**
 * Idle heap per ready connection, measured in a fresh process per client: a process that just
 * closed other clients frees their sockets and buffers while the next measurement runs, which
 * counted as a discount for whichever client came next (~15-20 KB per connection).
 *
 *   node --expose-gc .bench-build/bench/idle-heap.js <raw|sdk|ours> <kind> <url> <connections>   (or --import tsx bench/idle-heap.ts)
 *
 * Prints `{"bytesPerConnection":N}`.
 */
import { fileURLToPath } from 'node:url';
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
const heap = async (): Promise<number> => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
};

async function openMany(name: ClientName, target: Target, n: number): Promise<BenchClient[]> {
  // Spread over a few origins (a leftover from the 128-socket limit, since fixed: see docs/performance.md).
  const at = (i: number): Target => ({ ...target, url: spreadOverOrigins(target.url, i) });
  const clients: BenchClient[] = [];
  for (let i = 0; i < n; i += 10)
    clients.push(
      ...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => openClient(name, at(i + j))))),
    );
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

/** Connections opened together and closed together. */
interface Group {
  close(): Promise<void>;
}

/** Heap per connection of a group of `n`, with a resident group of one so shared pools exist in both heaps. */
async function perConnection(openGroup: (count: number, label: string) => Promise<Group>, n: number): Promise<number> {
  const resident = await openGroup(1, 'resident');
  await (await openGroup(Math.min(WARM_UP, n), 'warm')).close();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const before = await heap();
  const group = await openGroup(n, 'server');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const after = await heap();
  await group.close();
  await resident.close();
  return (after - before) / n;
}

export function measureIdleHeap(name: ClientName, target: Target, n: number): Promise<number> {
  return perConnection(async (count) => {
    const clients = await openMany(name, target, count);
    return { close: () => closeAll(clients) };
  }, n);
}

/**
 * Ours, the way an agent with many servers runs it: one supervisor holding `n` servers, so each
 * connection is its connection, listener and keepalive actors, runtime, handle and GET stream.
 */
export function measureSharedIdleHeap(target: Target, n: number): Promise<number> {
  return perConnection((count, label) => openSupervisor(target, count, label), n);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [name, kind, url, n] = process.argv.slice(2);
  if (!gc) throw new Error('run with --expose-gc');
  const target = { kind: kind as Kind, url: url! };
  const bytesPerConnection =
    name === 'ours-shared'
      ? await measureSharedIdleHeap(target, Number(n))
      : await measureIdleHeap(name as ClientName, target, Number(n));
  process.stdout.write(`${JSON.stringify({ bytesPerConnection })}\n`);
  process.exit(0);
}
