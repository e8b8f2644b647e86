/**
 * CPU of the agent process per keepalive step: `n` idle servers in one supervisor (spread over
 * origins of 100 servers each, bench/clients.ts) ticking every `intervalMs`, the process's CPU time
 * (user + system, `process.cpuUsage()`) over `rounds` intervals, measured twice in one run:
 *
 * - `proof: 'server'` (the behaviour before issue #31): every idle server is probed every
 *   interval, so the CPU divided by the probes the server counted (its `/__stats` POSTs) is the
 *   CPU of one real probe;
 * - `proof: 'origin'` (the default): one keepalive per origin (src/runtime/keepalive/), one step
 *   per origin per interval, which skips its probe when the origin answered within the interval
 *   and else probes one of its servers: one probe per origin per interval at most, and no actor
 *   or delay per server. `steps` counts the origin keepalives' steps; the CPU left after the
 *   probes (at the first run's price), divided by the steps that sent nothing, is the CPU of one
 *   skipped step (with nothing skipped, of the origin's step and its share of the idle process).
 *
 *   node .bench-build/bench/keepalive-cpu.js [url|-] [servers=1000] [intervalMs=2000] [rounds=5]
 *
 * Without a url (or with `-`) it starts bench/server.ts (json mode) itself; a url must be such a
 * server (`node .bench-build/bench/server.js --mode json` prints its port).
 *
 * Prints `{"servers", "intervalMs", "server": {...}, "origin": {...}}`: for each, the probes the
 * server counted, the CPU per server per interval, and `idleCpuPercentAt10k`, the share of one
 * core 10,000 servers at the default 30 s interval would take (333 keepalive steps a second with `proof: 'server'`; 4 per interval per 4 origins with `'origin'`);
 * `cpuMsPerProbe` and `cpuMsPerSkippedStep`. With `KEEPALIVE_CPU_PROFILE=<file>`, also writes a
 * CPU profile of the `origin` window (open it in Chrome's dev tools).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import type { KeepaliveProof } from '../machines/keepalive.machine.js';
import { createSupervisor, type ServerConfigInput } from '../src/index.js';
import { spreadOverOrigins } from './clients.js';
import { startServer } from './measure.js';

interface WindowReport {
  /** Keepalive steps in the window: every server once per interval (`proof: 'server'`), every origin once (`'origin'`). */
  steps: number;
  /** Probes the server counted in the window. */
  probes: number;
  cpuMs: number;
  /** CPU per keepalive step. */
  cpuMsPerStep: number;
  /** CPU per server per interval (what 10,000 servers multiply). */
  cpuMsPerServerInterval: number;
  idleCpuPercentAt10k: number;
}

async function postsAt(url: string): Promise<number> {
  const stats = (await (await fetch(new URL('/__stats', url))).json()) as Record<string, { posts: number }>;
  return Object.values(stats).reduce((sum, path) => sum + path.posts, 0);
}

const PROFILE = process.env.KEEPALIVE_CPU_PROFILE;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measureWindow(
  url: string,
  n: number,
  intervalMs: number,
  rounds: number,
  proof: KeepaliveProof | 'off',
): Promise<WindowReport> {
  const servers: Record<string, ServerConfigInput> = {};
  const keepalive = proof === 'off' ? false : { intervalMs, timeoutMs: 10_000, maxMissed: 3, proof };
  for (let i = 0; i < n; i++) servers[`s${i}`] = { url: spreadOverOrigins(url, i), keepalive };
  const supervisor = createSupervisor({ servers });
  await supervisor.start();
  try {
    // One round to warm the probe path up (and to let the handshakes' answers age past the skip).
    await sleep(2 * intervalMs);
    const postsBefore = await postsAt(url);
    const profiler = PROFILE && proof === 'origin' ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const cpu = process.cpuUsage();
    await sleep(rounds * intervalMs);
    const { user, system } = process.cpuUsage(cpu);
    if (profiler) writeFileSync(PROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    const probes = (await postsAt(url)) - postsBefore;
    const cpuMs = (user + system) / 1000;
    const origins = Math.ceil(n / 100); // spreadOverOrigins: 100 servers per origin
    const steps = (proof === 'origin' ? origins : n) * rounds;
    const perServer = cpuMs / (n * rounds);
    return {
      steps,
      probes,
      cpuMs,
      cpuMsPerStep: cpuMs / steps,
      cpuMsPerServerInterval: perServer,
      idleCpuPercentAt10k: ((perServer * 10_000) / 30_000) * 100,
    };
  } finally {
    await supervisor.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [given = '-', n = '1000', intervalMs = '2000', rounds = '5'] = process.argv.slice(2);
  const server = given === '-' ? await startServer('json') : undefined;
  try {
    const url = server?.url ?? given;
    const byServer = await measureWindow(url, Number(n), Number(intervalMs), Number(rounds), 'server');
    const byOrigin = await measureWindow(url, Number(n), Number(intervalMs), Number(rounds), 'origin');
    const off = await measureWindow(url, Number(n), Number(intervalMs), Number(rounds), 'off');
    const cpuMsPerProbe = byServer.cpuMs / byServer.probes;
    const skipped = byOrigin.steps - byOrigin.probes;
    const report = {
      servers: Number(n),
      intervalMs: Number(intervalMs),
      server: { ...byServer, cpuMsPerProbe },
      origin: {
        ...byOrigin,
        cpuMsPerSkippedStep: skipped > 0 ? (byOrigin.cpuMs - byOrigin.probes * cpuMsPerProbe) / skipped : undefined,
      },
      off,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    server?.child.kill();
  }
  process.exit(0);
}
