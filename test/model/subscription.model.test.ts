import { describe, expect, it } from 'vitest';
import { subscriptionMachine } from '../../machines/subscription.machine.js';
import { flush, snapshotOf } from './harness.js';
import { startModel } from './runner.js';
import { inputFor, POLICY, subscriptionSpec } from './subscription.spec.js';
import { modelSuite } from './suite.js';

const spec = (mode: 'poll' | 'push' | 'webhook') => subscriptionSpec(subscriptionMachine, inputFor(mode));

modelSuite('subscription', spec('poll'), {
  variants: [
    { label: 'push', spec: spec('push') },
    { label: 'webhook', spec: spec('webhook') },
  ],
});

describe('subscription: push watchdog', () => {
  it('every frame restarts the silence limit: a stream that keeps talking is never declared dead', async () => {
    const h = startModel(spec('push'));
    await flush();
    h.controls.emitFrom('stream', { type: 'STREAM_ACTIVE', cursor: 'c-0', truncated: false });
    for (let i = 0; i < 5; i++) {
      h.clock.advance(2 * POLICY.heartbeatMs - 1);
      await flush();
      h.controls.emitFrom('stream', { type: 'STREAM_HEARTBEAT', cursor: `c-${i}` });
      await flush();
    }
    expect(snapshotOf(h).value).toEqual({ streaming: 'live' });
    h.clock.advance(2 * POLICY.heartbeatMs);
    await flush();
    expect(snapshotOf(h).value).toBe('retrying');
    expect(snapshotOf(h).context.cursor, 'reopened from the last heartbeat cursor').toBe('c-4');
    h.stop();
  });
});

describe('subscription: poll', () => {
  it('nextPollMs below the floor waits the floor', async () => {
    const h = startModel(spec('poll'));
    await flush();
    h.controls.settle('poll', {
      output: { events: [], cursor: 'c-1', truncated: false, hasMore: false, nextPollMs: 10 },
    });
    await flush();
    h.clock.advance(POLICY.pollFloorMs - 1);
    await flush();
    expect(snapshotOf(h).value).toBe('waiting');
    h.clock.advance(1);
    await flush();
    expect(snapshotOf(h).value).toBe('polling');
    h.stop();
  });
});
