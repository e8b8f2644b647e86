/**
 * A whole supervisor's `stop()` closes its servers without sending CLOSE to each live actor (its
 * root actors are stopped once and each machine makes the moves of CLOSE without its actor,
 * src/runtime/actors/stopped-moves.ts). What a user sees must be what the machine's CLOSE gives: the same
 * transitions with the same causes from every state, the stdio process ended, the session deleted.
 * This test holds the two paths together, so a change to the machine's `closing` shows here.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, type Supervisor, type TransitionEvent } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { FIXTURE, newTag, processesTagged } from '../transports/stdio/helpers.js';
import { quickRestart, recordTransitions, refusingUrl } from './helpers.js';

const TAG = newTag();
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});
afterAll(() => {
  expect(processesTagged(TAG[1]!)).toEqual([]);
});

/** An HTTP server ready, a stdio server ready, one that cannot be reached (reconnecting). */
async function threeServers(f: HttpFixture): Promise<Supervisor> {
  const sup = createSupervisor({
    random: () => 0.5,
    servers: {
      http: { url: f.url },
      stdio: {
        command: process.execPath,
        args: [FIXTURE, ...TAG],
        shutdown: { closeStdinTimeoutMs: 200, sigtermTimeoutMs: 200 },
        protocolVersion: 'legacy',
      },
      // Its backoff is long: it rests in `reconnecting` when it is closed, in both runs.
      down: {
        url: await refusingUrl(),
        restart: { ...quickRestart(5), backoff: { initialMs: 60_000, maxMs: 60_000, factor: 2, jitter: 0 } },
      },
    },
  });
  cleanups.push(() => sup.stop());
  await sup.start();
  await expect.poll(() => sup.status().down?.state).toBe('reconnecting');
  expect(sup.status()).toMatchObject({ http: { state: 'ready' }, stdio: { state: 'ready' } });
  return sup;
}

const movesOf = (seen: TransitionEvent[]) =>
  Object.fromEntries(
    ['http', 'stdio', 'down'].map((server) => [
      server,
      seen.filter((e) => e.server === server).map((e) => ({ from: e.from, to: e.to, cause: e.cause, error: e.error })),
    ]),
  );

describe('a whole stop() and each server closed by CLOSE', () => {
  it('make the same moves with the same causes, end the stdio process and delete the session', async () => {
    const outcomes = [];
    for (const way of ['CLOSE', 'stop()'] as const) {
      const f = await startHttpFixture();
      cleanups.push(() => f.close());
      const sup = await threeServers(f);
      const seen = recordTransitions(sup);
      if (way === 'CLOSE') await Promise.all(['http', 'stdio', 'down'].map((name) => sup.closeServer(name)));
      else await sup.stop();
      expect(f.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
      await expect.poll(() => processesTagged(TAG[1]!)).toEqual([]);
      expect(sup.status()).toMatchObject({
        http: { state: 'closed' },
        stdio: { state: 'closed' },
        down: { state: 'closed' },
      });
      outcomes.push(movesOf(seen));
    }
    const [byClose, byStop] = outcomes;
    expect(byClose!.http).toEqual([
      { from: 'ready', to: 'closing', cause: 'close requested', error: undefined },
      { from: 'closing', to: 'closed', cause: 'closed', error: undefined },
    ]);
    expect(byStop).toEqual(byClose);
  });
});
