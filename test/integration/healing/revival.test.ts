/**
 * A server down past the restart budget: `failed` is not forever. Revival tries it again with
 * capped backoff (short `revive` values here, so no clock is asserted), `status().nextAttemptAt`
 * says when, calls wait within their own timeout, and the server comes back by itself.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSdkExampleServer } from '../../../servers/sdk-example-server.js';
import { Cleanup } from '../../transports/helpers.js';
import { nextTransition } from '../helpers.js';
import { clientNoticesClose, connectTo, outcomes } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const SMALL_BUDGET = {
  maxRestarts: 2,
  withinMs: 60_000,
  provenAfterMs: 60_000,
  backoff: { initialMs: 10, maxMs: 20, factor: 2, jitter: 0 },
};

describe('a server down past the restart budget', () => {
  it('is failed with a next attempt scheduled, revived while still down, and back by itself; the held calls are answered once', async () => {
    const server = cleanup.add(await startSdkExampleServer(), (s) => s.close());
    const { handle, transitions } = await connectTo(cleanup, server.url, {
      restart: SMALL_BUDGET,
      revive: { initialMs: 50, maxMs: 200 },
    });
    await server.stop();
    await clientNoticesClose();

    const failed = nextTransition(handle, (t) => t.to === 'failed');
    const before = outcomes([handle.callTool('echo', { text: 'sent before failed' })]);
    const failure = await failed;
    expect(failure.cause).toBe('restart budget spent');
    const status = handle.status();
    expect(status.state).toBe('failed');
    expect(status.nextAttemptAt).toEqual(expect.any(Number));
    expect(status.lastError).toMatch(/ECONNREFUSED/);
    expect(failure.error).toMatch(/restart budget spent/);

    // A call made while failed waits too: revival will bring the server back.
    const during = outcomes([handle.callTool('echo', { text: 'sent while failed' })]);
    expect(handle.status().requests.waiting).toBe(2);
    // One revival that finds the server still down, and fails again with a new attempt scheduled.
    await nextTransition(handle, (t) => t.from === 'failed' && t.cause === 'reviving');
    await nextTransition(handle, (t) => t.to === 'failed');
    expect(handle.status().nextAttemptAt).toEqual(expect.any(Number));

    await server.start();
    await nextTransition(handle, (t) => t.to === 'ready');
    expect(await before).toEqual(['sent before failed']);
    expect(await during).toEqual(['sent while failed']);
    expect(handle.status()).toMatchObject({ state: 'ready', nextAttemptAt: undefined });
    expect(server.executions()['echo']).toBe(2);
    expect(server.requests()['initialize']).toBe(2);
    expect(transitions.filter((t) => t.cause === 'reviving').length).toBeGreaterThanOrEqual(2);
  });

  it('with revive: false it stays failed, and the held calls fail with the reason instead of waiting', async () => {
    const server = cleanup.add(await startSdkExampleServer(), (s) => s.close());
    const { handle } = await connectTo(cleanup, server.url, { restart: SMALL_BUDGET, revive: false });
    await server.stop();
    await clientNoticesClose();
    const call = outcomes([handle.callTool('echo', { text: 'x' })]);
    await nextTransition(handle, (t) => t.to === 'failed');
    expect(await call).toEqual(['ConnectionClosedError']);
    expect(handle.status().nextAttemptAt).toBeUndefined();
    expect(server.executions()['echo']).toBeUndefined();
  });
});
