/**
 * CPU of the agent process per keepalive probe: `n` idle servers in one supervisor probed every
 * `intervalMs`, the process's CPU time (user + system, `process.cpuUsage()`) over `rounds`
 * intervals divided by the probes the server counted in that window (its `/__stats` POSTs). The
 * server runs in a process of its own, so its CPU is not counted; idle servers answer nothing
 * between probes, so every server is probed every interval (no skip for recent traffic).
 *
 *   node .bench-build/bench/keepalive-cpu.js [url|-] [servers=1000] [intervalMs=2000] [rounds=5]
 *
 * Without a url (or with `-`) it starts bench/server.ts (json mode) itself; a url must be such a
 * server (`node .bench-build/bench/server.js --mode json` prints its port).
 *
 * Prints `{"servers", "probes", "cpuMsPerProbe", "idleCpuPercentAt10k"}`: the last is the share of
 * one core 10,000 servers at the default 30 s interval would take (333 probes a second). With
 * `KEEPALIVE_CPU_PROFILE=<file>`, also writes a CPU profile of the measured window (open it in
 * Chrome's dev tools).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { createSupervisor, type ServerConfigInput } from '../src/index.js';
import { spreadOverOrigins } from './clients.js';
import { startServer } from './measure.js';

interface KeepaliveCpuReport {
  servers: number;
  intervalMs: number;
  probes: number;
  cpuMsPerProbe: number;
  idleCpuPercentAt10k: number;
}

async function postsAt(url: string): Promise<number> {
  const stats = (await (await fetch(new URL('/__stats', url))).json()) as Record<string, { posts: number }>;
  return Object.values(stats).reduce((sum, path) => sum + path.posts, 0);
}

const PROFILE = process.env.KEEPALIVE_CPU_PROFILE;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measureKeepaliveCpu(
  url: string,
  n: number,
  intervalMs: number,
  rounds: number,
): Promise<KeepaliveCpuReport> {
  const servers: Record<string, ServerConfigInput> = {};
  const keepalive = { intervalMs, timeoutMs: 10_000, maxMissed: 3 };
  for (let i = 0; i < n; i++) servers[`s${i}`] = { url: spreadOverOrigins(url, i), keepalive };
  const supervisor = createSupervisor({ servers });
  await supervisor.start();
  try {
    // One round to warm the probe path up (and to let the handshakes' answers age past the skip).
    await sleep(2 * intervalMs);
    const postsBefore = await postsAt(url);
    const profiler = PROFILE ? new Session() : undefined;
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
    const cpuMsPerProbe = (user + system) / 1000 / probes;
    return {
      servers: n,
      intervalMs,
      probes,
      cpuMsPerProbe,
      idleCpuPercentAt10k: ((cpuMsPerProbe * 10_000) / 30_000) * 100,
    };
  } finally {
    await supervisor.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [given = '-', n = '1000', intervalMs = '2000', rounds = '5'] = process.argv.slice(2);
  const server = given === '-' ? await startServer('json') : undefined;
  try {
    const report = await measureKeepaliveCpu(server?.url ?? given, Number(n), Number(intervalMs), Number(rounds));
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    server?.child.kill();
  }
  process.exit(0);
}
