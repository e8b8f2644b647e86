import { describe, expect, it } from 'vitest';
import type { AnyEventObject } from 'xstate';
import { listenerMachine } from '../../machines/listener.machine.js';
import { DEFAULT_STREAM_RECONNECT_POLICY } from '../../machines/stream-policy.js';
import { flush, reportsOf, snapshotOf, type Harness } from './harness.js';
import { listenerSpec, RESUMED } from './listener.spec.js';
import { startModel } from './runner.js';
import { modelSuite } from './suite.js';

const spec = listenerSpec(listenerMachine);

// The resumed variant: a listener started for a handed-over stream that ended decides from `ended`.
modelSuite('listener', spec, { variants: [{ label: 'resumed', spec: listenerSpec(listenerMachine, RESUMED) }] });

function stream(h: Harness, event: AnyEventObject): void {
  h.controls.emitFrom('stream', event);
}

function streamsOpened(h: Harness): number {
  return h.controls.started.filter((s) => s.key === 'stream').length;
}

/** Advances by `ms - 1` (still waiting) then 1 (reconnected, a new stream is opening). */
async function expectReconnectAfter(h: Harness, ms: number): Promise<void> {
  const opened = streamsOpened(h);
  expect(snapshotOf(h).value).toBe('waiting');
  h.clock.advance(ms - 1);
  await flush();
  expect(snapshotOf(h).value, `still waiting ${ms - 1} ms in`).toBe('waiting');
  expect(streamsOpened(h)).toBe(opened);
  h.clock.advance(1);
  await flush();
  expect(snapshotOf(h).value, `reconnected at ${ms} ms`).toEqual({ connected: 'opening' });
  expect(streamsOpened(h)).toBe(opened + 1);
}

describe('listener: timing scenarios', () => {
  it('waits exactly the server retry value before reconnecting, with Last-Event-ID', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'RETRY', ms: 2_500 });
    stream(h, { type: 'EVENT_ID', id: '41' });
    stream(h, { type: 'STREAM_ENDED' });
    await expectReconnectAfter(h, 2_500);
    expect(h.controls.started.at(-1)?.input).toEqual({ server: 'docs', lastEventId: '41' });
    // The retry value holds for later reconnects too, stalled or not: no backoff on top.
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'STREAM_ENDED' });
    await expectReconnectAfter(h, 2_500);
    h.stop();
  });

  it('without retry, the delay doubles with each reconnect that brought no new event', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'EVENT_ID', id: '1' });
    stream(h, { type: 'STREAM_ENDED' });
    for (const delay of [1_000, 2_000, 4_000, 8_000, 16_000]) {
      await expectReconnectAfter(h, delay);
      stream(h, { type: 'STREAM_OPENED' });
      if (delay < 16_000) stream(h, { type: 'STREAM_ENDED' });
    }
    h.stop();
  });

  it(`gives up after ${DEFAULT_STREAM_RECONNECT_POLICY.maxStalledAttempts} reconnects in a row without a new event, and reports LISTENER_LOST`, async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'EVENT_ID', id: '1' });
    stream(h, { type: 'STREAM_ENDED' });
    let reconnects = 0;
    while (snapshotOf(h).matches('waiting')) {
      h.clock.advance(60_000);
      await flush();
      reconnects += 1;
      stream(h, { type: 'STREAM_OPENED' });
      stream(h, { type: 'STREAM_ENDED' });
    }
    expect(reconnects).toBe(DEFAULT_STREAM_RECONNECT_POLICY.maxStalledAttempts);
    expect(snapshotOf(h).value).toBe('gave up');
    expect(reportsOf(h, 'LISTENER_LOST').map((r) => r.event.error)).toEqual([
      `the listening stream ended ${DEFAULT_STREAM_RECONNECT_POLICY.maxStalledAttempts} times in a row without a new event`,
    ]);
    h.clock.advance(10 * 60_000);
    expect(streamsOpened(h), 'no reconnect after giving up').toBe(1 + reconnects);
    h.stop();
  });

  it('an EVENT_ID resets the stall count: the delay drops back and the budget is whole again', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'EVENT_ID', id: '1' });
    stream(h, { type: 'STREAM_ENDED' });
    for (const delay of [1_000, 2_000, 4_000]) {
      await expectReconnectAfter(h, delay);
      stream(h, { type: 'STREAM_OPENED' });
      stream(h, { type: 'STREAM_ENDED' });
    }
    expect(snapshotOf(h).context.stalledAttempts).toBe(3);
    await expectReconnectAfter(h, 8_000);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'EVENT_ID', id: '2' });
    // Open long enough to be healthy: the reopen backoff starts over too.
    h.clock.advance(DEFAULT_STREAM_RECONNECT_POLICY.stableAfterMs);
    stream(h, { type: 'STREAM_ENDED' });
    expect(snapshotOf(h).context.stalledAttempts).toBe(0);
    await expectReconnectAfter(h, 1_000);
    expect(h.controls.started.at(-1)?.input).toEqual({ server: 'docs', lastEventId: '2' });
    h.stop();
  });

  it('a stream that brings one event and ends at once, retry 1000, backs off: never a 1 Hz loop (typescript-sdk #2682)', async () => {
    const h = startModel(spec);
    let id = 0;
    const quickStream = () => {
      stream(h, { type: 'STREAM_OPENED' });
      stream(h, { type: 'RETRY', ms: 1_000 });
      stream(h, { type: 'EVENT_ID', id: String(++id) });
      stream(h, { type: 'STREAM_ENDED' });
    };
    quickStream();
    // The first reconnect obeys retry exactly; from the second on, the backoff is the floor.
    for (const delay of [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]) {
      await expectReconnectAfter(h, delay);
      quickStream();
    }
    expect(snapshotOf(h).context.stalledAttempts, 'each brought an event: never given up').toBe(0);
    h.stop();
  });

  it('a stream the server does not offer settles the listener and never reconnects', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_UNAVAILABLE', status: 405 });
    expect(snapshotOf(h).value).toBe('unavailable');
    expect(reportsOf(h, 'LISTENER_SETTLED')).toHaveLength(1);
    h.clock.advance(10 * 60_000);
    await flush();
    expect(streamsOpened(h)).toBe(1);
    expect(reportsOf(h, 'LISTENER_LOST')).toEqual([]);
    h.stop();
  });

  it('a reopen refused at the connection (the server died while idle) reports SERVER_UNREACHABLE at once: no more backoff', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'STREAM_ENDED' });
    await expectReconnectAfter(h, 1_000);
    stream(h, { type: 'STREAM_FAILED', error: 'connect ECONNREFUSED 127.0.0.1:9', connection: 'refused' });
    expect(snapshotOf(h).value).toBe('unreachable');
    expect(reportsOf(h, 'SERVER_UNREACHABLE').map((r) => r.event)).toEqual([
      {
        type: 'SERVER_UNREACHABLE',
        error: 'the listening stream could not be reopened: connect ECONNREFUSED 127.0.0.1:9',
      },
    ]);
    h.clock.advance(10 * 60_000);
    await flush();
    expect(streamsOpened(h), 'no reconnect after reporting').toBe(2);
    expect(reportsOf(h, 'LISTENER_LOST')).toEqual([]);
    h.stop();
  });

  it('a reset while opening the very first stream is retried (no stream had been open: not proof the server is gone)', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_FAILED', error: 'read ECONNRESET', connection: 'reset' });
    expect(reportsOf(h, 'SERVER_UNREACHABLE')).toEqual([]);
    await expectReconnectAfter(h, 1_000);
    h.stop();
  });

  it('modern: a change of subscriptions issues a new listen at once, while waiting too; the acknowledgment is progress', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_OPENED' });
    h.actor.send({ type: 'SUBSCRIPTIONS_CHANGED' });
    await flush();
    expect(snapshotOf(h).value).toEqual({ connected: 'opening' });
    expect(streamsOpened(h)).toBe(2);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'STREAM_ENDED' });
    expect(snapshotOf(h).value).toBe('waiting');
    h.actor.send({ type: 'SUBSCRIPTIONS_CHANGED' });
    await flush();
    expect(streamsOpened(h), 'no wait for the backoff').toBe(3);
    stream(h, { type: 'STREAM_OPENED' });
    stream(h, { type: 'STREAM_PROGRESSED' });
    stream(h, { type: 'STREAM_ENDED' });
    expect(snapshotOf(h).context.stalledAttempts, 'the acknowledgment reset the stall count').toBe(0);
    h.stop();
  });

  it('modern: nothing to listen for settles the listener until the subscriptions change', async () => {
    const h = startModel(spec);
    stream(h, { type: 'STREAM_UNAVAILABLE' });
    expect(snapshotOf(h).value).toBe('unavailable');
    expect(reportsOf(h, 'LISTENER_SETTLED')).toHaveLength(1);
    h.actor.send({ type: 'SUBSCRIPTIONS_CHANGED' });
    await flush();
    expect(snapshotOf(h).value).toEqual({ connected: 'opening' });
    expect(streamsOpened(h)).toBe(2);
    h.stop();
  });
});
