/** The keepalive machine's model: probe outcomes in each state, the interval, the death report. */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import {
  keepaliveMachine,
  type KeepaliveContext,
  type KeepaliveInput,
  type KeepaliveSettings,
} from '../../machines/keepalive.machine.js';
import { reportsOf, type Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export const SETTINGS: KeepaliveSettings = { intervalMs: 30_000, timeoutMs: 5_000, maxMissed: 3 };
export const INPUT: KeepaliveInput = { server: 'docs', settings: SETTINGS };
export const TICK = 'xstate.after.keepalive interval.keepalive.waiting';

const done = (output: unknown): AnyEventObject => ({ type: 'xstate.done.actor.probe', output });

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.matches('waiting')) return [{ type: TICK }];
  if (snapshot.matches('probing')) {
    return [
      done({ skipped: false, rttMs: 12 }),
      done({ skipped: true }),
      { type: 'xstate.error.actor.probe', error: new Error("request 'ping' timed out after 5000 ms") },
    ];
  }
  return [];
}

function project(snapshot: AnyMachineSnapshot) {
  const { missed, lastRttMs } = snapshot.context as KeepaliveContext;
  return { value: snapshot.value, missed, lastRttMs: lastRttMs ?? null };
}

function checkSideEffects({ h, event, before, after, reportsFrom }: StepContext): void {
  const context = after.context as KeepaliveContext;
  const died = after.matches('dead') && !before.matches('dead');
  expect(
    reportsOf(h, 'CONNECTION_LOST', reportsFrom).map((r) => r.event),
    'CONNECTION_LOST exactly when the misses reach maxMissed',
  ).toEqual(
    died
      ? [
          {
            type: 'CONNECTION_LOST',
            error: `${SETTINGS.maxMissed} keepalive probes in a row got no answer (last: ${context.lastError})`,
          },
        ]
      : [],
  );
  if (died) expect(context.missed).toBe(SETTINGS.maxMissed);
  if (after.matches('waiting') && !before.matches('waiting')) h.scratch.waitingSince = h.clock.now();
  if (event.type === TICK) {
    expect(h.clock.now() - (h.scratch.waitingSince ?? 0), 'probes every intervalMs').toBe(SETTINGS.intervalMs);
    expect(h.controls.started.at(-1), 'the probe carries the per-probe timeout').toEqual({
      key: 'probe',
      input: { server: 'docs', timeoutMs: SETTINGS.timeoutMs },
    });
  }
  if (event.type === 'xstate.done.actor.probe') {
    const output = event.output as { skipped: boolean; rttMs?: number };
    // A skip means requests were in flight (the connection was busy), not that the server answered.
    const missedBefore = (before.context as KeepaliveContext).missed;
    expect(context.missed, 'an answer clears the misses; a skipped probe keeps them').toBe(
      output.skipped ? missedBefore : 0,
    );
    expect(context.lastRttMs).toBe(output.skipped ? (before.context as KeepaliveContext).lastRttMs : output.rttMs);
  }
  if (event.type === 'xstate.error.actor.probe')
    expect(context.missed).toBe((before.context as KeepaliveContext).missed + 1);
}

export const keepaliveSpec = (machine: AnyStateMachine = keepaliveMachine): ModelSpec => ({
  machine,
  input: INPUT,
  implementations: (h: Harness) => ({ actors: { probe: h.controls.promise() } }),
  events,
  project,
  afterStep: checkSideEffects,
});
