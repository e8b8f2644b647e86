/**
 * The keepalive machine's model: probe outcomes in each state, the interval, the death report,
 * and the skip on the origin's evidence. The interval's event comes in two kinds: the origin
 * proved alive within the interval (`originAnswered`, what the provided guard reads) or it did not.
 */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import {
  keepaliveMachine,
  type KeepaliveContext,
  type KeepaliveInput,
  type KeepaliveSettings,
  type ProbeInput,
} from '../../machines/keepalive.machine.js';
import { reportsOf, type Harness, type Outcome } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export const SETTINGS: KeepaliveSettings = { intervalMs: 30_000, timeoutMs: 5_000, maxMissed: 3 };
export const INPUT: KeepaliveInput = { server: 'docs', settings: SETTINGS };
export const TICK = 'xstate.after.keepalive interval.keepalive.waiting';

const done = (output: unknown): AnyEventObject => ({ type: 'PROBE_ANSWERED', output });

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.matches('waiting')) return [{ type: TICK }, { type: TICK, originAnswered: true }];
  if (snapshot.matches('probing')) {
    return [
      done({ skipped: false, rttMs: 12 }),
      done({ skipped: true }),
      { type: 'PROBE_FAILED', error: new Error("request 'ping' timed out after 5000 ms") },
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
  if (event.type === TICK) {
    expect(h.clock.now() - (h.scratch.waitingSince ?? 0), 'probes every intervalMs').toBe(SETTINGS.intervalMs);
    const beforeContext = before.context as KeepaliveContext;
    const settings = beforeContext.settings as KeepaliveSettings;
    const proved = event.originAnswered === true && settings.proof !== 'server' && beforeContext.missed === 0;
    expect(after.value, 'skipped exactly when proved alive by its origin (no misses)').toBe(
      proved ? 'waiting' : 'probing',
    );
    if (proved) {
      expect(h.controls.started, 'a skip sends no probe').toHaveLength(h.scratch.startedBefore);
      h.scratch.waitingSince = h.clock.now();
    } else {
      expect(h.controls.started.at(-1), 'the probe carries the per-probe timeout').toEqual({
        key: 'probe',
        input: { server: 'docs', timeoutMs: settings.timeoutMs },
      });
    }
  }
  if (after.matches('waiting') && !before.matches('waiting')) h.scratch.waitingSince = h.clock.now();
  if (event.type === 'PROBE_ANSWERED') {
    const output = event.output as { skipped: boolean; rttMs?: number };
    // A skip means requests were in flight (the connection was busy), not that the server answered.
    const missedBefore = (before.context as KeepaliveContext).missed;
    expect(context.missed, 'an answer clears the misses; a skipped probe keeps them').toBe(
      output.skipped ? missedBefore : 0,
    );
    expect(context.lastRttMs).toBe(output.skipped ? (before.context as KeepaliveContext).lastRttMs : output.rttMs);
  }
  if (event.type === 'PROBE_FAILED') expect(context.missed).toBe((before.context as KeepaliveContext).missed + 1);
}

export const keepaliveSpec = (machine: AnyStateMachine = keepaliveMachine): ModelSpec => ({
  machine,
  input: INPUT,
  implementations: (h: Harness) => ({
    actions: {
      'send probe': (_: unknown, input: ProbeInput) =>
        h.controls.call('probe', input, (outcome: Outcome) =>
          h.actor.send(
            'error' in outcome
              ? { type: 'PROBE_FAILED', error: outcome.error }
              : { type: 'PROBE_ANSWERED', output: outcome.output },
          ),
        ),
    },
    guards: {
      // The runtime's evidence: the model's event while exploring, what `drive` set while replaying.
      'origin proved alive': ({ event }: { event: AnyEventObject }) =>
        (event.originAnswered ?? h.scratch?.originAnswered) === true,
    },
  }),
  // A probe's end comes from the probe in flight, never out of the blue.
  drive: (event: AnyEventObject, h: Harness) => {
    if (event.type === TICK) {
      h.scratch.originAnswered = event.originAnswered === true;
      h.scratch.startedBefore = h.controls.started.length;
      return false; // the clock delivers it
    }
    if (event.type === 'PROBE_ANSWERED') h.controls.settle('probe', { output: event.output });
    else if (event.type === 'PROBE_FAILED') h.controls.settle('probe', { error: event.error });
    else return false;
    return true;
  },
  scheduledAs: (event: AnyEventObject) => (event.type === TICK ? { type: TICK } : event),
  events,
  project,
  afterStep: checkSideEffects,
});
