/**
 * The gateway's cost (issue #32): one upstream (bench/server.ts, JSON answers, in a child
 * process), called by the same client (`connect()`) directly and through `mcp-supervisor serve`'s
 * Streamable HTTP (the gateway in this process, so its CPU counts against it):
 *
 * - sequential `tools/call` latency, median over `calls` calls each, the three interleaved in
 *   rounds: direct, through the gateway in a 2025 session, through the gateway in 2026-07-28;
 *   `addedMedianUs` = gateway median − direct median (target ≤ 200 µs); beside them the floor
 *   (hop-floor.ts: a bare node:http server forwarding to the upstream with undici), the part of
 *   the added time that is the second hop itself;
 * - 100 host sessions at once, one call each: how many upstream sessions they opened (target 0
 *   beyond the gateway's own one: every host session shares the upstream connection).
 *
 *   node .bench-build/bench/gateway.js [calls]   (or --import tsx bench/gateway.ts)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { connect } from '../src/index.js';
import { createGateway } from '../src/gateway/gateway.js';
import { serveGatewayHttp } from '../src/gateway/http.js';
import { startHopFloor } from './hop-floor.js';
import { COMPILED, runScript, script, startServer } from './measure.js';

/** `mcp-supervisor serve` as hosts run it: its own process (the compiled CLI under `npm run bench`). */
const CLI = fileURLToPath(new URL(`../src/cli/main.${COMPILED ? 'js' : 'ts'}`, import.meta.url));
const cliArgs = (args: string[]) => (COMPILED ? [CLI, ...args] : ['--import', 'tsx', CLI, ...args]);

/** `serve --http 127.0.0.1:0` in a child process; resolves with its URL. */
function serveHttpProcess(config: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, cliArgs(['serve', '--config', config, '--http', '127.0.0.1:0']), {
    // The store beside the config, not the user's ~/.mcp-supervisor/store.json.
    env: { ...process.env, MCP_SUPERVISOR_TOKEN: TOKEN, MCP_SUPERVISOR_STORE: join(dirname(config), 'store.json') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const url = /listening on (\S+)/.exec(text)?.[1];
      if (url) resolve({ url, stop: () => child.kill() });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${text}`)));
  });
}

/** The floor (hop-floor.ts) in its own process, as `serve --http` runs; resolves with its URL. */
function hopFloorProcess(upstreamUrl: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [...runScript(script('hop-floor')), upstreamUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) =>
      resolve({ url: (JSON.parse(chunk.toString()) as { url: string }).url, stop: () => child.kill() }),
    );
    child.once('exit', (code) => reject(new Error(`hop floor exited with ${code}`)));
  });
}

export interface GatewayReport {
  calls: number;
  directMedianUs: number;
  gatewayLegacyMedianUs: number;
  gatewayModernMedianUs: number;
  /**
   * The gateway in its own process (as hosts run it): over stdio (with the official SDK v1 Client,
   * as desktop hosts use, against the same Client direct over HTTP: `sdkDirectMedianUs`), and over
   * Streamable HTTP (2025 session, `connect()` as for `direct`).
   */
  sdkDirectMedianUs: number;
  processStdioMedianUs: number;
  processHttpMedianUs: number;
  addedProcessStdioUs: number;
  addedProcessHttpUs: number;
  /** The official SDK v1 Client → `serve --http` in its own process (2025 session), against `sdkDirectMedianUs`. */
  processHttpSdkMedianUs: number;
  addedProcessHttpSdkUs: number;
  /**
   * The same gateway served with `directPath: false` (every request through the SDK's server, as
   * before src/gateway/direct-path.ts), in the same rounds: the direct path's A/B.
   */
  sdkPathLegacyMedianUs: number;
  sdkPathModernMedianUs: number;
  /**
   * The floor: a bare node:http server forwarding each POST to the upstream with undici
   * (hop-floor.ts), in this process and in its own — what the second hop costs with nothing else.
   * `floorAdded*Us` is its median minus direct: the part of the gateway's added time that is the hop.
   */
  floorMedianUs: number;
  floorAddedUs: number;
  processFloorMedianUs: number;
  processFloorAddedUs: number;
  /** The official SDK v1 Client → the floor in its own process, against `sdkDirectMedianUs`. */
  processFloorSdkMedianUs: number;
  processFloorSdkAddedUs: number;
  /** Through the gateway (in this process, 2025 session) minus direct, at the median. */
  addedMedianUs: number;
  addedModernMedianUs: number;
  /**
   * The gateway's own share of the added time: its median minus the floor's in the same place
   * (in this process: 2025 session, 2026-07-28; its own process: `connect()`, the SDK v1 Client).
   */
  ownShareUs: { legacy: number; modern: number; processHttp: number; processHttpSdk: number };
  /** CPU of this process per call (client, and the gateway when it runs here): robust where latency is not (a loaded machine). */
  cpuPerCallUs: {
    direct: number;
    gatewayLegacy: number;
    gatewayModern: number;
    floor: number;
    sdkPathLegacy: number;
    sdkPathModern: number;
  };
  /** The machine's 1-minute load average during the run: latencies on a loaded machine include waits for a core. */
  loadAverage: number;
  targetAddedUs: 200;
  hostSessions: number;
  /** Upstream `initialize`s while the host sessions opened and called: 0 when they share the upstream session. */
  upstreamSessionsOpened: number;
  upstreamCalls: number;
}

const TOKEN = 'bench-token';

/** The official SDK v1 Client: what most hosts run; `callTool` as the bench calls it. */
async function sdkClient(
  transport: StdioClientTransport | StreamableHTTPClientTransport,
): Promise<{ callTool(name: string, args: object): Promise<unknown>; close(): Promise<void> }> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return {
    callTool: (name, args) => client.callTool({ name, arguments: args as Record<string, unknown> }),
    close: () => client.close(),
  };
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const us = (ms: number) => Math.round(ms * 1000);

interface Stats {
  posts: number;
  withSession: number;
}

async function upstreamStats(origin: string): Promise<Stats> {
  const stats = (await (await fetch(`${origin}/__stats`)).json()) as Record<string, Stats>;
  return stats['/mcp'] ?? { posts: 0, withSession: 0 };
}

export async function benchGateway(calls = 3_000): Promise<GatewayReport> {
  const upstream = await startServer('json');
  const dir = mkdtempSync(join(tmpdir(), 'bench-gateway-'));
  const config = join(dir, 'mcp.json');
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { bench: { url: upstream.url, keepalive: false } }, gateway: { prefix: false } }),
  );
  const served = await serveHttpProcess(config);
  const floorProcess = await hopFloorProcess(upstream.url);
  const floor = await startHopFloor(upstream.url);
  const gateway = createGateway({
    servers: { bench: { url: upstream.url, keepalive: false } },
    catalog: { prefix: false },
  });
  const keepalive = false as const;
  const headers = { authorization: `Bearer ${TOKEN}` };
  try {
    await gateway.start();
    const http = await serveGatewayHttp(gateway, { token: TOKEN });
    const sdkPath = await serveGatewayHttp(gateway, { token: TOKEN, directPath: false });
    try {
      const clients = {
        direct: await connect({ url: upstream.url, keepalive, protocolVersion: 'legacy' }, { name: 'bench' }),
        legacy: await connect({ url: http.url, headers, keepalive, protocolVersion: 'legacy' }, { name: 'bench' }),
        modern: await connect({ url: http.url, headers, keepalive, protocolVersion: 'auto' }, { name: 'bench' }),
        processStdio: await sdkClient(
          new StdioClientTransport({
            command: process.execPath,
            args: cliArgs(['serve', '--config', config]),
            stderr: 'ignore',
          }),
        ),
        sdkDirect: await sdkClient(new StreamableHTTPClientTransport(new URL(upstream.url))),
        processHttp: await connect(
          { url: served.url, headers, keepalive, protocolVersion: 'legacy' },
          { name: 'bench' },
        ),
        processHttpSdk: await sdkClient(
          new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers } }),
        ),
        floor: await connect({ url: floor.url, keepalive, protocolVersion: 'legacy' }, { name: 'bench' }),
        processFloor: await connect({ url: floorProcess.url, keepalive, protocolVersion: 'legacy' }, { name: 'bench' }),
        processFloorSdk: await sdkClient(new StreamableHTTPClientTransport(new URL(floorProcess.url))),
        sdkPathLegacy: await connect(
          { url: sdkPath.url, headers, keepalive, protocolVersion: 'legacy' },
          { name: 'bench' },
        ),
        sdkPathModern: await connect(
          { url: sdkPath.url, headers, keepalive, protocolVersion: 'auto' },
          { name: 'bench' },
        ),
      };
      if (clients.modern.status().era !== 'modern' || clients.sdkPathModern.status().era !== 'modern')
        throw new Error('bench: the gateway did not speak 2026-07-28');
      const latencies = {
        direct: [] as number[],
        legacy: [] as number[],
        modern: [] as number[],
        processStdio: [] as number[],
        processHttp: [] as number[],
        sdkDirect: [] as number[],
        processHttpSdk: [] as number[],
        floor: [] as number[],
        processFloor: [] as number[],
        processFloorSdk: [] as number[],
        sdkPathLegacy: [] as number[],
        sdkPathModern: [] as number[],
      };
      const names = Object.keys(latencies) as (keyof typeof latencies)[];
      const cpu = Object.fromEntries(names.map((name) => [name, 0])) as Record<keyof typeof latencies, number>;
      const round = async (name: keyof typeof clients, n: number, record: boolean) => {
        const cpuStart = process.cpuUsage();
        for (let i = 0; i < n; i++) {
          const start = performance.now();
          await clients[name].callTool('echo', {});
          if (record) latencies[name].push(performance.now() - start);
        }
        const used = process.cpuUsage(cpuStart);
        if (record) cpu[name] += used.user + used.system;
      };
      for (const name of names) await round(name, 300, false); // warm up
      const rounds = 10;
      for (let r = 0; r < rounds; r++) for (const name of names) await round(name, calls / rounds, true);
      await Promise.all(Object.values(clients).map((client) => client.close()));

      const hostSessions = 100;
      const before = await upstreamStats(upstream.origin);
      const hosts = await Promise.all(
        Array.from({ length: hostSessions }, () =>
          connect({ url: http.url, headers, keepalive, protocolVersion: 'legacy' }, { name: 'host' }),
        ),
      );
      await Promise.all(hosts.map((host) => host.callTool('echo', {})));
      const after = await upstreamStats(upstream.origin);
      await Promise.all(hosts.map((host) => host.close()));

      const direct = median(latencies.direct);
      return {
        calls,
        directMedianUs: us(direct),
        gatewayLegacyMedianUs: us(median(latencies.legacy)),
        gatewayModernMedianUs: us(median(latencies.modern)),
        processStdioMedianUs: us(median(latencies.processStdio)),
        processHttpMedianUs: us(median(latencies.processHttp)),
        sdkDirectMedianUs: us(median(latencies.sdkDirect)),
        addedProcessStdioUs: us(median(latencies.processStdio) - median(latencies.sdkDirect)),
        addedProcessHttpUs: us(median(latencies.processHttp) - direct),
        processHttpSdkMedianUs: us(median(latencies.processHttpSdk)),
        addedProcessHttpSdkUs: us(median(latencies.processHttpSdk) - median(latencies.sdkDirect)),
        floorMedianUs: us(median(latencies.floor)),
        floorAddedUs: us(median(latencies.floor) - direct),
        processFloorMedianUs: us(median(latencies.processFloor)),
        processFloorAddedUs: us(median(latencies.processFloor) - direct),
        processFloorSdkMedianUs: us(median(latencies.processFloorSdk)),
        processFloorSdkAddedUs: us(median(latencies.processFloorSdk) - median(latencies.sdkDirect)),
        sdkPathLegacyMedianUs: us(median(latencies.sdkPathLegacy)),
        sdkPathModernMedianUs: us(median(latencies.sdkPathModern)),
        addedMedianUs: us(median(latencies.legacy) - direct),
        cpuPerCallUs: {
          direct: Math.round(cpu.direct / calls),
          gatewayLegacy: Math.round(cpu.legacy / calls),
          gatewayModern: Math.round(cpu.modern / calls),
          floor: Math.round(cpu.floor / calls),
          sdkPathLegacy: Math.round(cpu.sdkPathLegacy / calls),
          sdkPathModern: Math.round(cpu.sdkPathModern / calls),
        },
        loadAverage: Number(loadavg()[0]!.toFixed(1)),
        addedModernMedianUs: us(median(latencies.modern) - direct),
        ownShareUs: {
          legacy: us(median(latencies.legacy) - median(latencies.floor)),
          modern: us(median(latencies.modern) - median(latencies.floor)),
          processHttp: us(median(latencies.processHttp) - median(latencies.processFloor)),
          processHttpSdk: us(median(latencies.processHttpSdk) - median(latencies.processFloorSdk)),
        },
        targetAddedUs: 200,
        hostSessions,
        upstreamSessionsOpened: after.posts - after.withSession - (before.posts - before.withSession),
        upstreamCalls: after.withSession - before.withSession,
      };
    } finally {
      await http.close();
      await sdkPath.close();
      await floor.close();
    }
  } finally {
    await gateway.close();
    served.stop();
    floorProcess.stop();
    upstream.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const calls = Number(process.argv[2] ?? 3_000);
  console.log(JSON.stringify(await benchGateway(calls), null, 2));
}
