/**
 * Many servers in one supervisor: `n` Streamable HTTP servers spread over `processes` local
 * server processes (bench/server.ts, json mode, one port each, a path per server), measured in a
 * fresh process of its own (like the idle heap):
 *
 * - ready: from `createSupervisor` to `start()` resolved with every server ready;
 * - heap per idle server: the collected heap after start minus before, / n (a supervisor of 100
 *   opened and closed first, so module state and compiled code are not counted);
 * - `sup.status()` of all: the first call, then the median and the slowest of 50 more, and its
 *   CPU right after one server's status changed (the table of all is built again);
 * - open files of the agent process once all are ready (request sockets are shared per origin,
 *   each server holds its own listening stream);
 * - idle CPU: the agent process's CPU time over one keepalive round (30 s, the default interval,
 *   with every server ready and nothing else to do), as a share of one core; six rounds in a
 *   row, each with V8's mark-compact pauses inside it (the memory reducer runs up to three
 *   mark-compacts once allocation has been low for a while: a one-off cost of a newly idle
 *   process, which lands in whichever round the allocation rate decays in), beside the idle
 *   floor's rounds at the same time (bench/idle-floor.ts: a bare process holding a heap as large,
 *   which V8's memory reducer compacts too): the agent's mean over the floor's is the runtime's own;
 * - one process killed: how long until all of its servers left `ready` (and how many others
 *   did: none should), then the process restarted on its port: how long until all are ready;
 * - `stop()`: how long until every session is closed and every actor stopped.
 *
 *   node --expose-gc .bench-build/bench/scale.js <servers> <processes>   (or --import tsx bench/scale.ts)
 *   node --expose-gc .bench-build/bench/scale.js --growth 100,1000,10000 <processes>
 *   node --expose-gc .bench-build/bench/scale.js --quick <servers> <processes>   (ready, status(), stop() only)
 *
 * Prints the ScaleReport as JSON; `--growth` measures each size in a fresh process and prints
 * the growth table (markdown), then the reports as JSON.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createSupervisor, type ServerConfigInput, type Supervisor } from '../src/index.js';
import { collectedHeap, idleRound, startIdleFloor, type IdleRound } from './idle-floor.js';
import { runScript, script } from './measure.js';

export interface ScaleReport {
  servers: number;
  processes: number;
  readyMs: number;
  /**
   * From `createSupervisor` until every server's listening stream was open (counted by the server
   * processes): a start of more than 256 servers opens them after its handshakes (src/listen-turn.ts).
   */
  allListeningMs: number | undefined;
  /** CPU time of the agent process until every listening stream was open. */
  allListeningCpuMs: number | undefined;
  /**
   * CPU time of the agent process (user + system) spent until all were ready, and the same for
   * status() and stop(): on a machine shared with other work the wall-clock figures include
   * the time spent waiting for a core; these do not.
   */
  readyCpuMs: number;
  heapPerServerBytes: number;
  statusFirstMs: number;
  statusMedianMs: number;
  /** The slowest of the 50 calls after the first. */
  statusMaxMs: number;
  statusCpuMedianMs: number;
  /** `sup.status()` of all right after one server's status changed (a request answered): median CPU of 20. */
  statusAfterChangeCpuMedianMs: number;
  /** Open file descriptors of the agent process with every server ready (Linux; undefined elsewhere). */
  openFiles: number | undefined;
  /** CPU time of the agent process over the idle window right after ready, as a share of one core (percent). */
  idleCpuPercent: number;
  /** The same over the next window: the steady state, once the start's last timers have fired. */
  steadyIdleCpuPercent: number;
  /** The same over the third window: what is left once the memory reducer has run (or not yet). */
  settledIdleCpuPercent: number;
  /**
   * Each idle window (six, or SCALE_IDLE_ROUNDS): its CPU, and V8's mark-compacts in it: how
   * many, and their main-thread pauses with incremental steps (ms).
   */
  idleRounds: IdleRound[];
  idleWindowMs: number;
  /**
   * The floor (bench/idle-floor.ts): a bare process holding a heap as large (its bytes and heap
   * objects), idle over the same rounds at the same time; undefined in a quick run.
   */
  idleFloor: { heapBytes: number; objects: number; rounds: IdleRound[] } | undefined;
  /**
   * The agent's CPU over the floor's, averaged over all the rounds (percent of a core): what the
   * runtime spends idle, V8's one memory-reducer pass over a heap this large taken out.
   */
  idleOverFloorPercent: number | undefined;
  /** `stop()` of all, until it resolved. */
  stopMs: number;
  stopCpuMs: number;
  /** Of which in the kernel (closing sockets wakes the server processes). */
  stopSystemCpuMs: number;
  kill: {
    /** Servers of the killed process. */
    killed: number;
    /** From the kill until every one of them had left `ready`; undefined if some never did. */
    allLeftReadyMs: number | undefined;
    /** Servers of the other processes that left `ready` meanwhile (should be 0). */
    othersLeftReady: number;
    /** From the restart of the process until every server was `ready` again; undefined if not within the bound. */
    allBackMs: number | undefined;
  };
}

const SERVER = script('server');

interface ServerProcess {
  port: number;
  child: ChildProcess;
}

async function startServerProcess(port = 0): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...runScript(SERVER), '--mode', 'json', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listening = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { port: number }).port));
    child.once('exit', () => reject(new Error('scale server exited')));
  });
  return { port: listening, child };
}

function stopServerProcess(server: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
    server.child.once('exit', () => resolve());
    server.child.kill(signal);
  });
}

/** Server i lives on process i % processes, at a path of its own. */
function configs(prefix: string, n: number, ports: readonly number[]): Record<string, ServerConfigInput> {
  const servers: Record<string, ServerConfigInput> = {};
  for (let i = 0; i < n; i++) {
    servers[`${prefix}-${i}`] = {
      url: `http://127.0.0.1:${ports[i % ports.length]!}/mcp/${i}`,
      type: 'http',
      // SCALE_PROTOCOL_VERSION=2025-06-18: the era pinned, no `server/discover` per server (a what-if).
      ...(process.env.SCALE_PROTOCOL_VERSION && { protocolVersion: process.env.SCALE_PROTOCOL_VERSION }),
      // The keepalive as configured by default (every 30 s): the killed process is found by
      // its GET streams closing; the restart budget is not what is measured.
      restart: {
        maxRestarts: 1_000,
        withinMs: 60_000,
        backoff: { initialMs: 100, maxMs: 1_000, factor: 2, jitter: 0.2 },
      },
    };
  }
  return servers;
}

const gc = (globalThis as { gc?: () => void }).gc;

function until(predicate: () => boolean, timeoutMs: number): Promise<number | undefined> {
  const start = performance.now();
  return new Promise((resolve) => {
    const check = () => {
      if (predicate()) return resolve(performance.now() - start);
      if (performance.now() - start > timeoutMs) return resolve(undefined);
      setTimeout(check, 25);
    };
    check();
  });
}

/** With SCALE_MARKS set: the phase's start on stderr, in the clock of a --cpu-prof profile (µs), to cut the profile by phase. */
function mark(phase: string): void {
  if (process.env.SCALE_MARKS)
    process.stderr.write(`mark ${phase} ${process.hrtime.bigint() / 1000n} (${Math.round(performance.now())} ms)\n`);
}

/** CPU time (user + system) of this process since `since`, in ms. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

/** The listening GET streams open now on all server processes. */
async function openStreams(ports: readonly number[]): Promise<number> {
  const counts = await Promise.all(
    ports.map(async (port) => {
      const response = await fetch(`http://127.0.0.1:${port}/__streams`);
      return ((await response.json()) as { open: number }).open;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Polls until `n` listening streams are open; the time it took, or undefined after `timeoutMs`. */
async function untilListening(n: number, ports: readonly number[], timeoutMs: number): Promise<number | undefined> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if ((await openStreams(ports)) >= n) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return undefined;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function startAll(prefix: string, n: number, ports: readonly number[]): Promise<Supervisor> {
  const supervisor = createSupervisor({ servers: configs(prefix, n, ports) });
  await supervisor.start();
  const down = Object.values(supervisor.status()).filter((s) => s.state !== 'ready');
  if (down.length > 0)
    throw new Error(`${down.length} of ${n} servers are not ready: ${down[0]?.lastError ?? down[0]?.state}`);
  return supervisor;
}

/** `quick`: ready, status() and stop() only (no idle window, no kill): for profiling start and stop. */
export async function runScale(n: number, processes: number, quick = false): Promise<ScaleReport> {
  const servers = await Promise.all(Array.from({ length: processes }, () => startServerProcess()));
  const ports = servers.map((s) => s.port);
  try {
    // Warm-up: module state, the machines and compiled code are not per server (status() too:
    // its first call would otherwise count the compiling of its code).
    const warm = await startAll('warm', Math.min(100, n), ports);
    for (let i = 0; i < 20; i++) warm.status();
    await warm.stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = await collectedHeap();
    mark('start');
    const started = performance.now();
    let cpu = process.cpuUsage();
    const supervisor = await startAll('server', n, ports);
    const readyMs = performance.now() - started;
    const readyCpuMs = cpuMs(cpu);
    mark('ready');
    const listeningAfterReady = await untilListening(n, ports, 60_000);
    const allListeningMs = listeningAfterReady === undefined ? undefined : readyMs + listeningAfterReady;
    const allListeningCpuMs = listeningAfterReady === undefined ? undefined : cpuMs(cpu);
    mark('listening');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const heapPerServerBytes = ((await collectedHeap()) - before) / n;

    let t = performance.now();
    supervisor.status();
    const statusFirstMs = performance.now() - t;
    const samples: number[] = [];
    const cpuSamples: number[] = [];
    for (let i = 0; i < 50; i++) {
      t = performance.now();
      cpu = process.cpuUsage();
      supervisor.status();
      samples.push(performance.now() - t);
      cpuSamples.push(cpuMs(cpu));
    }

    // The idle floor's heap is built in its own process from here (after status() was timed: its
    // building takes a core) until the idle rounds; a start's memory reducer waits 8 s at least.
    const idleRoundCount = quick ? 0 : Number(process.env.SCALE_IDLE_ROUNDS ?? 6);
    const idleWindowMs = quick ? 0 : n >= 100 ? IDLE_WINDOW_MS : 1_000;
    const floorStarting = quick ? undefined : startIdleFloor(heapPerServerBytes * n, idleRoundCount, idleWindowMs);

    // Kept while nothing changed; one server's answered request makes the table new.
    const changedSamples: number[] = [];
    for (let i = 0; i < 20; i++) {
      await supervisor.server(`server-${i % n}`).listTools();
      cpu = process.cpuUsage();
      supervisor.status();
      changedSamples.push(cpuMs(cpu));
    }

    const openFiles = countOpenFiles();

    // Idle: every server ready, keepalive rounds (a probe per origin, a skipped step for the
    // rest). The first round after ready also holds the start's last work: each session's
    // restart budget is reset when it has proven itself (`provenAfterMs`, 10 s). V8's memory
    // reducer runs once in one of the rounds (its mark-compacts are counted per round), in this
    // process and in the idle floor's (a bare process holding a heap as large), whose rounds run
    // at the same time: the agent's idle CPU over the floor's is the runtime's own.
    const floor = await floorStarting;
    const floorRounds = floor?.rounds();
    const idleRounds: IdleRound[] = [];
    for (let round = 0; round < idleRoundCount; round++) {
      mark(['idle', 'steady', 'settled'][round] ?? `idle ${round + 1}`);
      idleRounds.push(await idleRound(idleWindowMs));
    }
    const [idleCpuPercent = 0, steadyIdleCpuPercent = 0, settledIdleCpuPercent = 0] = idleRounds.map(
      (r) => r.cpuPercent,
    );
    const idleFloor = floor && { heapBytes: floor.heapBytes, objects: floor.objects, rounds: (await floorRounds)! };
    const meanCpu = (rounds: readonly IdleRound[]) => rounds.reduce((sum, r) => sum + r.cpuPercent, 0) / rounds.length;
    const idleOverFloorPercent =
      idleFloor && idleRounds.length > 0 ? meanCpu(idleRounds) - meanCpu(idleFloor.rounds) : undefined;

    mark('kill');
    // Kill process 0: only its servers may leave ready, and all of them must come back.
    const victim = servers[0]!;
    const isVictim = (name: string) => Number(name.slice('server-'.length)) % processes === 0;
    const othersLeft = new Set<string>();
    // Followed by the transitions, not by status() polls: at 10,000 servers a poll of all would
    // take the CPU the reconnections need.
    const notReady = new Set<string>();
    const off = supervisor.on('transition', (event) => {
      if (event.from === 'ready' && !isVictim(event.server)) othersLeft.add(event.server);
      if (event.to === 'ready') notReady.delete(event.server);
      else notReady.add(event.server);
    });
    const victims = quick ? [] : Object.keys(supervisor.status()).filter(isVictim);
    const killed = victims.length;
    let allLeftReadyMs: number | undefined;
    let allBackMs: number | undefined;
    if (!quick) {
      await stopServerProcess(victim, 'SIGKILL');
      allLeftReadyMs = await until(() => victims.every((name) => notReady.has(name)), 20_000);
      servers[0] = await startServerProcess(victim.port);
      allBackMs = await until(() => notReady.size === 0, 30_000);
    }
    off();
    const stillDown = Object.values(supervisor.status()).filter((s) => s.state !== 'ready').length;
    if (allBackMs !== undefined && stillDown > 0) throw new Error(`${stillDown} servers are not ready after all`);
    mark('stop');
    t = performance.now();
    cpu = process.cpuUsage();
    await supervisor.stop();
    const stopMs = performance.now() - t;
    const stopCpuMs = cpuMs(cpu);
    const stopSystemCpuMs = process.cpuUsage(cpu).system / 1000;
    mark('stopped');
    return {
      servers: n,
      processes,
      readyMs,
      allListeningMs,
      allListeningCpuMs,
      heapPerServerBytes,
      statusFirstMs,
      statusMedianMs: median(samples),
      statusMaxMs: Math.max(...samples),
      statusCpuMedianMs: median(cpuSamples),
      statusAfterChangeCpuMedianMs: median(changedSamples),
      readyCpuMs,
      stopCpuMs,
      stopSystemCpuMs,
      openFiles,
      idleCpuPercent,
      steadyIdleCpuPercent,
      settledIdleCpuPercent,
      idleRounds,
      idleWindowMs,
      idleFloor,
      idleOverFloorPercent,
      stopMs,
      kill: { killed, allLeftReadyMs, othersLeftReady: othersLeft.size, allBackMs },
    };
  } finally {
    await Promise.all(servers.map((s) => stopServerProcess(s)));
  }
}

/** One keepalive round at the default interval. */
const IDLE_WINDOW_MS = 30_000;

function countOpenFiles(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

/** Each size in a fresh process of its own (the heap and the compiled code of one do not count in the next). */
async function runGrowth(sizes: readonly number[], processes: number): Promise<ScaleReport[]> {
  const reports: ScaleReport[] = [];
  for (const n of sizes) {
    const child = spawn(
      process.execPath,
      ['--expose-gc', ...runScript(fileURLToPath(import.meta.url)), String(n), String(processes)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the scale measurement of ${n} servers exited with ${code}`);
    reports.push(JSON.parse(out) as ScaleReport);
  }
  return reports;
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined ? 'n/a' : n.toFixed(digits));

/** The growth table: one row per size, so a reader sees what is linear and where it bends. */
function formatGrowth(reports: readonly ScaleReport[]): string {
  return [
    '| servers | processes (origins) | ready (all): wall / CPU | all listening: wall / CPU | heap per idle server | open files | status() of all: first / median / max (median CPU) | status() after one change (median CPU) | idle CPU (the 30 s keepalive rounds after ready: each round; mark-compacts in each) | idle CPU over the floor (mean of the rounds; mark-compacts of the floor) | killed | all left ready after | others that left ready | all back after | stop(): wall / CPU (of it kernel) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...reports.map(
      (r) =>
        `| ${r.servers} | ${r.processes} | ${fmt(r.readyMs)} / ${fmt(r.readyCpuMs)} ms | ${fmt(r.allListeningMs)} / ${fmt(r.allListeningCpuMs)} ms | ${fmt(r.heapPerServerBytes / 1024, 1)} KB | ${r.openFiles ?? 'n/a'} | ${fmt(r.statusFirstMs, 2)} / ${fmt(r.statusMedianMs, 2)} / ${fmt(r.statusMaxMs, 2)} ms (${fmt(r.statusCpuMedianMs, 2)} ms) | ${fmt(r.statusAfterChangeCpuMedianMs, 2)} ms | ${r.idleRounds.map((g) => fmt(g.cpuPercent, 2)).join(' / ')} % of a core (${r.idleRounds.map((g) => `${g.markCompacts}: ${fmt(g.markCompactPauseMs)} ms`).join(' / ')}) | ${fmt(r.idleOverFloorPercent, 2)} % (${r.idleFloor?.rounds.map((g) => g.markCompacts).join(' / ') ?? 'n/a'}) | ${r.kill.killed} | ${fmt(r.kill.allLeftReadyMs)} ms | ${r.kill.othersLeftReady} | ${fmt(r.kill.allBackMs)} ms | ${fmt(r.stopMs)} / ${fmt(r.stopCpuMs)} ms (kernel ${fmt(r.stopSystemCpuMs)}) |`,
    ),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args[0] === '--growth') {
    const sizes = (args[1] ?? '100,1000,10000').split(',').map(Number);
    const reports = await runGrowth(sizes, Number(args[2] ?? 4));
    process.stdout.write(`${formatGrowth(reports)}\n\n${JSON.stringify(reports)}\n`);
    process.exit(0);
  }
  const quick = args[0] === '--quick';
  const [n, processes] = quick ? args.slice(1) : args;
  if (!gc) throw new Error('run with --expose-gc');
  const report = await runScale(Number(n ?? 1000), Number(processes ?? 4), quick);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.exit(0);
}
