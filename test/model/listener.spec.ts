/** The listener machine's model: what follow-stream can report in each state, side effects. */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import {
  listenerMachine,
  type FollowStreamInput,
  type ListenerContext,
  type ListenerInput,
} from '../../machines/listener.machine.js';
import { DEFAULT_STREAM_RECONNECT_POLICY } from '../../machines/stream-policy.js';
import { reportsOf, type Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export const INPUT: ListenerInput = { server: 'docs' };
/** A listener started for a handed-over stream that failed after a quick reopen, with no new event. */
export const RESUMED: ListenerInput = {
  server: 'docs',
  resume: {
    lastEventId: '7',
    retryMs: undefined,
    stalledAttempts: 1,
    reopens: 2,
    progressed: false,
    stable: false,
    error: 'terminated',
  },
};
const RECONNECT = 'xstate.after.reconnect delay.listener.waiting';
const STABLE = 'xstate.after.stream stable delay.listener.connected.streaming';
const RETRY_MS = 3_000;
const STREAM_EVENTS = [
  'STREAM_OPENED',
  'STREAM_UNAVAILABLE',
  'EVENT_ID',
  'STREAM_PROGRESSED',
  'RETRY',
  'STREAM_ENDED',
  'STREAM_FAILED',
];
/** From the runtime (modern era): the subscriptions changed. */
const CHANGED = { type: 'SUBSCRIPTIONS_CHANGED' };

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
      // Modern: nothing to listen for, or the listen declined (no status).
      { type: 'STREAM_UNAVAILABLE' },
      { type: 'STREAM_FAILED', error: 'HTTP 500' },
      // Nobody listens there: the server is gone. Reset while opening: gone only if the stream had been open.
      { type: 'STREAM_FAILED', error: 'connect ECONNREFUSED', connection: 'refused' },
      { type: 'STREAM_FAILED', error: 'read ECONNRESET', connection: 'reset' },
      CHANGED,
    ];
  }
  if (snapshot.matches({ connected: 'streaming' })) {
    const list: AnyEventObject[] = [{ type: 'STREAM_ENDED' }, { type: 'STREAM_FAILED', error: 'terminated' }, CHANGED];
    if (context.reopens > 0) list.push({ type: STABLE });
    if (!context.progressed) list.push({ type: 'EVENT_ID', id: 'evt-7' }, { type: 'STREAM_PROGRESSED' });
    if (context.retryMs === undefined) list.push({ type: 'RETRY', ms: RETRY_MS });
    return list;
  }
  if (snapshot.matches('waiting')) return [{ type: RECONNECT }, CHANGED];
  if (snapshot.matches('unavailable')) return [CHANGED];
  return [];
}

function project(snapshot: AnyMachineSnapshot) {
  // Not the reopen count: it only raises the delay, which every step checks against the policy
  // (promisedDelay); the backoff it makes is walked in listener.model.test.ts.
  const { stalledAttempts, progressed, retryMs, opened } = snapshot.context as ListenerContext;
  return { value: snapshot.value, stalledAttempts, progressed, retryMs: retryMs ?? null, opened };
}

/** The reconnect delay the stream policy promises, written out independently. */
function promisedDelay(context: ListenerContext): number {
  const { initialDelayMs, factor, maxDelayMs } = DEFAULT_STREAM_RECONNECT_POLICY;
  const base = context.retryMs ?? Math.min(maxDelayMs, initialDelayMs * factor ** context.stalledAttempts);
  // From the second quick reopen in a row the backoff is the floor, whatever the stream brought.
  const floor = Math.min(maxDelayMs, initialDelayMs * factor ** (context.reopens - 1));
  return context.reopens <= 1 ? base : Math.max(base, floor);
}

function checkSideEffects({ h, event, before, after, reportsFrom }: StepContext): void {
  const wasOpened = (before.context as ListenerContext).opened;
  const refusesSession =
    event.type === 'STREAM_UNAVAILABLE' && wasOpened && event.status !== undefined && [400, 404].includes(event.status);
  const unreachable =
    event.type === 'STREAM_FAILED' &&
    before.matches({ connected: 'opening' }) &&
    (event.connection === 'refused' || (event.connection === 'reset' && wasOpened));
  expect(
    reportsOf(h, 'SERVER_UNREACHABLE', reportsFrom).map((r) => r.event),
    'SERVER_UNREACHABLE exactly when an open was refused, or reset while reopening',
  ).toEqual(
    unreachable
      ? [{ type: 'SERVER_UNREACHABLE', error: `the listening stream could not be reopened: ${event.error}` }]
      : [],
  );
  if (unreachable) expect(after.value).toBe('unreachable');
  if (event.type === 'SUBSCRIPTIONS_CHANGED') {
    expect(after.value, 'a change of subscriptions opens a new stream at once').toEqual({ connected: 'opening' });
    expect(h.controls.started.at(-1)?.key).toBe('stream');
  }
  if (event.type === 'STREAM_PROGRESSED') expect((after.context as ListenerContext).progressed).toBe(true);
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
  // Nothing to listen to, or the stream opened and was handed over: the connection stops this
  // listener (and starts one when something is wanted, or the handed-over stream ended).
  const entered = (state: string | object) => after.matches(state) && !before.matches(state);
  const idle = entered('unavailable') || entered({ connected: 'streaming' });
  expect(
    reportsOf(h, 'NOTHING_TO_LISTEN', reportsFrom),
    'NOTHING_TO_LISTEN exactly when the stream turned out unavailable, or opened (handed over)',
  ).toHaveLength(idle ? 1 : 0);
  if (entered({ connected: 'streaming' }))
    expect(h.controls.started.at(-1)?.key, 'the open stream is what is handed over').toBe('stream');

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
    // A resumed listener starts out waiting (at 0).
    expect(h.clock.now() - (h.scratch.waitingSince ?? 0), 'reconnects after the promised delay').toBe(
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

export const listenerSpec = (machine: AnyStateMachine = listenerMachine, input: ListenerInput = INPUT): ModelSpec => ({
  machine,
  input,
  implementations: (h: Harness) => ({
    actions: {
      'follow stream': (_: unknown, input: FollowStreamInput) =>
        h.controls.open('stream', input, (event) => h.actor.send(event)),
      'stop following': () => h.controls.close('stream'),
    },
  }),
  events,
  project,
  viaChild: Object.fromEntries(STREAM_EVENTS.map((type) => [type, 'stream'])),
  afterStep: checkSideEffects,
});
