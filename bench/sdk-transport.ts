/**
 * The cost of the drop-in transport: the official SDK's `Client` (v1 and v2) over its own
 * Streamable HTTP transport against the same `Client` over `supervisedTransport()`, same server
 * (bench/server.ts, SSE answers), one run: calls/s sequential and 64 in flight (bench/measure.ts's
 * slices, the two transports of each Client taking turns), and idle heap per connection (each
 * measured in a fresh process).
 *
 *   npm run bench (compiled)   or   npx tsx bench/sdk-transport.ts [--quick]
 *   node --expose-gc .bench-build/bench/sdk-transport.js --idle <client> <url> <connections>   (one idle measurement)
 */
import { spawn } from 'node:child_process';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { supervisedTransport } from '../src/adapters/sdk/index.js';
import type { BenchClient } from './clients.js';
import { runScript, script, startServer, throughput, type BenchCounts } from './measure.js';

const NAMES = ['v1 own', 'v1 ours', 'v2 own', 'v2 ours'] as const;
type Name = (typeof NAMES)[number];
const CALL = { name: 'echo', arguments: {} };
/** Ours without a keepalive timer, as the SDK has none; everything else at its defaults. */
const KEEPALIVE = { intervalMs: 3_600_000, timeoutMs: 10_000, maxMissed: 3 };

async function open(name: Name, url: string): Promise<BenchClient> {
  const ours = name.endsWith('ours');
  if (name.startsWith('v1')) {
    const client = new ClientV1({ name: 'bench', version: '1' });
    await client.connect(ours ? supervisedTransport({ url, keepalive: KEEPALIVE }) : new HttpV1(new URL(url)));
    return { call: () => client.callTool(CALL), close: () => client.close() };
  }
  const client = new ClientV2({ name: 'bench', version: '1' });
  await client.connect(ours ? supervisedTransport({ url, keepalive: KEEPALIVE }) : new HttpV2(new URL(url)));
  return { call: () => client.callTool(CALL), close: () => client.close() };
}

const gc = (globalThis as { gc?: () => void }).gc;

/** In this (fresh) process: `n` idle connections of one kind; bytes of heap each. */
async function idleHere(name: Name, url: string, n: number): Promise<number> {
  const heap = async () => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 4; i++) gc!();
    return process.memoryUsage().heapUsed;
  };
  // One first, so that code loaded once is not counted per connection.
  const warm = await open(name, url);
  await warm.call();
  const before = await heap();
  const clients: BenchClient[] = [];
  for (let i = 0; i < n; i += 10)
    clients.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => open(name, url)))));
  const after = await heap();
  for (const client of [warm, ...clients]) await client.close();
  return (after - before) / n;
}

async function idleHeap(name: Name, url: string, n: number): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', ...runScript(script('sdk-transport')), '--idle', name, url, String(n)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`idle heap of ${name} exited with ${code}`);
  return (JSON.parse(out) as { bytesPerConnection: number }).bytesPerConnection;
}

export async function runSdkTransportBench(counts: BenchCounts): Promise<string> {
  const server = await startServer('sse');
  try {
    const clients = {} as Record<Name, BenchClient>;
    for (const name of NAMES) clients[name] = await open(name, server.url);
    const rows = {
      ...(await throughput(clients, ['v1 own', 'v1 ours'], [], counts)),
      ...(await throughput(clients, ['v2 own', 'v2 ours'], [], counts)),
    };
    for (const name of NAMES) await clients[name].close();
    const lines = [
      "The SDK's Client over its own Streamable HTTP transport (own) and over supervisedTransport (ours), SSE answers",
      '',
      `| Client | transport | calls/s sequential | calls/s ${counts.concurrency} in flight | idle heap per connection |`,
      '| --- | --- | --- | --- | --- |',
    ];
    for (const name of NAMES) {
      const idle = await idleHeap(name, server.url, counts.idleConnections);
      const [version, transport] = name.split(' ');
      const r = rows[name];
      lines.push(
        `| SDK ${version} | ${transport} | ${Math.round(r.seqOps)} | ${Math.round(r.concOps)} | ${(idle / 1024).toFixed(1)} KB |`,
      );
    }
    return lines.join('\n');
  } finally {
    server.child.kill();
  }
}

// Modest counts: in a long run the SDK's own transports pile up abort listeners on one signal
// (MaxListenersExceededWarning past 1,900 here), which slows every later call of that client.
const FULL: BenchCounts = {
  seqCalls: 1000,
  concCalls: 4000,
  concurrency: 64,
  rounds: 2,
  slices: 4,
  idleConnections: 50,
  retainedCalls: 0,
  retainedSettleMs: 0,
  expiryCalls: 0,
  scaleServers: 0,
  scaleProcesses: 0,
};
const QUICK: BenchCounts = { ...FULL, seqCalls: 200, concCalls: 800, rounds: 1, slices: 2, idleConnections: 10 };

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const args = process.argv.slice(2);
  if (args[0] === '--idle') {
    const bytes = await idleHere(args[1] as Name, args[2]!, Number(args[3]));
    console.log(JSON.stringify({ bytesPerConnection: Math.round(bytes) }));
    process.exit(0);
  }
  console.log(await runSdkTransportBench(args.includes('--quick') ? QUICK : FULL));
}
