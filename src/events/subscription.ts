/**
 * One events subscription as its consumer holds it (experimental: SEP-3415 is a draft). The
 * lifecycle is the `subscription.<n>` child of the server's connection
 * (machines/subscription.machine.ts); this object is its effects: the `events/*` requests, the
 * dedupe by `eventId` within a window, the consumer's queue, and the store writes after each batch.
 */
import type { AnyActorRef } from 'xstate';
import type {
  Delivery,
  EventOccurrence,
  PollOutput,
  SubscriptionEvent,
  WebhookGrant,
} from '../../machines/subscription.machine.js';
import { ConfigError } from '../core/errors.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import {
  forgetSubscription,
  registerSubscription,
  type SubscriptionEffects,
} from '../runtime/events/subscription-actors.js';
import {
  ActiveParamsSchema,
  ErrorParamsSchema,
  EventOccurrenceSchema,
  EVENTS_METHODS,
  EVENTS_NOTIFICATIONS,
  HeartbeatParamsSchema,
  PollResultSchema,
  SubscribeResultSchema,
  SUBSCRIPTION_ID_META,
  terminationFailure,
} from '../runtime/events/wire.js';
import type { EventStore, StoredPosition, StoredSubscription } from './event-store.js';

export type { EventOccurrence } from '../../machines/subscription.machine.js';

/** What a subscription needs of its server: requests, and the notifications of every stream. */
export interface SubscriptionHost {
  readonly server: string;
  request(method: string, params: Record<string, unknown>, options?: RequestOptions): Promise<unknown>;
  onNotification(listener: (notification: JsonRpcNotification) => void): () => void;
}

export interface SubscriptionStatus {
  id: string;
  server: string;
  name: string;
  mode: 'poll' | 'push' | 'webhook';
  /** The machine's state: `polling`, `waiting`, `streaming`, `subscribed`, `retrying`, `closed`, `ended` … */
  state: string;
  /** The position the next request resumes from (null: from now). */
  cursor: string | null;
  delivered: number;
  /** Events dropped because their `eventId` was delivered already (within the window). */
  duplicates: number;
  /** `truncated` answers: events may have been skipped by the server. */
  gaps: number;
  lastError: string | undefined;
}

interface SubscriptionEvents {
  event: EventOccurrence;
  /** The server skipped events (`truncated: true`, a webhook `gap`): fetch authoritative state if it matters. */
  gap: { cursor: string | null };
  /** The store holds this cursor (and the dedupe window with it): everything before it survives a restart. */
  stored: { cursor: string | null };
  /** The subscription is over: closed, or ended by the server (`error` says why). */
  end: { error: string | undefined };
}

type Listener<K extends keyof SubscriptionEvents> = (payload: SubscriptionEvents[K]) => void | Promise<void>;

/** How long a request may take; `events/stream` has none (its heartbeats prove it alive). */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

export interface SubscriptionOptions {
  /** How many recent event ids are remembered to drop duplicates (default 1000). */
  dedupeWindow?: number | undefined;
  /** `events/poll`'s `maxEvents` and every request's `maxAgeMs`, when given. */
  maxEvents?: number | undefined;
  maxAgeMs?: number | undefined;
  /** Webhook: `ttlMs` suggested on every `events/subscribe`. */
  ttlMs?: number | undefined;
}

export class Subscription implements AsyncIterable<EventOccurrence> {
  private readonly listeners = new Map<keyof SubscriptionEvents, Set<Listener<never>>>();
  private readonly queue: EventOccurrence[] = [];
  private readonly waiting: Array<(result: IteratorResult<EventOccurrence>) => void> = [];
  private readonly seen: string[];
  private readonly seenSet: Set<string>;
  private readonly window: number;
  private cursor: string | null;
  private delivered = 0;
  private duplicates = 0;
  private gaps = 0;
  private endError: string | undefined;
  private over = false;
  private child: AnyActorRef | undefined;
  private resolveEnded!: () => void;
  private readonly endedPromise = new Promise<void>((resolve) => (this.resolveEnded = resolve));

  /** @internal Made by `handle.events.subscribe()`. */
  constructor(
    private readonly host: SubscriptionHost,
    private readonly stored: StoredSubscription,
    /** The key of its effects (unique in the process). */
    readonly key: string,
    start: { cursor: string | null; seen: string[] },
    private readonly store: EventStore | undefined,
    private readonly options: SubscriptionOptions,
    /** Webhook: where the receiver hands this subscription its verified deliveries. */
    private readonly webhook?: {
      register(id: string, secret: string, sink: (event: SubscriptionEvent) => void): () => void;
    },
  ) {
    this.cursor = start.cursor;
    this.window = options.dedupeWindow ?? 1000;
    this.seen = start.seen.slice(-this.window);
    this.seenSet = new Set(this.seen);
    registerSubscription(key, this.effects());
  }

  get id(): string {
    return this.stored.id;
  }

  get server(): string {
    return this.host.server;
  }

  get name(): string {
    return this.stored.name;
  }

  get arguments(): Record<string, unknown> {
    return this.stored.arguments;
  }

  get mode(): 'poll' | 'push' | 'webhook' {
    return this.stored.mode;
  }

  /** @internal The connection spawned the child: its state is read from it, never copied. */
  attach(child: AnyActorRef): void {
    this.child = child;
    const watch = child.subscribe({
      complete: () => {
        watch.unsubscribe();
        this.finish(this.endError);
      },
      error: (error: unknown) => this.finish(error instanceof Error ? error.message : String(error)),
    });
  }

  /** @internal Tell the child (RESUBSCRIBE after a new session or an events list change). */
  send(event: SubscriptionEvent): void {
    if (!this.over) this.child?.send(event);
  }

  on<K extends keyof SubscriptionEvents>(event: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  status(): SubscriptionStatus {
    const snapshot = this.child?.getSnapshot() as
      { value: unknown; context?: { lastError?: string | undefined } } | undefined;
    const value = snapshot?.value;
    const state = this.over
      ? this.endError === undefined
        ? 'closed'
        : 'ended'
      : typeof value === 'string'
        ? value
        : value && typeof value === 'object'
          ? (Object.keys(value)[0] ?? 'starting')
          : 'starting';
    return {
      id: this.id,
      server: this.server,
      name: this.name,
      mode: this.mode,
      state,
      cursor: this.cursor,
      delivered: this.delivered,
      duplicates: this.duplicates,
      gaps: this.gaps,
      lastError: this.endError ?? snapshot?.context?.lastError,
    };
  }

  /** Stops the subscription (webhook: `events/unsubscribe`) and forgets it in the store. */
  async close(): Promise<void> {
    if (!this.over) this.child?.send({ type: 'CLOSE' });
    await this.endedPromise;
    await this.store?.forget(this.id);
  }

  /** Every store write made so far has settled (the cursor of the last batch is stored). */
  async flush(): Promise<void> {
    await this.store?.flush();
  }

  [Symbol.asyncIterator](): AsyncIterator<EventOccurrence> {
    return {
      next: () => {
        const event = this.queue.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (this.over) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiting.push(resolve));
      },
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }

  private emit<K extends keyof SubscriptionEvents>(event: K, payload: SubscriptionEvents[K]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        void (listener as Listener<K>)(payload);
      } catch {
        // A consumer's failure is its own; delivery goes on.
      }
    }
  }

  private finish(error: string | undefined): void {
    if (this.over) return;
    this.over = true;
    this.endError = error;
    forgetSubscription(this.key);
    for (const resolve of this.waiting.splice(0)) resolve({ value: undefined, done: true });
    this.emit('end', { error });
    this.resolveEnded();
  }

  /** The consumer gets what it has not seen; then the cursor and the window are stored. */
  private deliver({ events, cursor, truncated }: Delivery): void {
    for (const event of events) {
      if (this.seenSet.has(event.eventId)) {
        this.duplicates++;
        continue;
      }
      this.seenSet.add(event.eventId);
      this.seen.push(event.eventId);
      if (this.seen.length > this.window) this.seenSet.delete(this.seen.shift()!);
      this.delivered++;
      const waiter = this.waiting.shift();
      if (waiter) waiter({ value: event, done: false });
      else if (this.hasIterator()) this.queue.push(event);
      this.emit('event', event);
    }
    if (truncated) {
      this.gaps++;
      this.emit('gap', { cursor });
    }
    const changed = cursor !== this.cursor || events.length > 0;
    this.cursor = cursor;
    if (!changed || !this.store) return;
    let written: StoredPosition | undefined;
    void this.store
      .writePosition(this.id, () => (written = { cursor: this.cursor, seen: [...this.seen] }))
      .then((ok) => {
        if (ok && written) this.emit('stored', { cursor: written.cursor });
      });
  }

  /** Events are queued for the iterator only once someone iterates (a listener-only consumer keeps no queue). */
  private iterating = false;

  private hasIterator(): boolean {
    return this.iterating || this.waiting.length > 0;
  }

  /** @internal Start queuing for `for await` before the first `next()` (called by `subscribe`). */
  iterate(): this {
    this.iterating = true;
    return this;
  }

  private params(cursor: string | null): Record<string, unknown> {
    return {
      name: this.name,
      arguments: this.arguments,
      cursor,
      ...(this.options.maxAgeMs !== undefined && { maxAgeMs: this.options.maxAgeMs }),
    };
  }

  private effects(): SubscriptionEffects {
    return {
      poll: async (cursor): Promise<PollOutput> => {
        const raw = await this.host.request(EVENTS_METHODS.poll, {
          ...this.params(cursor),
          ...(this.options.maxEvents !== undefined && { maxEvents: this.options.maxEvents }),
        });
        const result = PollResultSchema.parse(raw);
        return {
          events: result.events,
          cursor: result.cursor,
          truncated: result.truncated,
          hasMore: result.hasMore,
          nextPollMs: result.nextPollMs,
        };
      },
      stream: (cursor, send, signal) => this.stream(cursor, send, signal),
      subscribeWebhook: async (cursor): Promise<WebhookGrant> => {
        const webhook = this.stored.webhook;
        if (!webhook || !this.webhook) throw new ConfigError('a webhook subscription needs a webhook receiver');
        this.unregisterWebhook ??= this.webhook.register(this.id, webhook.secret, (event) => this.send(event));
        const raw = await this.host.request(EVENTS_METHODS.subscribe, {
          ...this.params(cursor),
          delivery: { mode: 'webhook', url: webhook.url, secret: webhook.secret },
          ...(this.options.ttlMs !== undefined && { ttlMs: this.options.ttlMs }),
        });
        const result = SubscribeResultSchema.parse(raw);
        return {
          cursor: result.cursor,
          truncated: result.truncated,
          refreshInMs:
            result.refreshBefore === null ? null : Math.max(0, Date.parse(result.refreshBefore) - Date.now()),
        };
      },
      unsubscribe: async () => {
        this.unregisterWebhook?.();
        const webhook = this.stored.webhook;
        if (this.mode !== 'webhook' || !webhook) return;
        await this.host.request(EVENTS_METHODS.unsubscribe, {
          name: this.name,
          arguments: this.arguments,
          delivery: { url: webhook.url },
        });
      },
      deliver: (delivery) => this.deliver(delivery),
      ended: (error) => {
        this.endError = error;
      },
    };
  }

  private unregisterWebhook: (() => void) | undefined = undefined;

  /** `events/stream`: its notifications (routed by the request's id) become the machine's STREAM_* events. */
  private stream(cursor: string | null, send: (event: SubscriptionEvent) => void, signal: AbortSignal): Promise<void> {
    let requestId: number | undefined;
    let terminate: ((failure: unknown) => void) | undefined;
    const terminated = new Promise<never>((_, reject) => (terminate = reject));
    const off = this.host.onNotification((notification) => {
      const params = notification.params ?? {};
      const meta = params['_meta'] as Record<string, unknown> | undefined;
      if (requestId === undefined || meta?.[SUBSCRIPTION_ID_META] !== requestId) return;
      switch (notification.method) {
        case EVENTS_NOTIFICATIONS.active: {
          const active = ActiveParamsSchema.safeParse(params);
          if (active.success)
            send({ type: 'STREAM_ACTIVE', cursor: active.data.cursor, truncated: active.data.truncated });
          return;
        }
        case EVENTS_NOTIFICATIONS.event: {
          const event = EventOccurrenceSchema.safeParse(params);
          if (event.success) send({ type: 'STREAM_EVENT', event: event.data });
          return;
        }
        case EVENTS_NOTIFICATIONS.heartbeat: {
          const heartbeat = HeartbeatParamsSchema.safeParse(params);
          if (heartbeat.success) send({ type: 'STREAM_HEARTBEAT', cursor: heartbeat.data.cursor });
          return;
        }
        case EVENTS_NOTIFICATIONS.error: {
          const error = ErrorParamsSchema.safeParse(params);
          send({ type: 'STREAM_ERROR', message: error.success ? error.data.error.message : 'events error' });
          return;
        }
        case EVENTS_NOTIFICATIONS.terminated: {
          const error = ErrorParamsSchema.safeParse(params);
          terminate?.(terminationFailure(error.success ? error.data.error : { code: -32603, message: 'terminated' }));
          return;
        }
      }
    });
    const answered = this.host.request(EVENTS_METHODS.stream, this.params(cursor), {
      timeoutMs: NO_TIMEOUT_MS,
      signal,
      // A broken stream is opened again by the machine with its cursor, never replayed blindly.
      retry: 'never',
      onid: (id) => (requestId = id),
    });
    return Promise.race([answered.then(() => undefined), terminated]).finally(off);
  }
}
