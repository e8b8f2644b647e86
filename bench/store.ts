/**
 * Many processes, one credential: worker processes (test/soak/credential-worker.ts) call a tool
 * against an OAuth server whose access tokens live 1.5 s and whose refresh tokens work once, for
 * `seconds` each, with 1, 4 and 16 processes on each store:
 *
 * - `none`: no store, each process its own credential (the behaviour before stores): the baseline;
 * - `file`: fileStore() on one file; `redis`: redisStore() on a redis-server started here.
 *
 * Reported per run: refreshes per expiry (a shared credential: ~1 whatever the number of
 * processes; without a store it grows with it), sign-ins, refresh-token reuses, failed calls,
 * time from process start to its first tool call answered (sign-in included: one for all with a
 * store), and call latency (median; p99 and max show the calls that waited for a fresh token).
 *
 *   node .bench-build/bench/store.js [seconds] [processes,...]   (or --import tsx bench/store.ts)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer } from '../test/store/redis-server.js';
import { expiriesIn, startRotatingServer, startWorker } from '../test/soak/credential-fleet.js';

const ACCESS_TOKEN_MS = 1_500;
const seconds = Number(process.argv[2] ?? 10);
const sizes = (process.argv[3] ?? '1,4,16').split(',').map(Number);

interface Row {
  store: string;
  processes: number;
  refreshesPerExpiry: number;
  refreshes: number;
  signIns: number;
  reuses: number;
  calls: number;
  failed: number;
  firstCallMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

async function run(store: 'none' | 'file' | 'redis', processes: number): Promise<Row> {
  const fixture = await startRotatingServer(ACCESS_TOKEN_MS);
  const dir = await mkdtemp(join(tmpdir(), 'bench-store-'));
  const redis = store === 'redis' ? await startRedisServer() : undefined;
  const spec =
    store === 'redis' ? `redis:${redis!.url}` : store === 'file' ? `file:${join(dir, 'store.json')}` : 'none';
  try {
    const workers = Array.from({ length: processes }, () =>
      startWorker({ MCP_URL: fixture.mcpUrl, STORE: spec, DURATION_MS: seconds * 1_000 }),
    );
    let firstReadyAt = 0;
    const ready = await Promise.all(workers.map((w) => w.ready.then((r) => ((firstReadyAt ||= Date.now()), r))));
    const reports = (await Promise.all(workers.map((w) => w.done))).map((r) => r!);
    const runMs = Date.now() - firstReadyAt;
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    return {
      store,
      processes,
      refreshesPerExpiry: +(fixture.counts.refreshes / expiriesIn(runMs, ACCESS_TOKEN_MS)).toFixed(2),
      refreshes: fixture.counts.refreshes,
      signIns: fixture.counts.signIns,
      reuses: fixture.counts.reuses,
      calls: reports.reduce((sum, r) => sum + r.ok, 0),
      failed: reports.reduce((sum, r) => sum + r.failed, 0),
      firstCallMs: median(ready.map((r) => r.readyMs)),
      p50Ms: +median(reports.map((r) => r.p50Ms)).toFixed(1),
      p99Ms: +Math.max(...reports.map((r) => r.p99Ms)).toFixed(1),
      maxMs: +Math.max(...reports.map((r) => r.maxMs)).toFixed(1),
    };
  } finally {
    await fixture.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const store of ['none', 'file', 'redis'] as const) {
  for (const processes of sizes) {
    const row = await run(store, processes);
    rows.push(row);
    console.error(JSON.stringify(row));
  }
}
console.table(rows);
// Against the behaviour before stores (no store, same number of processes): refreshes and sign-ins.
for (const row of rows.filter((r) => r.store !== 'none')) {
  const before = rows.find((r) => r.store === 'none' && r.processes === row.processes)!;
  console.log(
    `${row.store} × ${row.processes}: refreshes ${(row.refreshes / Math.max(1, before.refreshes)).toFixed(2)}× and sign-ins ${row.signIns}/${before.signIns} of no store`,
  );
}
