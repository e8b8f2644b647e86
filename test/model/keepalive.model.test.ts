import { describe, expect, it } from 'vitest';
import { keepaliveMachine } from '../../machines/keepalive.machine.js';
import { flush, reportsOf, snapshotOf } from './harness.js';
import { INPUT, keepaliveSpec, SETTINGS } from './keepalive.spec.js';
import { startModel } from './runner.js';
import { modelSuite } from './suite.js';

const spec = keepaliveSpec(keepaliveMachine);

modelSuite('keepalive', spec, {
  variants: [
    { label: 'keepalive: false', spec: { ...spec, input: { ...INPUT, settings: false } } },
    { label: "proof: 'server'", spec: { ...spec, input: { ...INPUT, settings: { ...SETTINGS, proof: 'server' } } } },
  ],
});

describe('keepalive: scenarios', () => {
  it('does nothing at all when disabled', async () => {
    const h = startModel({ ...spec, input: { ...INPUT, settings: false } });
    expect(snapshotOf(h).value).toBe('off');
    h.clock.advance(10 * SETTINGS.intervalMs);
    await flush();
    expect(h.controls.started.filter((s) => s.key === 'probe')).toHaveLength(0);
    h.stop();
  });

  it('probes no earlier than intervalMs, and a success in between resets the miss count', async () => {
    const h = startModel(spec);
    h.clock.advance(SETTINGS.intervalMs - 1);
    await flush();
    expect(snapshotOf(h).value).toBe('waiting');
    h.clock.advance(1);
    await flush();
    expect(snapshotOf(h).value).toBe('probing');
    h.controls.settle('probe', { error: new Error('timeout') });
    await flush();
    expect(snapshotOf(h).context.missed).toBe(1);
    h.clock.advance(SETTINGS.intervalMs);
    await flush();
    h.controls.settle('probe', { output: { skipped: false, rttMs: 7 } });
    await flush();
    expect(snapshotOf(h).context).toMatchObject({ missed: 0, lastRttMs: 7 });
    expect(reportsOf(h, 'CONNECTION_LOST')).toHaveLength(0);
    h.stop();
  });

  it('declares the connection dead after maxMissed misses in a row, once', async () => {
    const h = startModel(spec);
    for (let i = 0; i < SETTINGS.maxMissed; i++) {
      h.clock.advance(SETTINGS.intervalMs);
      await flush();
      h.controls.settle('probe', { error: new Error(`miss ${i + 1}`) });
      await flush();
    }
    expect(snapshotOf(h).value).toBe('dead');
    expect(reportsOf(h, 'CONNECTION_LOST').map((r) => r.event)).toEqual([
      {
        type: 'CONNECTION_LOST',
        error: `${SETTINGS.maxMissed} keepalive probes in a row got no answer (last: miss ${SETTINGS.maxMissed})`,
      },
    ]);
    h.clock.advance(10 * SETTINGS.intervalMs);
    await flush();
    expect(h.controls.started.filter((s) => s.key === 'probe')).toHaveLength(SETTINGS.maxMissed);
    h.stop();
  });
});

describe("keepalive: proof 'origin'", () => {
  it('skips while the origin proves the server alive, then probes on its own until dead once the origin is silent', async () => {
    const h = startModel(spec);
    h.scratch.originAnswered = true; // a sibling answered within the interval
    h.clock.advance(SETTINGS.intervalMs);
    await flush();
    expect(snapshotOf(h).value).toBe('waiting');
    expect(h.controls.started).toHaveLength(0);
    h.scratch.originAnswered = false; // the origin froze: nobody hears from it any more
    for (let i = 0; i < SETTINGS.maxMissed; i++) {
      h.clock.advance(SETTINGS.intervalMs);
      await flush();
      expect(snapshotOf(h).value).toBe('probing');
      h.controls.settle('probe', { error: new Error(`miss ${i + 1}`) });
      await flush();
      // The origin's evidence comes back, but a server with misses proves itself.
      h.scratch.originAnswered = true;
    }
    expect(snapshotOf(h).value).toBe('dead');
    // One skipped interval, then maxMissed probes: found one interval later than proof 'server' would.
    expect(h.clock.now()).toBe((SETTINGS.maxMissed + 1) * SETTINGS.intervalMs);
    expect(h.controls.started.filter((s) => s.key === 'probe')).toHaveLength(SETTINGS.maxMissed);
    h.stop();
  });
});
