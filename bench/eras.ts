/**
 * The two protocol eras against one server: the dual-era bench server (bench/server.ts
 * `--mode dual`, one implementation, json responses) spoken to in 2026-07-28 (`modern`: no
 * session id, no GET stream, the `_meta` envelope and MCP headers on every POST) and in the 2025
 * era (`stateful`: initialize, `Mcp-Session-Id`, a GET stream). Per era: raw undici, the official
 * v2 client (`@modelcontextprotocol/client`) and ours, all six measured in one run: the raw and
 * ours clients of both eras take turns slice by slice, the SDK's slices after them. Each client
 * talks to a path of its own, so the server's per-path counts show what each era put on the wire.
 */
import { openClient, type BenchClient, type ClientName } from './clients.js';
import {
  concurrent,
  idleHeap,
  idleVariants,
  retained,
  startServer,
  throughput,
  type BenchCounts,
  type ClientResult,
} from './measure.js';

type Era = 'modern' | 'stateful';
type Key = `${Era}-${ClientName}`;

/** What the server saw on one client's path: POSTs, those carrying a session id, modern ones, GET streams opened. */
export interface WireCounts {
  posts: number;
  withSession: number;
  modern: number;
  getStreams: number;
}

export interface ErasReport {
  modern: Record<ClientName, ClientResult>;
  stateful: Record<ClientName, ClientResult>;
  /** Per client, from connect to the end of its throughput slices. */
  wire: Record<Key, WireCounts>;
}

const ERAS: readonly Era[] = ['modern', 'stateful'];
const NAMES: readonly ClientName[] = ['raw', 'sdk', 'ours'];
const key = (era: Era, name: ClientName): Key => `${era}-${name}`;

/**
 * The v2 client answers ~300-800 calls/s here (a tenth of ours): its slices get one round of a
 * fifth of the calls, or it alone would take most of the bench's time.
 */
function sdkCounts(counts: BenchCounts): BenchCounts {
  const fifth = (n: number) => Math.max(counts.slices, Math.round(n / 5));
  return { ...counts, rounds: 1, seqCalls: fifth(counts.seqCalls), concCalls: fifth(counts.concCalls) };
}

export async function runEras(counts: BenchCounts): Promise<ErasReport> {
  const server = await startServer('dual');
  try {
    const keys = ERAS.flatMap((era) => NAMES.map((name) => key(era, name)));
    const clients = {} as Record<Key, BenchClient>;
    for (const era of ERAS)
      for (const name of NAMES)
        clients[key(era, name)] = await openClient(name, { kind: era, url: `${server.origin}/mcp/${key(era, name)}` });
    for (const k of keys) await concurrent(clients[k], Math.min(500, counts.concCalls), 8); // warm-up
    // Three rounds (15 slices each of four clients) keep this section near two minutes.
    const turnCounts = { ...counts, rounds: Math.min(3, counts.rounds) };
    const turns = await throughput(
      clients,
      ['modern-raw', 'modern-ours', 'stateful-raw', 'stateful-ours'],
      [],
      turnCounts,
    );
    const sdk = await throughput(clients, [], ['modern-sdk', 'stateful-sdk'], sdkCounts(counts));
    const results = { ...turns, ...sdk };
    const seen = (await (await fetch(`${server.origin}/__stats`)).json()) as Record<string, WireCounts>;
    const wire = {} as Record<Key, WireCounts>;
    for (const k of keys) wire[k] = seen[`/mcp/${k}`]!;
    for (const era of ERAS) {
      const ours = key(era, 'ours');
      results[ours].retainedBytesPerCall = await retained(clients[ours], counts.retainedCalls, counts.retainedSettleMs);
    }
    for (const k of keys) await clients[k].close();
    for (const era of ERAS) {
      const target = { kind: era, url: `${server.url}` };
      for (const name of NAMES)
        results[key(era, name)].idleHeapBytes = await idleHeap(name, target, counts.idleConnections);
      results[key(era, 'ours')].sharedIdleHeapBytes = await idleHeap('ours-shared', target, counts.idleConnections);
      // connect()'s defaults (`auto`) find this server modern; the 2025 era with defaults is run.ts's json row.
      if (era === 'modern')
        results[key(era, 'ours')].defaultsIdleHeapBytes = await idleHeap(
          'ours-defaults',
          target,
          counts.idleConnections,
        );
    }
    const byEra = (era: Era) =>
      Object.fromEntries(NAMES.map((name) => [name, results[key(era, name)]])) as Record<ClientName, ClientResult>;
    return { modern: byEra('modern'), stateful: byEra('stateful'), wire };
  } finally {
    server.child.kill();
  }
}

const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? 'n/a' : (a / b).toFixed(2);
const kb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / 1024).toFixed(1)} KB`);

/**
 * Two tables: each client in each era with what went on the wire, then modern ÷ 2025-era per
 * client (above 1 for calls/s, below 1 for CPU, latency and heap: the modern wire is cheaper).
 */
export function formatEras(eras: ErasReport): string {
  const lines = [
    '| era | client | seq calls/s | 64-conc calls/s | CPU µs/call at 64 | p50 ms | p99 ms | idle heap/conn | POSTs | with session id | GET streams |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const era of ERAS)
    for (const name of NAMES) {
      const r = eras[era][name];
      const w = eras.wire[key(era, name)];
      const shared = idleVariants(r);
      lines.push(
        `| ${era === 'modern' ? '2026-07-28' : '2025 (session)'} | ${name} | ${r.seqOps.toFixed(0)} | ${r.concOps.toFixed(0)} | ${r.concCpuUs.toFixed(1)} | ${r.p50Ms.toFixed(3)} | ${r.p99Ms.toFixed(3)} | ${kb(r.idleHeapBytes)}${shared} | ${w.posts} | ${w.withSession} | ${w.getStreams} |`,
      );
    }
  lines.push(
    '',
    '| client | modern/2025 seq | modern/2025 conc | modern/2025 CPU at 64 | modern/2025 p50 | modern/2025 p99 | modern/2025 idle heap | ours/raw conc (modern / 2025) | ours/SDK conc (modern / 2025) |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const name of NAMES) {
    const m = eras.modern[name];
    const s = eras.stateful[name];
    const vs =
      name === 'ours'
        ? [
            `${ratio(m.concOps, eras.modern.raw.concOps)} / ${ratio(s.concOps, eras.stateful.raw.concOps)}`,
            `${ratio(m.concOps, eras.modern.sdk.concOps)} / ${ratio(s.concOps, eras.stateful.sdk.concOps)}`,
          ]
        : ['', ''];
    lines.push(
      `| ${name} | ${ratio(m.seqOps, s.seqOps)} | ${ratio(m.concOps, s.concOps)} | ${ratio(m.concCpuUs, s.concCpuUs)} | ${ratio(m.p50Ms, s.p50Ms)} | ${ratio(m.p99Ms, s.p99Ms)} | ${ratio(m.idleHeapBytes, s.idleHeapBytes)} | ${vs.join(' | ')} |`,
    );
  }
  return lines.join('\n');
}
