/**
 * `handle.events` (experimental, SEP-3415 draft; docs/events.md): the server's event types, and
 * subscriptions that are children of its connection. Each subscription's cursor and the list of
 * subscriptions are in the supervisor's store (when it has one): `subscribe()` with the same name
 * and arguments — in this process after a restart, or in another one sharing the store — resumes
 * from the stored cursor, and `resume()` starts every stored subscription again.
 */
import { randomBytes } from 'node:crypto';
import type { AnyActorRef } from 'xstate';
import {
  DEFAULT_SUBSCRIPTION_POLICY,
  type SubscriptionInput,
  type SubscriptionPolicy,
} from '../../machines/subscription.machine.js';
import { ConfigError } from '../core/errors.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import {
  EVENTS_EXTENSION,
  EVENTS_METHODS,
  EVENTS_NOTIFICATIONS,
  ListEventsResultSchema,
} from '../runtime/events/wire.js';
import {
  EventKeys,
  EventStore,
  subscriptionId,
  type StoredSubscription,
  type SubscriptionMode,
} from './event-store.js';
import { Subscription, type SubscriptionHost, type SubscriptionOptions } from './subscription.js';
import type { WebhookReceiver } from './webhook-receiver.js';

export type { SubscriptionMode } from './event-store.js';

/** An event type the server offers (`events/list`). */
export interface EventDescriptor {
  name: string;
  description?: string | undefined;
  delivery: SubscriptionMode[];
  inputSchema?: Record<string, unknown> | undefined;
  payloadSchema?: Record<string, unknown> | undefined;
  _meta?: Record<string, unknown> | undefined;
}

export interface SubscribeOptions extends SubscriptionOptions {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  /** `auto` (default): push when the event type offers it, else poll (webhook only when asked for). */
  mode?: SubscriptionMode | 'auto' | undefined;
  /** Poll floor, heartbeat, backoff, webhook refresh margin (machines/subscription.machine.ts). */
  policy?: Partial<SubscriptionPolicy> | undefined;
  /** Webhook mode: the receiver its deliveries reach (createWebhookReceiver). */
  receiver?: WebhookReceiver | undefined;
}

/** What `resume()` starts every stored subscription with. */
export type ResumeOptions = Omit<SubscribeOptions, 'name' | 'arguments' | 'mode'>;

/** What the events client needs of a server (its handle's runtime, seen narrowly). */
export interface EventsHost extends SubscriptionHost {
  /** The capabilities of the current session (undefined while none serves). */
  capabilities(): Record<string, unknown> | undefined;
  /** The server's connection actor: subscriptions are spawned under it. */
  connection(): AnyActorRef | undefined;
  /** The server's restart backoff (the subscription's default after a failure). */
  readonly backoff: SubscriptionPolicy['backoff'] | undefined;
  readonly store: EventStore | undefined;
  warn(error: Error): void;
}

let nextChild = 0;

export class ServerEvents {
  private readonly subscriptions = new Map<string, Subscription>();
  private unfollow: (() => void) | undefined = undefined;

  constructor(private readonly host: EventsHost) {}

  /** Whether the current session's server declared the extension. */
  offered(): boolean {
    const extensions = this.host.capabilities()?.['extensions'];
    return typeof extensions === 'object' && extensions !== null && EVENTS_EXTENSION in extensions;
  }

  /** Every event type, across pages. */
  async list(): Promise<EventDescriptor[]> {
    const events: EventDescriptor[] = [];
    let cursor: string | undefined;
    do {
      const raw = await this.host.request(EVENTS_METHODS.list, cursor === undefined ? {} : { cursor });
      const page = ListEventsResultSchema.parse(raw);
      events.push(...(page.events as EventDescriptor[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return events;
  }

  /** The live subscriptions of this server. */
  active(): Subscription[] {
    return [...this.subscriptions.values()];
  }

  /**
   * Subscribes (or resumes, when the store has this name and arguments: from its cursor). A
   * subscription already live in this process is returned as it is.
   */
  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (typeof options.name !== 'string' || options.name === '')
      throw new ConfigError(`events.subscribe on '${this.host.server}': 'name' must be a non-empty string`, [
        { path: 'name', message: 'required' },
      ]);
    const args = options.arguments ?? {};
    const id = subscriptionId(options.name, args);
    const live = this.subscriptions.get(id);
    if (live) return live;
    const mode = await this.chooseMode(options.name, options.mode ?? 'auto', options.receiver);
    const previous = (await this.host.store?.subscriptions())?.find((s) => s.id === id);
    const stored: StoredSubscription = {
      id,
      name: options.name,
      arguments: args,
      mode,
      ...(mode === 'webhook' && { webhook: previous?.webhook ?? newWebhook(id, options.receiver) }),
    };
    return this.start(stored, options);
  }

  /** Starts every subscription the store lists for this server (a restarted process, another replica). */
  async resume(options: ResumeOptions = {}): Promise<Subscription[]> {
    const stored = (await this.host.store?.subscriptions()) ?? [];
    const started: Subscription[] = [];
    for (const subscription of stored) {
      started.push(this.subscriptions.get(subscription.id) ?? (await this.start(subscription, options)));
    }
    return started;
  }

  /** Closes every subscription of this server. */
  async closeAll(): Promise<void> {
    await Promise.all(this.active().map((s) => s.close()));
  }

  private async chooseMode(
    name: string,
    wanted: SubscriptionMode | 'auto',
    receiver: WebhookReceiver | undefined,
  ): Promise<SubscriptionMode> {
    const descriptor = (await this.list()).find((event) => event.name === name);
    if (!descriptor)
      throw new ConfigError(`events.subscribe on '${this.host.server}': the server lists no event type '${name}'`, [
        { path: 'name', message: `unknown event type '${name}'` },
      ]);
    if (wanted === 'auto') return descriptor.delivery.includes('push') ? 'push' : 'poll';
    if (!descriptor.delivery.includes(wanted))
      throw new ConfigError(
        `events.subscribe on '${this.host.server}': '${name}' is delivered by ${descriptor.delivery.join(', ')}, not ${wanted}`,
        [{ path: 'mode', message: `not offered: ${wanted}` }],
      );
    if (wanted === 'webhook' && !receiver)
      throw new ConfigError(
        `events.subscribe on '${this.host.server}': webhook mode needs a webhook receiver (events.webhook)`,
        [{ path: 'mode', message: 'no webhook receiver' }],
      );
    return wanted;
  }

  private async start(stored: StoredSubscription, options: ResumeOptions): Promise<Subscription> {
    const connection = this.host.connection();
    if (!connection) throw new ConfigError(`events.subscribe on '${this.host.server}': the server is not started`);
    const position = (await this.host.store?.position(stored.id)) ?? { cursor: null, seen: [] };
    await this.host.store?.remember(stored);
    const childId = `subscription.${++nextChild}`;
    const subscription = new Subscription(
      this.host,
      stored,
      `${this.host.server}/${childId}`,
      position,
      this.host.store,
      options,
      options.receiver,
    ).iterate();
    this.subscriptions.set(stored.id, subscription);
    subscription.on('end', () => {
      if (this.subscriptions.get(stored.id) === subscription) this.subscriptions.delete(stored.id);
      if (this.subscriptions.size === 0) this.stopFollowing();
    });
    const policy: SubscriptionPolicy = {
      ...DEFAULT_SUBSCRIPTION_POLICY,
      ...(this.host.backoff && { backoff: this.host.backoff }),
      ...options.policy,
    };
    const input: SubscriptionInput = {
      key: subscription.key,
      server: this.host.server,
      name: stored.name,
      mode: stored.mode,
      cursor: position.cursor,
      policy,
    };
    this.follow(connection);
    connection.send({ type: 'SUBSCRIBE', id: childId, input });
    const child = (connection.getSnapshot() as { children: Record<string, AnyActorRef | undefined> }).children[childId];
    if (!child) throw new Error(`the connection of '${this.host.server}' did not start ${childId}`);
    subscription.attach(child);
    return subscription;
  }

  /**
   * A new session (a re-initialize, a restart, a revival) may have lost what the server held, and
   * `notifications/events/list_changed` may have changed the types: each subscription is told
   * RESUBSCRIBE, and its machine decides what that means where it is.
   */
  private follow(connection: AnyActorRef): void {
    if (this.unfollow) return;
    const facts = connection.on('session started', () => this.resubscribeAll());
    const off = this.host.onNotification((notification: JsonRpcNotification) => {
      if (notification.method === EVENTS_NOTIFICATIONS.listChanged) this.resubscribeAll();
    });
    this.unfollow = () => {
      facts.unsubscribe();
      off();
    };
  }

  private stopFollowing(): void {
    this.unfollow?.();
    this.unfollow = undefined;
  }

  private resubscribeAll(): void {
    for (const subscription of this.subscriptions.values()) subscription.send({ type: 'RESUBSCRIBE' });
  }
}

/** A webhook subscription's URL on the receiver, and a fresh `whsec_` secret (32 random bytes). */
function newWebhook(id: string, receiver: WebhookReceiver | undefined): { url: string; secret: string } {
  if (!receiver)
    throw new ConfigError('webhook mode needs a webhook receiver', [{ path: 'receiver', message: 'required' }]);
  return { url: receiver.urlFor(id), secret: `whsec_${randomBytes(32).toString('base64')}` };
}

/** Builds a server's EventStore when the supervisor has a store. */
export function eventStoreOf(
  store: ConstructorParameters<typeof EventStore>[0] | undefined,
  server: string,
  credential: string | undefined,
  warn: (error: Error) => void,
): EventStore | undefined {
  return store && new EventStore(store, new EventKeys(server, credential), warn);
}
