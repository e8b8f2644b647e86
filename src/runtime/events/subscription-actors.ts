/**
 * Binds the subscription machine (machines/subscription.machine.ts) to its effects: each child
 * finds its subscription's effects by its `key` (registered by src/events/subscription.ts), so one
 * provided machine serves every subscription of every server.
 */
import { fromCallback, fromPromise } from 'xstate';
import {
  subscriptionMachine,
  type Delivery,
  type PollOutput,
  type SubscriptionEvent,
  type SubscriptionRequest,
  type WebhookGrant,
} from '../../../machines/subscription.machine.js';
import { classifyFailure } from './wire.js';

/** What one subscription does on the wire and for its consumer. */
export interface SubscriptionEffects {
  poll(cursor: string | null): Promise<PollOutput>;
  /** Opens `events/stream`; its frames go to `send`; the promise settles when the stream ends. */
  stream(cursor: string | null, send: (event: SubscriptionEvent) => void, signal: AbortSignal): Promise<void>;
  subscribeWebhook(cursor: string | null): Promise<WebhookGrant>;
  unsubscribe(): Promise<void>;
  deliver(delivery: Delivery): void;
  ended(error: string | undefined): void;
}

const registry = new Map<string, SubscriptionEffects>();

export function registerSubscription(key: string, effects: SubscriptionEffects): void {
  registry.set(key, effects);
}

export function forgetSubscription(key: string): void {
  registry.delete(key);
}

function effectsOf(key: string): SubscriptionEffects {
  const effects = registry.get(key);
  if (!effects) throw new Error(`no events subscription '${key}' is registered`);
  return effects;
}

export const providedSubscriptionMachine = subscriptionMachine.provide({
  actors: {
    poll: fromPromise<PollOutput, SubscriptionRequest>(({ input }) => effectsOf(input.subscription).poll(input.cursor)),
    stream: fromCallback<SubscriptionEvent, SubscriptionRequest>(({ input, sendBack }) => {
      const controller = new AbortController();
      effectsOf(input.subscription)
        .stream(input.cursor, sendBack, controller.signal)
        .then(
          () => sendBack({ type: 'STREAM_CLOSED', failure: { message: 'the stream ended', terminal: false } }),
          (error: unknown) => sendBack({ type: 'STREAM_CLOSED', failure: classifyFailure(error) }),
        );
      return () => controller.abort();
    }),
    'subscribe webhook': fromPromise<WebhookGrant, SubscriptionRequest>(({ input }) =>
      effectsOf(input.subscription).subscribeWebhook(input.cursor),
    ),
    unsubscribe: fromPromise<void, SubscriptionRequest>(({ input }) => effectsOf(input.subscription).unsubscribe()),
  },
  actions: {
    'deliver events': ({ context }, delivery) => effectsOf(context.key).deliver(delivery),
    'tell ended': ({ context }, { error }) => {
      registry.get(context.key)?.ended(error);
    },
  },
});
