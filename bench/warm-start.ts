/**
 * Start to first tool call answered, with and without a warm store (issue #26): a supervisor is
 * created, started, lists its tools (`sup.tools()`, what an agent does first) and calls one; the
 * time from `createSupervisor` to that answer, and the POSTs the server saw meanwhile. "warm" is
 * a memoryStore a previous supervisor of the same server left behind (a restarted process):
 *
 * - legacy: a 2025-era server (servers/http-fixture.ts): the era verdict spares `server/discover`;
 * - legacy+resume: the same with `resumeSession: true`: the session spares `initialize` too (one
 *   `ping` checks it);
 * - modern: a 2026-07-28 server whose tools list is `public` for 60 s (servers/modern-fixture.ts):
 *   the stored catalog spares `tools/list`.
 *
 * Every request crosses a proxy that delays it by `rttMs` (default 20 ms: a hosted server), so the
 * round trips saved show; `--rtt 0` measures the loopback alone.
 *
 *   node .bench-build/bench/warm-start.js [--rounds N] [--rtt MS] [--json file]
 */
import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createSupervisor, memoryStore, type Store } from '../src/index.js';
import { startHttpFixture } from '../servers/http-fixture.js';
import { listenOnLoopback } from '../servers/listen.js';
import { startModernFixture } from '../servers/modern-fixture.js';

type Scenario = 'legacy' | 'legacy+resume' | 'modern';

export interface WarmStartRow {
  scenario: Scenario;
  coldMs: number;
  warmMs: number;
  /** warm / cold, medians. */
  ratio: number;
  coldPosts: number;
  warmPosts: number;
}

export interface WarmStartReport {
  rounds: number;
  rttMs: number;
  rows: WarmStartRow[];
}

/** A proxy in front of `target` that holds every request `delayMs` before forwarding it. */
async function delayingProxy(target: string, delayMs: number) {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    setTimeout(() => {
      const forward = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      res.on('close', () => forward.destroy());
      req.pipe(forward);
    }, delayMs);
  });
  const listening = await listenOnLoopback(server);
  return { url: `${listening.origin}${upstream.pathname}`, close: () => listening.close() };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** createSupervisor → start → tools() → the first tool called: ms, and the POSTs the server saw. */
async function firstCall(url: string, store: Store | undefined, resumeSession: boolean, posts: () => number) {
  const before = posts();
  const started = performance.now();
  const sup = createSupervisor({
    servers: { s: { url, keepalive: false, ...(resumeSession ? { resumeSession } : {}) } },
    ...(store ? { store } : {}),
  });
  await sup.start();
  const { tools } = await sup.tools();
  await sup.catalog.call(tools[0]!.name, { text: 'x' });
  const ms = performance.now() - started;
  const seen = posts() - before;
  await sup.stop();
  return { ms, posts: seen };
}

export async function runWarmStart(rounds = 15, rttMs = 20): Promise<WarmStartReport> {
  const legacy = await startHttpFixture();
  const modern = await startModernFixture([{ name: 'echo', inputSchema: { type: 'object' } }]);
  modern.ttlMs = 3_600_000;
  modern.cacheScope = 'public';
  const legacyProxy = await delayingProxy(legacy.url, rttMs);
  const modernProxy = await delayingProxy(modern.url, rttMs);
  const legacyPosts = () => legacy.requests.filter((r) => r.method === 'POST').length;
  const modernPosts = () => modern.seen.length;
  const plan: Array<{ scenario: Scenario; url: string; resume: boolean; posts: () => number }> = [
    { scenario: 'legacy', url: legacyProxy.url, resume: false, posts: legacyPosts },
    { scenario: 'legacy+resume', url: legacyProxy.url, resume: true, posts: legacyPosts },
    { scenario: 'modern', url: modernProxy.url, resume: false, posts: modernPosts },
  ];
  const rows: WarmStartRow[] = [];
  try {
    for (const { scenario, url, resume, posts } of plan) {
      const warm = memoryStore();
      await firstCall(url, warm, resume, posts); // the previous process
      const cold: { ms: number; posts: number }[] = [];
      const hot: { ms: number; posts: number }[] = [];
      for (let round = 0; round < rounds; round++) {
        // Cold and warm take turns, so a slower moment of the machine hits both.
        cold.push(await firstCall(url, undefined, resume, posts));
        hot.push(await firstCall(url, warm, resume, posts));
      }
      const coldMs = median(cold.map((run) => run.ms));
      const warmMs = median(hot.map((run) => run.ms));
      rows.push({
        scenario,
        coldMs: Math.round(coldMs * 10) / 10,
        warmMs: Math.round(warmMs * 10) / 10,
        ratio: Math.round((warmMs / coldMs) * 100) / 100,
        coldPosts: median(cold.map((run) => run.posts)),
        warmPosts: median(hot.map((run) => run.posts)),
      });
    }
  } finally {
    await Promise.all([legacyProxy.close(), modernProxy.close(), legacy.close(), modern.close()]);
  }
  return { rounds, rttMs, rows };
}

export function formatWarmStart(report: WarmStartReport): string {
  const lines = [
    `start → first tool call answered (median of ${report.rounds}, ${report.rttMs} ms per request)`,
    '| server | no store | warm store | warm/cold | POSTs cold | POSTs warm |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of report.rows)
    lines.push(
      `| ${row.scenario} | ${row.coldMs} ms | ${row.warmMs} ms | ${row.ratio} | ${row.coldPosts} | ${row.warmPosts} |`,
    );
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at === -1 ? undefined : process.argv[at + 1];
  };
  const report = await runWarmStart(Number(arg('--rounds') ?? 15), Number(arg('--rtt') ?? 20));
  console.log(formatWarmStart(report));
  const json = arg('--json');
  if (json) writeFileSync(json, JSON.stringify(report, null, 2));
}
