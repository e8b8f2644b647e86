/**
 * Many processes, one credential, on the file store: real worker processes (credential-worker.ts)
 * call a tool for ~20 s against an OAuth server whose access tokens live 1.5 s and whose refresh
 * tokens work once (a reuse revokes the grant). Nothing may fail, nothing may be reused, one
 * sign-in in all, and refreshes follow the expiries, not the number of processes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthFixture } from '../../servers/oauth-server.js';
import { expiriesIn, startRotatingServer, startWorker, type Worker } from './credential-fleet.js';

const ACCESS_TOKEN_MS = 1_500;
let fixture: OAuthFixture | undefined;
let workers: Worker[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  workers = [];
  await fixture?.close();
  fixture = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

let firstReadyAt = 0;
async function fleet(processes: number, durationMs: number): Promise<string> {
  fixture = await startRotatingServer(ACCESS_TOKEN_MS);
  dir = await mkdtemp(join(tmpdir(), 'soak-file-store-'));
  const store = `file:${join(dir, 'store.json')}`;
  workers = Array.from({ length: processes }, () =>
    startWorker({ MCP_URL: fixture!.mcpUrl, STORE: store, DURATION_MS: durationMs }),
  );
  firstReadyAt = 0;
  await Promise.all(workers.map((w) => w.ready.then(() => (firstReadyAt ||= Date.now()))));
  return store;
}

describe('shared credentials across processes: the file store', () => {
  for (const processes of [4, 16]) {
    it(`${processes} processes for 20 s: 0 reuses, 1 sign-in, 0 failed calls, refreshes ≈ expiries`, async () => {
      await fleet(processes, 20_000);
      const reports = await Promise.all(workers.map((w) => w.done));
      const runMs = Date.now() - firstReadyAt;
      expect(reports.every(Boolean)).toBe(true);
      const failed = reports.reduce((sum, r) => sum + r!.failed, 0);
      const calls = reports.reduce((sum, r) => sum + r!.ok, 0);
      console.log(
        `file store, ${processes} processes: ${calls} calls, ${fixture!.counts.refreshes} refreshes for ~${expiriesIn(runMs, ACCESS_TOKEN_MS)} expiries, counts ${JSON.stringify(fixture!.counts)}`,
      );
      expect({ failed, errors: reports.flatMap((r) => r!.errors) }).toEqual({ failed: 0, errors: [] });
      expect(fixture!.counts).toMatchObject({ reuses: 0, signIns: 1, revokedGrants: 0 });
      expect(fixture!.counts.refreshes).toBeGreaterThan(0);
      expect(fixture!.counts.refreshes).toBeLessThanOrEqual(expiriesIn(runMs, ACCESS_TOKEN_MS) + 2);
    });
  }
});
