/**
 * `npm run bench`: raw floor vs the official SDK client vs mcp-supervisor, per transport, and
 * the two protocol eras against one server (bench/eras.ts).
 * Options: --quick (tiny counts), --json <file>, --only json,sse,legacy,stdio,eras,interceptors,scale
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openClient, type BenchClient, type ClientName, type Kind, type Target } from './clients.js';
import { formatEras, runEras, type ErasReport } from './eras.js';
import { formatInterceptors, runInterceptors, type InterceptorsReport } from './interceptors.js';
import {
  COMPILED,
  concurrent,
  idleHeap,
  retained,
  runScript,
  script,
  startServer,
  throughput,
  type BenchCounts,
  type ClientResult,
  idleVariants,
} from './measure.js';
import type { ScaleReport } from './scale.js';

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

export interface BenchReport {
  machine: { node: string; cpu: string; cores: number; platform: string };
  counts: BenchCounts;
  transports: Partial<Record<Kind, Partial<Record<ClientName, ClientResult>>>>;
  /** Many servers in one supervisor (bench/scale.ts), when measured. */
  scale?: ScaleReport | undefined;
  /** The 2026-07-28 wire beside the 2025 era, one server (bench/eras.ts), when measured. */
  eras?: ErasReport | undefined;
  /** `callTool` with no interceptors against the path before them, and with one (bench/interceptors.ts). */
  interceptors?: InterceptorsReport | undefined;
}

/** What `--only` may name: the transports, the era comparison and the scale measurement. */
export type Section = Exclude<Kind, 'modern' | 'stateful'> | 'eras' | 'interceptors' | 'scale';

const STDIO = fileURLToPath(new URL(`${COMPILED ? '../..' : '..'}/servers/stdio-server.mjs`, import.meta.url));
const SCALE = script('scale');

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
  const sections = options.only ?? (['json', 'sse', 'legacy', 'stdio', 'eras', 'interceptors', 'scale'] as Section[]);
  const kinds = sections.filter(
    (s): s is Exclude<Section, 'eras' | 'interceptors' | 'scale'> =>
      s !== 'scale' && s !== 'eras' && s !== 'interceptors',
  );
  for (const kind of kinds) {
    const server = kind === 'stdio' ? undefined : await startServer(kind);
    const target: Target = { kind, url: server ? server.url : STDIO };
    const names: ClientName[] = kind === 'legacy' ? ['sdk', 'ours'] : ['raw', 'sdk', 'ours'];
    try {
      const clients = Object.fromEntries(
        await Promise.all(names.map(async (n) => [n, await openClient(n, target)] as const)),
      ) as Record<ClientName, BenchClient>;
      for (const n of names) await concurrent(clients[n], Math.min(500, counts.concCalls), 8); // warm-up
      const turns = names.filter((n) => n !== 'sdk');
      const results: Partial<Record<ClientName, ClientResult>> = await throughput(clients, turns, ['sdk'], counts);
      // Raw too: what the method reads for a client that keeps nothing is its floor.
      for (const n of names)
        results[n]!.retainedBytesPerCall = await retained(clients[n], counts.retainedCalls, counts.retainedSettleMs);
      for (const n of names) await clients[n].close();
      if (kind !== 'stdio') {
        for (const n of names)
          if (n !== 'raw') results[n]!.idleHeapBytes = await idleHeap(n, target, counts.idleConnections);
        if (results.ours)
          results.ours.sharedIdleHeapBytes = await idleHeap('ours-shared', target, counts.idleConnections);
        // The 2025 era with connect()'s defaults: these servers do not speak 2026-07-28, so `auto` falls back.
        if (results.ours && kind !== 'legacy')
          results.ours.defaultsIdleHeapBytes = await idleHeap('ours-defaults', target, counts.idleConnections);
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
  if (sections.includes('eras')) {
    report.eras = await runEras(counts);
    report.transports.modern = report.eras.modern;
    report.transports.stateful = report.eras.stateful;
    log(formatEras(report.eras));
  }
  if (sections.includes('interceptors')) {
    report.interceptors = await runInterceptors(counts);
    log(formatInterceptors(report.interceptors));
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
    '| servers | processes | ready (all) | all listening | heap per idle server | status() of all: first / median / max | killed | all left ready after | others that left ready | all back after |',
    '|---|---|---|---|---|---|---|---|---|---|',
    `| ${scale.servers} | ${scale.processes} | ${fmt(scale.readyMs)} ms | ${fmt(scale.allListeningMs)} ms | ${fmt(scale.heapPerServerBytes / 1024, 1)} KB | ${fmt(scale.statusFirstMs, 2)} / ${fmt(scale.statusMedianMs, 2)} / ${fmt(scale.statusMaxMs, 2)} ms | ${kill.killed} | ${fmt(kill.allLeftReadyMs)} ms | ${kill.othersLeftReady} | ${fmt(kill.allBackMs)} ms |`,
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
      const shared = idleVariants(r);
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
    `node ${machine.node}, ${machine.cpu} x${machine.cores}, ${machine.platform}\n\n${formatTable(report)}\n${report.eras ? `\n${formatEras(report.eras)}\n` : ''}${report.interceptors ? `\n${formatInterceptors(report.interceptors)}\n` : ''}${report.scale ? `\n${formatScale(report.scale)}\n` : ''}`,
  );
  const out = arg('--json');
  if (out) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
}
