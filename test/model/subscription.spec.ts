/**
 * The subscription machine's model (machines/subscription.machine.ts), one variant per delivery
 * mode: the answers of each request, the push stream's frames and its silence, webhook deliveries,
 * failures that pass and ones the server meant, RESUBSCRIBE and CLOSE everywhere they can come.
 * Cursors come from a small set so the model is finite; `attempt` is projected capped at 2.
 */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import type {
  Delivery,
  SubscriptionContext,
  SubscriptionInput,
  SubscriptionPolicy,
} from '../../machines/subscription.machine.js';
import type { Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export const POLICY: SubscriptionPolicy = {
  pollFloorMs: 1_000,
  heartbeatMs: 30_000,
  backoff: { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0 },
  refreshMarginMs: 30_000,
  noExpiryRefreshMs: 3_600_000,
};

export const inputFor = (mode: SubscriptionInput['mode']): SubscriptionInput => ({
  key: 'docs/subscription.1',
  server: 'docs',
  name: 'ticks',
  mode,
  cursor: 'c-0',
  policy: POLICY,
  random: () => 0.5,
});

const after = (delay: string, state: string) => `xstate.after.${delay}.subscription.${state}`;
const done = (id: string, output: unknown): AnyEventObject => ({ type: `xstate.done.actor.${id}`, output });
const failure = (id: string, error: unknown): AnyEventObject => ({ type: `xstate.error.actor.${id}`, error });
const passing = { message: 'HTTP 503', terminal: false };
const meant = { message: 'MCP error -32024: Forbidden', terminal: true };
const event = (n: number) => ({
  eventId: `evt_${n}`,
  name: 'ticks',
  timestamp: '2026-12-07T00:00:00Z',
  data: {},
  cursor: `c-${n}`,
});

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.status !== 'active') return [];
  const list: AnyEventObject[] = [{ type: 'CLOSE' }];
  if (snapshot.matches('polling'))
    list.push(
      done('poll', { events: [event(1)], cursor: 'c-1', truncated: false, hasMore: true, nextPollMs: 5_000 }),
      done('poll', { events: [], cursor: 'c-1', truncated: true, hasMore: false, nextPollMs: 5_000 }),
      done('poll', { events: [], cursor: null, truncated: false, hasMore: false, nextPollMs: undefined }),
      failure('poll', passing),
      failure('poll', meant),
      { type: 'RESUBSCRIBE' },
    );
  if (snapshot.matches('waiting')) list.push({ type: after('poll interval', 'waiting') }, { type: 'RESUBSCRIBE' });
  if (snapshot.matches('streaming')) {
    const state = snapshot.matches({ streaming: 'live' }) ? 'live' : 'confirming';
    list.push(
      { type: 'STREAM_ACTIVE', cursor: 'c-0', truncated: false },
      { type: 'STREAM_EVENT', event: event(1) },
      { type: 'STREAM_HEARTBEAT', cursor: 'c-1' },
      { type: 'STREAM_ERROR', message: 'UpstreamError' },
      { type: 'STREAM_CLOSED', failure: passing },
      { type: 'STREAM_CLOSED', failure: meant },
      { type: after('silence limit', `streaming.${state}`) },
      { type: 'RESUBSCRIBE' },
    );
  }
  if (snapshot.matches('subscribing'))
    list.push(
      done('subscribe', { cursor: 'c-0', truncated: false, refreshInMs: 600_000 }),
      done('subscribe', { cursor: 'c-0', truncated: false, refreshInMs: null }),
      failure('subscribe', passing),
      failure('subscribe', meant),
      { type: 'RESUBSCRIBE' },
    );
  if (snapshot.matches('subscribed'))
    list.push(
      { type: after('refresh delay', 'subscribed') },
      { type: 'WEBHOOK_EVENT', event: event(1) },
      { type: 'WEBHOOK_GAP', cursor: 'c-1' },
      { type: 'TERMINATED', failure: { message: 'NotFound', terminal: false } },
      { type: 'TERMINATED', failure: meant },
      { type: 'RESUBSCRIBE' },
    );
  if (snapshot.matches('retrying')) list.push({ type: after('retry delay', 'retrying') }, { type: 'RESUBSCRIBE' });
  if (snapshot.matches('closing'))
    list.push(done('unsubscribe', undefined), failure('unsubscribe', new Error('HTTP 500')));
  return list;
}

function project(snapshot: AnyMachineSnapshot) {
  const c = snapshot.context as SubscriptionContext;
  return {
    value: snapshot.value,
    cursor: c.cursor,
    attempt: Math.min(c.attempt, 2),
    nextPollMs: c.nextPollMs ?? null,
    refreshInMs: c.refreshInMs,
  };
}

/** What the runtime was asked to deliver, and to tell, in the step. */
function checkSideEffects({ h, event, before, after }: StepContext): void {
  const deliveries = (h.scratch.deliveries ?? []) as Delivery[];
  const fresh = deliveries.slice(h.scratch.seenDeliveries ?? 0);
  h.scratch.seenDeliveries = deliveries.length;
  const ctx = after.context as SubscriptionContext;
  if (event.type === 'xstate.done.actor.poll')
    expect(fresh, 'a poll answer is delivered, with its cursor').toMatchObject([
      { events: event.output.events, cursor: event.output.cursor, truncated: event.output.truncated },
    ]);
  if (event.type === 'STREAM_EVENT' || event.type === 'WEBHOOK_EVENT') {
    expect(
      fresh.map((d) => d.events),
      'the event is delivered',
    ).toEqual([[event.event]]);
    expect(ctx.cursor, 'the next request resumes after it').toBe(event.event.cursor);
  }
  if (event.type === 'STREAM_HEARTBEAT') expect(ctx.cursor, 'a heartbeat advances the cursor').toBe(event.cursor);
  if (event.type === 'WEBHOOK_GAP')
    expect(fresh, 'a gap is delivered as truncated').toEqual([{ events: [], cursor: event.cursor, truncated: true }]);
  if (
    ![
      'xstate.done.actor.poll',
      'STREAM_EVENT',
      'WEBHOOK_EVENT',
      'STREAM_ACTIVE',
      'STREAM_HEARTBEAT',
      'WEBHOOK_GAP',
      'xstate.done.actor.subscribe',
    ].includes(event.type)
  )
    expect(fresh, `${event.type} delivers nothing`).toEqual([]);
  if (after.matches('retrying') && !before.matches('retrying'))
    expect((after.context as SubscriptionContext).attempt, 'a failure is counted').toBe(
      (before.context as SubscriptionContext).attempt + 1,
    );
  const told = (h.scratch.ended ?? []) as Array<string | undefined>;
  const ended = after.status === 'done' && before.status !== 'done';
  expect(told.length, 'ended is told once, when the machine ends').toBe(ended ? 1 : (h.scratch.told ?? 0));
  h.scratch.told = told.length;
  if (ended && after.matches('ended')) expect(told[0], 'the failure is told').toMatch(/Forbidden/);
  if (ended && after.matches('closed')) expect(told[0]).toBeUndefined();
}

export const subscriptionSpec = (machine: AnyStateMachine, input: SubscriptionInput): ModelSpec => ({
  machine,
  input,
  implementations: (h: Harness) => ({
    actors: {
      poll: h.controls.promise(),
      stream: h.controls.callback(),
      'subscribe webhook': h.controls.promise(),
      unsubscribe: h.controls.promise(),
    },
    actions: {
      'deliver events': (_: unknown, delivery: Delivery) => {
        (h.scratch.deliveries ??= []).push(delivery);
      },
      'tell ended': (_: unknown, { error }: { error: string | undefined }) => {
        (h.scratch.ended ??= []).push(error);
      },
    },
  }),
  events,
  project,
  viaChild: {
    STREAM_ACTIVE: 'stream',
    STREAM_EVENT: 'stream',
    STREAM_HEARTBEAT: 'stream',
    STREAM_ERROR: 'stream',
    STREAM_CLOSED: 'stream',
  },
  afterStep: checkSideEffects,
});
