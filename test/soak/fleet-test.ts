/**
 * The shared-credential soak for one store and fleet size: real worker processes (credential-
 * worker.ts) call a tool for ~20 s against an OAuth server whose access tokens live 1.5 s and whose
 * refresh tokens work once (a reuse revokes the grant). Nothing may fail, nothing may be reused,
 * one sign-in in all, and refreshes follow the expiries, not the number of processes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { OAuthFixture } from '../../servers/oauth-server.js';
import { startRedisServer, type RedisServer } from '../store/redis-server.js';
import { expiriesIn, startRotatingServer, startWorker, type Worker } from './credential-fleet.js';

const ACCESS_TOKEN_MS = 1_500;
const DURATION_MS = 20_000;

export function itSharesOneCredential(store: 'file' | 'redis', processes: number): void {
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

  it(`${store}: ${processes} processes for 20 s: 0 reuses, 1 sign-in, 0 failed calls, refreshes ≈ expiries`, async () => {
    fixture = await startRotatingServer(ACCESS_TOKEN_MS);
    dir = await mkdtemp(join(tmpdir(), 'soak-fleet-'));
    if (store === 'redis') redis = await startRedisServer();
    const spec = store === 'redis' ? `redis:${redis!.url}` : `file:${join(dir, 'store.json')}`;
    workers = Array.from({ length: processes }, () =>
      startWorker({ MCP_URL: fixture!.mcpUrl, STORE: spec, DURATION_MS }),
    );
    let firstReadyAt = 0;
    await Promise.all(workers.map((w) => w.ready.then(() => (firstReadyAt ||= Date.now()))));
    const reports = await Promise.all(workers.map((w) => w.done));
    const runMs = Date.now() - firstReadyAt;
    expect(reports.every(Boolean)).toBe(true);
    const failed = reports.reduce((sum, r) => sum + r!.failed, 0);
    const calls = reports.reduce((sum, r) => sum + r!.ok, 0);
    console.log(
      `${store} store, ${processes} processes: ${calls} calls, ${fixture.counts.refreshes} refreshes for ~${expiriesIn(runMs, ACCESS_TOKEN_MS)} expiries, counts ${JSON.stringify(fixture.counts)}`,
    );
    expect({ failed, errors: reports.flatMap((r) => r!.errors) }).toEqual({ failed: 0, errors: [] });
    expect(fixture.counts).toMatchObject({ reuses: 0, signIns: 1, revokedGrants: 0 });
    expect(fixture.counts.refreshes).toBeGreaterThan(0);
    expect(fixture.counts.refreshes).toBeLessThanOrEqual(expiriesIn(runMs, ACCESS_TOKEN_MS) + 2);
  });
}
