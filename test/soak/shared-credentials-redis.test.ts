/**
 * Many processes, one credential, on Redis (a real redis-server on a free loopback port): the
 * same fleet as the file store's soak (shared-credentials-faults.test.ts restarts Redis mid-run).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthFixture } from '../../servers/oauth-server.js';
import { startRedisServer, type RedisServer } from '../store/redis-server.js';
import { expiriesIn, startRotatingServer, startWorker, type Worker } from './credential-fleet.js';

const ACCESS_TOKEN_MS = 1_500;
let fixture: OAuthFixture | undefined;
let redis: RedisServer | undefined;
let workers: Worker[] = [];
afterEach(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  workers = [];
  await fixture?.close();
  await redis?.stop();
  fixture = undefined;
  redis = undefined;
});

let firstReadyAt = 0;
async function fleet(processes: number, durationMs: number): Promise<void> {
  fixture = await startRotatingServer(ACCESS_TOKEN_MS);
  redis = await startRedisServer();
  workers = Array.from({ length: processes }, () =>
    startWorker({ MCP_URL: fixture!.mcpUrl, STORE: `redis:${redis!.url}`, DURATION_MS: durationMs }),
  );
  firstReadyAt = 0;
  await Promise.all(workers.map((w) => w.ready.then(() => (firstReadyAt ||= Date.now()))));
}

describe('shared credentials across processes: Redis', () => {
  for (const processes of [4, 16]) {
    it(`${processes} processes for 20 s: 0 reuses, 1 sign-in, 0 failed calls, refreshes ≈ expiries`, async () => {
      await fleet(processes, 20_000);
      const reports = await Promise.all(workers.map((w) => w.done));
      const runMs = Date.now() - firstReadyAt;
      expect(reports.every(Boolean)).toBe(true);
      const failed = reports.reduce((sum, r) => sum + r!.failed, 0);
      const calls = reports.reduce((sum, r) => sum + r!.ok, 0);
      console.log(
        `redis, ${processes} processes: ${calls} calls, ${fixture!.counts.refreshes} refreshes for ~${expiriesIn(runMs, ACCESS_TOKEN_MS)} expiries, counts ${JSON.stringify(fixture!.counts)}`,
      );
      expect({ failed, errors: reports.flatMap((r) => r!.errors) }).toEqual({ failed: 0, errors: [] });
      expect(fixture!.counts).toMatchObject({ reuses: 0, signIns: 1, revokedGrants: 0 });
      expect(fixture!.counts.refreshes).toBeGreaterThan(0);
      expect(fixture!.counts.refreshes).toBeLessThanOrEqual(expiriesIn(runMs, ACCESS_TOKEN_MS) + 2);
    });
  }
});
