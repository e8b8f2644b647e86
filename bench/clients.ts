/**
 * The three clients the bench compares, behind one interface: raw (hand-built JSON-RPC, the
 * floor), the official SDK client, and mcp-supervisor. The `modern` and `stateful` kinds are the
 * two eras against one dual-era server (bench/eras.ts; their raw and SDK clients: era-clients.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connect, createSupervisor, type ServerConfigInput } from '../src/index.js';
import { rawModern, sdkV2 } from './era-clients.js';

/** `modern` / `stateful`: the dual-era server spoken to in 2026-07-28, or in the 2025 era (session + GET stream). */
export type Kind = 'json' | 'sse' | 'legacy' | 'stdio' | 'modern' | 'stateful';
export interface Target {
  kind: Kind;
  /** URL for HTTP kinds; for stdio the script path. */
  url: string;
}
export interface BenchClient {
  call(): Promise<unknown>;
  close(): Promise<void>;
}
export type ClientName = 'raw' | 'sdk' | 'ours';

const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } };
const CALL = { name: 'echo', arguments: {} };

/** Raw undici Streamable HTTP: one Pool, pre-built headers, hand-built JSON-RPC. */
async function rawHttp(url: string, sse: boolean): Promise<BenchClient> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 128 });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const post = async (body: object) => {
    const res = await pool.request({ path: u.pathname, method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.body.text();
    return { res, text };
  };
  const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INIT });
  headers['mcp-session-id'] = init.res.headers['mcp-session-id'] as string;
  headers['mcp-protocol-version'] = '2025-06-18';
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 0;
  return {
    async call() {
      const { res, text } = await post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: CALL });
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
      const json = sse ? text.slice(text.indexOf('data: ') + 6, text.lastIndexOf('}') + 1) : text;
      return (JSON.parse(json) as { result: unknown }).result;
    },
    close: () => pool.destroy(),
  };
}

/**
 * Raw stdio: a child process, newline-delimited JSON-RPC, a Map of waiters. Spawned `detached`
 * as ours spawns its servers (its own session, so a stop reaches the whole tree): with the
 * kernel's autogroup scheduling a detached child gets a scheduling group of its own, and an
 * attached one shares the bench's; the two floors differed by 1.5-2x per sequential round trip.
 */
async function rawStdio(script: string): Promise<BenchClient> {
  const child: ChildProcess = spawn(process.execPath, [script], {
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: process.platform !== 'win32',
  });
  const waiters = new Map<number, (value: unknown) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line) as { id: number; result: unknown };
    waiters.get(message.id)?.(message.result);
    waiters.delete(message.id);
  });
  let id = 0;
  const request = (method: string, params: object) =>
    new Promise((resolve) => {
      const n = ++id;
      waiters.set(n, resolve);
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params })}\n`);
    });
  await request('initialize', INIT);
  child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    call: () => request('tools/call', CALL),
    close: async () => {
      child.kill();
    },
  };
}

async function sdk(target: Target): Promise<BenchClient> {
  if (target.kind === 'modern' || target.kind === 'stateful')
    return sdkV2(target.url, target.kind === 'modern' ? 'modern' : 'legacy');
  const client = new Client({ name: 'bench', version: '1' });
  const transport =
    target.kind === 'stdio'
      ? new StdioClientTransport({ command: process.execPath, args: [target.url], stderr: 'ignore' })
      : target.kind === 'legacy'
        ? new SSEClientTransport(new URL(target.url))
        : new StreamableHTTPClientTransport(new URL(target.url));
  await client.connect(transport);
  return { call: () => client.callTool(CALL), close: () => client.close() };
}

/** The era each kind's server is spoken to in: the default (`auto`) finds modern, `stateful` pins the 2025 era. */
const PROTOCOL_VERSION: Partial<Record<Kind, 'auto' | 'legacy'>> = { modern: 'auto', stateful: 'legacy' };

async function ours(target: Target): Promise<BenchClient> {
  const keepalive = { intervalMs: 3_600_000, timeoutMs: 10_000, maxMissed: 3 };
  const protocolVersion = PROTOCOL_VERSION[target.kind];
  const handle =
    target.kind === 'stdio'
      ? await connect({ command: process.execPath, args: [target.url], keepalive }, { name: 'bench' })
      : await connect(
          { url: target.url, type: target.kind === 'legacy' ? 'sse' : 'http', keepalive, protocolVersion },
          { name: 'bench' },
        );
  const era = handle.status().era;
  if (protocolVersion && era !== (target.kind === 'modern' ? 'modern' : 'legacy'))
    throw new Error(`bench: ${target.kind} connected in the ${era} era`);
  return { call: () => handle.callTool('echo', {}), close: () => handle.close() };
}

/** The i-th of many idle connections: at most 100 per origin (127.0.0.1, 127.0.0.2, …), see docs/performance.md. */
export function spreadOverOrigins(url: string, i: number): string {
  return url.replace('127.0.0.1', `127.0.0.${1 + Math.floor(i / 100)}`);
}

/** Ours with `n` servers in one supervisor, spread over origins; all ready. */
export async function openSupervisor(target: Target, n: number, prefix: string): Promise<{ close(): Promise<void> }> {
  const keepalive = { intervalMs: 3_600_000, timeoutMs: 10_000, maxMissed: 3 };
  const servers: Record<string, ServerConfigInput> = {};
  for (let i = 0; i < n; i++) {
    servers[`${prefix}-${i}`] = {
      url: spreadOverOrigins(target.url, i),
      type: target.kind === 'legacy' ? 'sse' : 'http',
      keepalive,
      protocolVersion: PROTOCOL_VERSION[target.kind],
    };
  }
  const supervisor = createSupervisor({ servers });
  await supervisor.start();
  const down = Object.values(supervisor.status()).filter((s) => s.state !== 'ready');
  if (down.length > 0)
    throw new Error(`${down.length} of ${n} servers are not ready: ${down[0]?.lastError ?? down[0]?.state}`);
  return { close: () => supervisor.stop() };
}

export function openClient(name: ClientName, target: Target): Promise<BenchClient> {
  if (name === 'sdk') return sdk(target);
  if (name === 'ours') return ours(target);
  if (target.kind === 'stdio') return rawStdio(target.url);
  if (target.kind === 'legacy') throw new Error('no raw client for legacy SSE');
  if (target.kind === 'modern') return rawModern(target.url);
  return rawHttp(target.url, target.kind === 'sse');
}
