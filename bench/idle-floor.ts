/**
 * The floor of idle CPU (bench/scale.ts): a Node process that holds a heap as large as the agent's
 * and does nothing else — no sockets, no timers. What it spends while idle is V8's own: after a
 * heap has grown and the process goes quiet, V8's memory reducer runs up to three full
 * mark-compacts, once, whose cost grows with the live heap whoever built it. The agent's idle
 * CPU over the floor's in the same rounds is what the runtime itself spends (keepalive rounds,
 * timers, probes).
 *
 * The heap is made of records like the runtime's objects (a small object with pointer fields, a
 * string of its own, an array of references): ~4 heap objects and ~60 bytes per object on average
 * (a supervisor's server holds ~314 objects, 76 bytes on average, in a heap snapshot of 1,000).
 *
 *   node --expose-gc .bench-build/bench/idle-floor.js <heap bytes> <rounds> <window ms>
 *   prints {"heapBytes","objects"} once built and collected, waits for a line on stdin, then runs
 *   the rounds and prints {"rounds": IdleRound[]}.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { constants as perf, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { runScript } from './measure.js';

export interface IdleRound {
  cpuPercent: number;
  markCompacts: number;
  markCompactPauseMs: number;
}

/**
 * CPU of the process over one idle window (all its threads: V8's concurrent marking and sweeping
 * count), and the mark-compacts in it (the finishing pauses, and incremental steps counted in time).
 */
export async function idleRound(windowMs: number): Promise<IdleRound> {
  let markCompacts = 0;
  let markCompactPauseMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
      const kind = entry.detail?.kind;
      if (kind === perf.NODE_PERFORMANCE_GC_MAJOR) markCompacts++;
      if (kind === perf.NODE_PERFORMANCE_GC_MAJOR || kind === perf.NODE_PERFORMANCE_GC_INCREMENTAL)
        markCompactPauseMs += entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const cpu = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const { user, system } = process.cpuUsage(cpu);
  const cpuPercent = ((user + system) / 1000 / windowMs) * 100;
  // Entries of the window's last moments are delivered on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();
  return { cpuPercent, markCompacts, markCompactPauseMs };
}

const gc = (globalThis as { gc?: () => void }).gc;

/** The heap after four full collections, as scale.ts measures the agent's. */
export async function collectedHeap(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

interface FloorRecord {
  id: number;
  name: string;
  next: FloorRecord | undefined;
  refs: unknown[];
}

/** Records until the collected heap has grown by `bytes`; the heap objects made (4 per record). */
async function build(bytes: number): Promise<{ kept: FloorRecord[][]; heapBytes: number; objects: number }> {
  const before = await collectedHeap();
  const kept: FloorRecord[][] = [];
  let records = 0;
  let grown = 0;
  while (grown < bytes) {
    // A batch, then a look at the heap: growth is read after a collection at the end, so the
    // batches stop a little past the target (uncollected garbage is nil: everything is kept).
    for (let group = 0; group < 100; group++) {
      const chain: FloorRecord[] = [];
      let previous: FloorRecord | undefined;
      for (let i = 0; i < 80; i++, records++) {
        const record: FloorRecord = { id: records, name: `record-${records}`, next: previous, refs: [] };
        for (let r = 0; r < 12; r++) record.refs.push(previous ?? record);
        chain.push(record);
        previous = record;
      }
      kept.push(chain);
    }
    grown = process.memoryUsage().heapUsed - before;
  }
  const heapBytes = (await collectedHeap()) - before;
  return { kept, heapBytes, objects: records * 4 };
}

export interface IdleFloor {
  /** The floor's heap over a bare process's, after collection. */
  heapBytes: number;
  objects: number;
  /** Runs the rounds (in step with the caller's own) and returns them. */
  rounds(): Promise<IdleRound[]>;
}

/** The floor in a process of its own, built and collected; its rounds start when `rounds()` is called. */
export async function startIdleFloor(bytes: number, rounds: number, windowMs: number): Promise<IdleFloor> {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      ...runScript(fileURLToPath(import.meta.url)),
      String(Math.round(bytes)),
      String(rounds),
      String(windowMs),
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<unknown> => {
    const line = await lines.next();
    if (line.done) throw new Error('the idle floor process exited early');
    return JSON.parse(line.value) as unknown;
  };
  const built = (await next()) as { heapBytes: number; objects: number };
  return {
    ...built,
    rounds: async () => {
      child.stdin.end('go\n');
      const { rounds: measured } = (await next()) as { rounds: IdleRound[] };
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
      return measured;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!gc) throw new Error('run with --expose-gc');
  const [bytes, rounds, windowMs] = process.argv.slice(2).map(Number);
  const floor = await build(bytes!);
  process.stdout.write(`${JSON.stringify({ heapBytes: floor.heapBytes, objects: floor.objects })}\n`);
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const measured: IdleRound[] = [];
  for (let round = 0; round < rounds!; round++) measured.push(await idleRound(windowMs!));
  process.stdout.write(`${JSON.stringify({ rounds: measured, held: floor.kept.length })}\n`);
  process.exit(0);
}
