/**
 * The gateway's cost (issue #32): one upstream (bench/server.ts, JSON answers, in a child
 * process), called directly and through `mcp-supervisor serve` — in this process, in its own over
 * Streamable HTTP and over stdio — beside the floor (hop-floor.ts: a bare node:http server
 * forwarding to the upstream with undici, the part of the added time that is the second hop itself):
 *
 * - sequential `tools/call` latency of every path (`PATHS`), in interleaved rounds: each round runs
 *   a short slice of each path in turn (starting one path later each round), and a path's figure is
 *   the median of its round medians; its added time is, per round, its median minus the direct
 *   path's in the same round (median over rounds, with the 25th–75th percentiles as the spread),
 *   its own share likewise against the floor in the same place (target: added ≤ 200 µs);
 * - CPU per call of this process, and of the gateway's or floor's own process (/proc, all threads);
 * - 100 host sessions at once, one call each: how many upstream sessions they opened (target 0
 *   beyond the gateway's own one: every host session shares the upstream connection).
 *
 *   node .bench-build/bench/gateway.js [calls per path] [calls per slice]   (or --import tsx bench/gateway.ts)
 *   JSON on stdout, a table on stderr.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
/**
 * Node options for the processes served apart (`serve` and the floor), e.g.
 * `GATEWAY_BENCH_CHILD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`: their profiles under the bench's load.
 */
const CHILD_NODE_ARGS = process.env['GATEWAY_BENCH_CHILD_NODE_ARGS']?.split(' ').filter(Boolean) ?? [];

/** `serve --http 127.0.0.1:0` in a child process; resolves with its URL. */
function serveHttpProcess(config: string): Promise<{ url: string; pid: number | undefined; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [...CHILD_NODE_ARGS, ...cliArgs(['serve', '--config', config, '--http', '127.0.0.1:0'])],
    {
      // The store beside the config, not the user's ~/.mcp-supervisor/store.json.
      env: { ...process.env, MCP_SUPERVISOR_TOKEN: TOKEN, MCP_SUPERVISOR_STORE: join(dirname(config), 'store.json') },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const url = /listening on (\S+)/.exec(text)?.[1];
      if (url) resolve({ url, pid: child.pid, stop: () => child.kill() });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${text}`)));
  });
}

/** The floor (hop-floor.ts) in its own process, as `serve --http` runs; resolves with its URL. */
function hopFloorProcess(upstreamUrl: string): Promise<{ url: string; pid: number | undefined; stop: () => void }> {
  const child = spawn(process.execPath, [...CHILD_NODE_ARGS, ...runScript(script('hop-floor')), upstreamUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) =>
      resolve({
        url: (JSON.parse(chunk.toString()) as { url: string }).url,
        pid: child.pid,
        stop: () => child.kill(),
      }),
    );
    child.once('exit', (code) => reject(new Error(`hop floor exited with ${code}`)));
  });
}

/** One path's latency, from interleaved rounds: each round runs a short slice of every path in turn. */
export interface PathFigure {
  /** Median of the rounds' medians (µs). */
  medianUs: number;
  /** The rounds' medians, 25th and 75th percentile: how much the path moved during the run. */
  spreadUs: [number, number];
  /**
   * Added over the path it is compared with (`direct`, or the SDK v1 Client direct for SDK rows):
   * the median over rounds of this round's median minus that path's median in the same round.
   */
  addedUs?: number;
  addedSpreadUs?: [number, number];
  /** The gateway's own share: its round median minus the floor's in the same place and round, median over rounds. */
  ownUs?: number;
  ownSpreadUs?: [number, number];
  /** CPU of the bench process per call (the client, and the gateway or floor when it runs here). */
  cpuPerCallUs: number;
  /** CPU of the gateway's or the floor's own process per call (all its threads, from /proc), when it runs apart. */
  serverCpuPerCallUs?: number;
}

export interface GatewayReport {
  calls: number;
  /** Calls of each path per round; the paths take turns, each round starting one path later. */
  slice: number;
  rounds: number;
  /**
   * - `direct`: `connect()` straight to the upstream (2025); `sdkDirect`: the official SDK v1 Client likewise.
   * - `legacy` / `modern`: `connect()` → the gateway in this process (2025 session / 2026-07-28).
   * - `sdkPathLegacy` / `sdkPathModern`: the same gateway with `directPath: false` (every request
   *   through the SDK's server): the direct path's A/B.
   * - `processHttp` / `processHttpModern` / `processHttpSdk`: `connect()` in a 2025 session, in
   *   2026-07-28, and the SDK v1 Client → `serve --http` in its own process.
   * - `processStdio`: the SDK v1 Client → `serve` in its own process over stdio (how desktop hosts run it).
   * - `floor`, `processFloor`, `processFloorSdk`: the floor (hop-floor.ts: a bare node:http server
   *   forwarding each POST with undici) in this process and in its own, beside the gateway rows.
   */
  paths: Record<PathName, PathFigure>;
  /** The 1-minute load average at the start and the end: latencies on a loaded machine include waits for a core. */
  loadAverage: [number, number];
  targetAddedUs: 200;
  hostSessions: number;
  /** Upstream `initialize`s while the host sessions opened and called: 0 when they share the upstream session. */
  upstreamSessionsOpened: number;
  upstreamCalls: number;
}

const PATHS = [
  'direct',
  'legacy',
  'modern',
  'floor',
  'sdkPathLegacy',
  'sdkPathModern',
  'processHttp',
  'processHttpModern',
  'processFloor',
  'sdkDirect',
  'processHttpSdk',
  'processFloorSdk',
  'processStdio',
] as const;
type PathName = (typeof PATHS)[number];

/** What each path is compared with (its added time) and the floor in the same place (its own share). */
const REFERENCE: Partial<Record<PathName, { base: PathName; floor?: PathName }>> = {
  legacy: { base: 'direct', floor: 'floor' },
  modern: { base: 'direct', floor: 'floor' },
  floor: { base: 'direct' },
  sdkPathLegacy: { base: 'direct', floor: 'floor' },
  sdkPathModern: { base: 'direct', floor: 'floor' },
  processHttp: { base: 'direct', floor: 'processFloor' },
  processHttpModern: { base: 'direct', floor: 'processFloor' },
  processFloor: { base: 'direct' },
  processHttpSdk: { base: 'sdkDirect', floor: 'processFloorSdk' },
  processFloorSdk: { base: 'sdkDirect' },
  processStdio: { base: 'sdkDirect' },
};

/** CPU time of a process, all its threads (ns, from the scheduler's accounting); undefined off Linux. */
function processCpuNs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    let total = 0;
    for (const task of readdirSync(`/proc/${pid}/task`))
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    return total;
  } catch {
    return undefined;
  }
}

const TOKEN = 'bench-token';

/** The official SDK v1 Client: what most hosts run; `callTool` as the bench calls it. */
async function sdkClient(
  transport: StdioClientTransport | StreamableHTTPClientTransport,
): Promise<{ callTool(name: string, args: object): Promise<unknown>; close(): Promise<void>; pid?: number }> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport instanceof StdioClientTransport ? transport.pid : null;
  return {
    ...(pid !== null && { pid }),
    callTool: (name, args) => client.callTool({ name, arguments: args as Record<string, unknown> }),
    close: () => client.close(),
  };
}
const quantile = (values: number[], q: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;
const median = (values: number[]): number => quantile(values, 0.5);
const us = (ms: number) => Math.round(ms * 1000);
/** Median and the 25th–75th percentiles of per-round figures (ms), in µs. */
const summary = (values: number[]): [number, [number, number]] => [
  us(median(values)),
  [us(quantile(values, 0.25)), us(quantile(values, 0.75))],
];
const load = () => Number(loadavg()[0]!.toFixed(1));

interface Stats {
  posts: number;
  withSession: number;
}

async function upstreamStats(origin: string): Promise<Stats> {
  const stats = (await (await fetch(`${origin}/__stats`)).json()) as Record<string, Stats>;
  return stats['/mcp'] ?? { posts: 0, withSession: 0 };
}

export async function benchGateway(calls = 2_000, sliceCalls = 50): Promise<GatewayReport> {
  const loadStart = load();
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
        processHttpModern: await connect(
          { url: served.url, headers, keepalive, protocolVersion: 'auto' },
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
      if ([clients.modern, clients.sdkPathModern, clients.processHttpModern].some((c) => c.status().era !== 'modern'))
        throw new Error('bench: the gateway did not speak 2026-07-28');
      /** The process serving each path apart from this one, whose CPU is read per slice. */
      const serverPid: Partial<Record<PathName, number | undefined>> = {
        processHttp: served.pid,
        processHttpModern: served.pid,
        processHttpSdk: served.pid,
        processFloor: floorProcess.pid,
        processFloorSdk: floorProcess.pid,
        processStdio: clients.processStdio.pid,
      };
      const roundMedians = Object.fromEntries(PATHS.map((name) => [name, [] as number[]])) as Record<
        PathName,
        number[]
      >;
      const cpu = Object.fromEntries(PATHS.map((name) => [name, 0])) as Record<PathName, number>;
      const serverCpu = Object.fromEntries(PATHS.map((name) => [name, 0])) as Record<PathName, number>;
      const sample: number[] = [];
      const slice = async (name: PathName, n: number, record: boolean) => {
        const client = clients[name];
        sample.length = 0;
        const serverStart = processCpuNs(serverPid[name]);
        const cpuStart = process.cpuUsage();
        for (let i = 0; i < n; i++) {
          const start = performance.now();
          await client.callTool('echo', {});
          sample.push(performance.now() - start);
        }
        const used = process.cpuUsage(cpuStart);
        const serverEnd = processCpuNs(serverPid[name]);
        if (!record) return;
        roundMedians[name].push(median(sample));
        cpu[name] += used.user + used.system;
        if (serverStart !== undefined && serverEnd !== undefined) serverCpu[name] += (serverEnd - serverStart) / 1000;
      };
      for (const name of PATHS) await slice(name, 300, false); // warm up
      // Short slices taking turns, each round starting one path later: every path meets the
      // machine's slow and fast moments alike, and each round compares paths measured seconds apart.
      const rounds = Math.max(1, Math.round(calls / sliceCalls));
      for (let r = 0; r < rounds; r++)
        for (let i = 0; i < PATHS.length; i++) await slice(PATHS[(r + i) % PATHS.length]!, sliceCalls, true);
      await Promise.all(Object.values(clients).map((client) => client.close()));
      const recorded = rounds * sliceCalls;
      const paths = {} as Record<PathName, PathFigure>;
      for (const name of PATHS) {
        const [medianUs, spreadUs] = summary(roundMedians[name]);
        const figure: PathFigure = { medianUs, spreadUs, cpuPerCallUs: Math.round(cpu[name] / recorded) };
        const reference = REFERENCE[name];
        if (reference) {
          const base = roundMedians[reference.base];
          [figure.addedUs, figure.addedSpreadUs] = summary(roundMedians[name].map((value, r) => value - base[r]!));
          const floor = reference.floor && roundMedians[reference.floor];
          if (floor)
            [figure.ownUs, figure.ownSpreadUs] = summary(roundMedians[name].map((value, r) => value - floor[r]!));
        }
        if (serverPid[name] !== undefined && serverCpu[name] > 0)
          figure.serverCpuPerCallUs = Math.round(serverCpu[name] / recorded);
        paths[name] = figure;
      }

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

      return {
        calls: recorded,
        slice: sliceCalls,
        rounds,
        paths,
        loadAverage: [loadStart, load()],
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
  const [calls, slice] = process.argv.slice(2).map(Number);
  const report = await benchGateway(calls || undefined, slice || undefined);
  console.log(JSON.stringify(report, null, 2));
  console.error(formatGateway(report));
}

/** One line per path: median, added and the gateway's own share with their spreads, CPU per call. */
export function formatGateway(report: GatewayReport): string {
  const range = (spread: [number, number] | undefined) => (spread ? ` [${spread[0]}…${spread[1]}]` : '');
  const signed = (value: number | undefined) => (value === undefined ? '' : `${value >= 0 ? '+' : ''}${value}`);
  const lines = [
    `${report.rounds} rounds × ${report.slice} calls per path, load average ${report.loadAverage.join(' → ')}`,
    'path              median [p25…p75]     added [p25…p75]      own [p25…p75]    cpu/call here / apart',
  ];
  for (const [name, path] of Object.entries(report.paths))
    lines.push(
      [
        name.padEnd(17),
        `${path.medianUs}${range(path.spreadUs)}`.padEnd(21),
        `${signed(path.addedUs)}${range(path.addedSpreadUs)}`.padEnd(21),
        `${signed(path.ownUs)}${range(path.ownSpreadUs)}`.padEnd(17),
        `${path.cpuPerCallUs}${path.serverCpuPerCallUs === undefined ? '' : ` / ${path.serverCpuPerCallUs}`}`,
      ].join(''),
    );
  lines.push(
    `${report.hostSessions} host sessions opened ${report.upstreamSessionsOpened} upstream sessions (target 0)`,
  );
  return lines.join('\n');
}
