/**
 * Faults of a fleet sharing one credential: the process holding the refresh lock SIGKILLed while
 * its refresh waits at the server (file store), and Redis SIGKILLed and restarted mid-run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthFixture } from '../../servers/oauth-server.js';
import { startRedisServer, type RedisServer } from '../store/redis-server.js';
import { startRotatingServer, startWorker, type Worker } from './credential-fleet.js';

let fixture: OAuthFixture | undefined;
let redis: RedisServer | undefined;
let workers: Worker[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  workers = [];
  await fixture?.close();
  await redis?.stop();
  fixture = undefined;
  redis = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function fleet(processes: number, durationMs: number, store: 'file' | 'redis'): Promise<void> {
  fixture = await startRotatingServer(1_500);
  dir = await mkdtemp(join(tmpdir(), 'soak-faults-'));
  if (store === 'redis') redis = await startRedisServer({ persistIn: dir });
  const spec = store === 'redis' ? `redis:${redis!.url}` : `file:${join(dir, 'store.json')}`;
  workers = Array.from({ length: processes }, () =>
    startWorker({ MCP_URL: fixture!.mcpUrl, STORE: spec, DURATION_MS: durationMs }),
  );
  await Promise.all(workers.map((w) => w.ready));
}

describe('shared credentials across processes: faults', () => {
  it('a lock holder SIGKILLed mid-refresh: the others take over after its lease and go on', async () => {
    await fleet(4, 20_000, 'file');
    await new Promise((wait) => setTimeout(wait, 2_000));
    // The next refresh is held at the server; its process is killed while it waits there.
    fixture!.delayRefreshes(3_000);
    const heldFrom = Date.now();
    const heldBefore = fixture!.counts.held;
    // Only a refresh sent after the delay was set is held (one sent before may be answered already,
    // and a process killed after its refresh was answered takes the rotated token with it).
    const victim = await new Promise<Worker>((resolve) => {
      for (const worker of workers) worker.onRefreshing((at) => at > heldFrom && resolve(worker));
    });
    // Killed only once its refresh is held at the server, and the delay lifted only once it is gone:
    // a refresh still on its way, answered at once, would spend the token in a dead process.
    await expect.poll(() => fixture!.counts.held, { timeout: 5_000 }).toBeGreaterThan(heldBefore);
    const before = fixture!.counts.refreshes;
    const exited = new Promise((gone) => victim.child.once('exit', gone));
    victim.child.kill('SIGKILL');
    await exited;
    fixture!.delayRefreshes(0);
    // Its lease (5 s) runs out; another process refreshes with the refresh token it never spent.
    await expect.poll(() => fixture!.counts.refreshes, { timeout: 12_000 }).toBeGreaterThan(before);
    for (const worker of workers) worker.stop();
    const reports = await Promise.all(workers.filter((w) => w !== victim).map((w) => w.done));
    expect(reports.map((r) => r?.failed)).toEqual([0, 0, 0]);
    expect(fixture!.counts).toMatchObject({ reuses: 0, signIns: 1, revokedGrants: 0 });
  });

  it('Redis SIGKILLed and restarted mid-run: no failed call, no token lost, one warning per outage', async () => {
    await fleet(4, 15_000, 'redis');
    await new Promise((wait) => setTimeout(wait, 4_000));
    await redis!.restart({ downMs: 1_000 });
    const reports = await Promise.all(workers.map((w) => w.done));
    expect(reports.map((r) => r?.failed)).toEqual([0, 0, 0, 0]);
    expect(fixture!.counts).toMatchObject({ reuses: 0, signIns: 1, revokedGrants: 0 });
    // Coordination resumed: refreshes went on after the restart, at the pace of the expiries.
    expect(fixture!.counts.refreshes).toBeGreaterThan(8);
    for (const report of reports)
      expect(report!.warnings.filter((w) => w === 'store unavailable').length).toBeLessThanOrEqual(2);
  });
});
