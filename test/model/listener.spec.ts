/** The listener machine's model: what follow-stream can report in each state, side effects. */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { listenerMachine, type ListenerContext, type ListenerInput } from '../../machines/listener.machine.js';
import { DEFAULT_STREAM_RECONNECT_POLICY } from '../../machines/stream-policy.js';
import { reportsOf, type Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export const INPUT: ListenerInput = { server: 'docs' };
const RECONNECT = 'xstate.after.reconnect delay.listener.waiting';
const RETRY_MS = 3_000;
const STREAM_EVENTS = ['STREAM_OPENED', 'STREAM_UNAVAILABLE', 'EVENT_ID', 'RETRY', 'STREAM_ENDED', 'STREAM_FAILED'];

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const context = snapshot.context as ListenerContext;
  // What follow-stream can report: a status or a failure before the stream opens, then ids,
  // retry values, the end or a failure while it streams.
  if (snapshot.matches({ connected: 'opening' })) {
    return [
      { type: 'STREAM_OPENED' },
      { type: 'STREAM_UNAVAILABLE', status: 405 },
      // 404 before the stream was ever open: the server offers none; after: the session is gone.
      { type: 'STREAM_UNAVAILABLE', status: 404 },
      { type: 'STREAM_FAILED', error: 'connect ECONNRESET' },
    ];
  }
  if (snapshot.matches({ connected: 'streaming' })) {
    const list: AnyEventObject[] = [{ type: 'STREAM_ENDED' }, { type: 'STREAM_FAILED', error: 'terminated' }];
    if (!context.progressed) list.push({ type: 'EVENT_ID', id: 'evt-7' });
    if (context.retryMs === undefined) list.push({ type: 'RETRY', ms: RETRY_MS });
    return list;
  }
  if (snapshot.matches('waiting')) return [{ type: RECONNECT }];
  return [];
}

function project(snapshot: AnyMachineSnapshot) {
  const { stalledAttempts, progressed, retryMs, opened } = snapshot.context as ListenerContext;
  return { value: snapshot.value, stalledAttempts, progressed, retryMs: retryMs ?? null, opened };
}

/** The reconnect delay the stream policy promises, written out independently. */
function promisedDelay(context: ListenerContext): number {
  const { initialDelayMs, factor, maxDelayMs } = DEFAULT_STREAM_RECONNECT_POLICY;
  return context.retryMs ?? Math.min(maxDelayMs, initialDelayMs * factor ** context.stalledAttempts);
}

function checkSideEffects({ h, event, before, after, reportsFrom }: StepContext): void {
  const wasOpened = (before.context as ListenerContext).opened;
  const refusesSession = event.type === 'STREAM_UNAVAILABLE' && wasOpened && [400, 404].includes(event.status);
  expect(
    reportsOf(h, 'LISTENER_REFUSED_SESSION', reportsFrom).map((r) => r.event),
    'LISTENER_REFUSED_SESSION exactly when a stream that had been open is refused with 400/404',
  ).toEqual(refusesSession ? [{ type: 'LISTENER_REFUSED_SESSION', status: event.status }] : []);
  if (refusesSession) expect(after.value).toBe('session refused');
  if (event.type === 'STREAM_UNAVAILABLE' && !refusesSession) expect(after.value).toBe('unavailable');
  const settles =
    event.type === 'STREAM_OPENED' ||
    (event.type === 'STREAM_UNAVAILABLE' && !refusesSession) ||
    (event.type === 'STREAM_FAILED' && before.matches({ connected: 'opening' }));
  expect(
    reportsOf(h, 'LISTENER_SETTLED', reportsFrom),
    'LISTENER_SETTLED once the stream opened or turned out unavailable',
  ).toHaveLength(settles ? 1 : 0);

  const gaveUp = after.matches('gave up') && !before.matches('gave up');
  const context = after.context as ListenerContext;
  expect(
    reportsOf(h, 'LISTENER_LOST', reportsFrom).map((r) => r.event),
    'LISTENER_LOST exactly when giving up',
  ).toEqual(
    gaveUp
      ? [
          {
            type: 'LISTENER_LOST',
            error:
              context.lastError ??
              `the listening stream ended ${context.stalledAttempts} times in a row without a new event`,
          },
        ]
      : [],
  );
  if (gaveUp)
    expect(context.stalledAttempts, 'gives up only after maxStalledAttempts attempts without progress').toBe(
      DEFAULT_STREAM_RECONNECT_POLICY.maxStalledAttempts,
    );

  if (after.matches('waiting') && !before.matches('waiting')) h.scratch.waitingSince = h.clock.now();
  if (event.type === RECONNECT) {
    expect(h.clock.now() - h.scratch.waitingSince, 'reconnects after the promised delay').toBe(
      promisedDelay(before.context as ListenerContext),
    );
    const opened = h.controls.started.at(-1);
    expect(opened, 'the reconnect opens a stream with Last-Event-ID').toEqual({
      key: 'stream',
      input: { server: INPUT.server, lastEventId: context.lastEventId },
    });
  }
  if (event.type === 'EVENT_ID') expect(context.lastEventId).toBe(event.id);
  if (event.type === 'STREAM_UNAVAILABLE') expect(context.unavailableStatus).toBe(event.status);
}

export const listenerSpec = (machine: AnyStateMachine = listenerMachine): ModelSpec => ({
  machine,
  input: INPUT,
  implementations: (h: Harness) => ({ actors: { 'follow stream': h.controls.callback() } }),
  events,
  project,
  viaChild: Object.fromEntries(STREAM_EVENTS.map((type) => [type, 'stream'])),
  afterStep: checkSideEffects,
});
