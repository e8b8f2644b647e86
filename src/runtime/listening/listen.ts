/**
 * The modern era's listening stream (spec 2026-07-28, basic/patterns/subscriptions): the
 * `subscriptions/listen` the listener child opens with the notifications this client wants,
 * open once the server acknowledged it. One at a time, except while a subscription change
 * replaces it: the old one stays open until the new one is acknowledged (make before break).
 *
 * - What is asked for: the list changes the server's discovery offers (`listChanged`), the
 *   resources the user subscribed to (when it offers `resources.subscribe`), and the tasks being
 *   polled (when it offers the tasks extension; task-subscriptions.ts); nothing at all means no
 *   listen.
 * - Routing: the acknowledgment and the listen's own answer (a graceful close, or an error) stay
 *   here; a notification tagged with the id of a listen that is no longer open (a re-opened or
 *   cancelled one) is dropped, so nothing arrives twice; the others go on to the usual events.
 * - Over HTTP the listen is a POST whose response stream stays open (closing it cancels); over
 *   stdio it is a request whose answer only comes when the server ends it (cancelled with
 *   `notifications/cancelled`).
 * - `subscribeResource` waits for the acknowledgment of a listen opened after its change.
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import { McpError, ProtocolError, RequestAbortedError, RequestTimeoutError } from '../../core/errors.js';
import type { JsonRpcMessage, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { SubscriptionStream, Transport } from '../../transports/transport.js';
import { offersTaskNotifications } from './task-subscriptions.js';

export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';
const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';
const LISTEN_ID_PREFIX = 'listen-';

export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** The tasks extension: `notifications/tasks` for these tasks. */
  taskIds?: string[];
}

function offers(capabilities: Record<string, unknown>, name: string, feature: string): boolean {
  const capability = capabilities[name];
  return (
    typeof capability === 'object' && capability !== null && (capability as Record<string, unknown>)[feature] === true
  );
}

/** What to listen for: what the server offers of what we want; undefined when that is nothing. */
export function listenFilter(
  capabilities: Record<string, unknown>,
  uris: readonly string[],
  taskIds: readonly string[] = [],
): SubscriptionFilter | undefined {
  const filter: SubscriptionFilter = {};
  if (offers(capabilities, 'tools', 'listChanged')) filter.toolsListChanged = true;
  if (offers(capabilities, 'prompts', 'listChanged')) filter.promptsListChanged = true;
  if (offers(capabilities, 'resources', 'listChanged')) filter.resourcesListChanged = true;
  if (uris.length > 0 && offers(capabilities, 'resources', 'subscribe')) filter.resourceSubscriptions = [...uris];
  if (taskIds.length > 0 && offersTaskNotifications(capabilities)) filter.taskIds = [...taskIds];
  return Object.keys(filter).length > 0 ? filter : undefined;
}

function isEmpty(filter: SubscriptionFilter): boolean {
  return (
    filter.toolsListChanged !== true &&
    filter.promptsListChanged !== true &&
    filter.resourcesListChanged !== true &&
    !filter.resourceSubscriptions?.length &&
    !filter.taskIds?.length
  );
}

/** What a change of the resource subscriptions needs from the modern listen (resource-subscriptions.ts). */
export interface ListenControl {
  /** The discovered server's capabilities (undefined while it is not connected). */
  capabilities: Record<string, unknown> | undefined;
  /** The set changed: the listen is issued again; returns the generation its acknowledgment will have. */
  changed(): number;
  acknowledgedSince(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<SubscriptionFilter>;
}

type Settle<T> = { resolve: (value: T) => void; reject: (error: Error) => void };

/** One `subscriptions/listen` request, from sending to its end. */
class OpenListen {
  acknowledged: SubscriptionFilter | undefined;
  /** Its reader's hooks (called as methods: the listener's are an object's, not closures). */
  progress: { onProgress?: (() => void) | undefined } | undefined;
  /** The subscriptions changed since it was opened: a listen with the new set replaces it. */
  replaced = false;
  /** Its listener stopped; it stays open until its replacement is acknowledged (then this closes it). */
  retire: (() => void) | undefined;
  /** Settled by the acknowledgment, the listen's answer, or its end. */
  private opening: Settle<SubscriptionFilter> | undefined;
  private ending: Settle<void> | undefined;
  readonly opened: Promise<SubscriptionFilter>;
  /** stdio: the listen has no stream of its own; it ends with its answer or the transport. */
  readonly ended: Promise<void>;

  constructor(
    readonly id: string,
    readonly generation: number,
    private readonly server: string,
  ) {
    this.opened = new Promise((resolve, reject) => (this.opening = { resolve, reject }));
    this.ended = new Promise((resolve, reject) => (this.ending = { resolve, reject }));
    this.opened.catch(() => {});
    this.ended.catch(() => {});
  }

  acknowledge(filter: SubscriptionFilter): void {
    this.acknowledged = filter;
    this.opening?.resolve(filter);
  }

  answer(response: JsonRpcResponse): void {
    if (!('error' in response)) return this.end(); // a graceful close (spec: the listen's result)
    const { code, message, data } = response.error;
    this.fail(new McpError(code, message, data, { server: this.server }));
  }

  fail(error: Error): void {
    this.opening?.reject(error);
    this.ending?.reject(error);
  }

  end(): void {
    this.opening?.reject(
      new ProtocolError('the listen ended before the server acknowledged it', { server: this.server }),
    );
    this.ending?.resolve();
  }
}

interface AckWaiter extends Settle<SubscriptionFilter> {
  generation: number;
}

export class ModernListens {
  private lastId = 0;
  private readonly listens = new Map<string, OpenListen>();
  /** Bumped by every change of the subscriptions: a waiter needs a listen opened at its generation or later. */
  private generation = 0;
  private waiters: AckWaiter[] = [];

  constructor(
    private readonly server: string,
    /** The URIs subscribed now. */
    private readonly subscribed: () => readonly string[],
  ) {}

  /** The subscriptions changed; returns the generation a listen must be opened at to include the change. */
  changed(): number {
    for (const listen of this.listens.values()) listen.replaced = true;
    return ++this.generation;
  }

  /** Nothing to listen for (no filter): as good as an acknowledgment of nothing; a listen it replaces closes now. */
  private nothingToListenFor(): void {
    this.settleWaiters(this.generation, {});
    for (const listen of [...this.listens.values()]) if (listen.replaced) listen.retire?.();
  }

  /** The listener's open: a listen for what the server offers of what we want, if that is anything. */
  listenFor(
    transport: Transport,
    envelope: { wrap(params: Record<string, unknown>): Record<string, unknown> },
    capabilities: Record<string, unknown>,
    uris: readonly string[],
    taskIds: readonly string[],
    timeoutMs: number,
  ): Promise<ListenerOpening> {
    const filter = listenFilter(capabilities, uris, taskIds);
    if (!filter) {
      this.nothingToListenFor();
      return Promise.resolve({ kind: 'unavailable', reason: 'nothing to listen for' });
    }
    return this.open(transport, (notifications) => envelope.wrap({ notifications }), filter, timeoutMs);
  }

  private async open(
    transport: Transport,
    params: (filter: SubscriptionFilter) => Record<string, unknown>,
    filter: SubscriptionFilter,
    timeoutMs: number,
  ): Promise<ListenerOpening> {
    const listen = new OpenListen(`${LISTEN_ID_PREFIX}${++this.lastId}`, this.generation, this.server);
    const message: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: listen.id,
      method: 'subscriptions/listen',
      params: params(filter),
    };
    this.listens.set(listen.id, listen);
    let stream: SubscriptionStream;
    try {
      stream = await this.send(transport, message, listen);
    } catch (error) {
      this.listens.delete(listen.id);
      throw error;
    }
    let retireTimer: NodeJS.Timeout | undefined;
    const stop = () => {
      clearTimeout(retireTimer);
      if (this.listens.delete(listen.id)) stream.cancel();
    };
    // Replaced by a listen with the new set: kept open until that one is acknowledged, so nothing
    // sent meanwhile is missed; bounded, in case the new one never is.
    const cancel = () => {
      if (!listen.replaced || !this.listens.has(listen.id)) return stop();
      listen.retire = stop;
      retireTimer = setTimeout(stop, timeoutMs);
    };
    // Read at once: the acknowledgment arrives on the stream. A break keeps its error (evidence.ts).
    const reading = stream.read().then(
      () => {
        this.listens.delete(listen.id);
        listen.end();
      },
      (error: unknown) => {
        this.listens.delete(listen.id);
        listen.fail(error instanceof Error ? error : new Error(String(error)));
        throw error;
      },
    );
    reading.catch(() => {}); // the open, or the listener's read, reports it
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new ProtocolError(`the listen was not acknowledged within ${timeoutMs} ms`, { server: this.server })),
        timeoutMs,
      );
    });
    let honored: SubscriptionFilter;
    try {
      honored = await Promise.race([listen.opened, timedOut]);
    } catch (error) {
      stop();
      // The server answered the listen with an error: it offers none (or not this one).
      if (error instanceof McpError) {
        this.settleWaiters(listen.generation, undefined, error);
        return { kind: 'unavailable', reason: error.message };
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
    this.settleWaiters(listen.generation, honored);
    this.retireReplaced(listen);
    if (isEmpty(honored)) {
      stop();
      return { kind: 'unavailable', reason: 'the server honors none of the requested notifications' };
    }
    return {
      kind: 'open',
      read: (hooks) => {
        listen.progress = hooks;
        hooks.onProgress?.(); // the acknowledgment itself
        return reading;
      },
      cancel,
    };
  }

  /** A listen was acknowledged: the ones it replaces close now (their notifications are dropped from here on). */
  private retireReplaced(current: OpenListen): void {
    for (const listen of [...this.listens.values()])
      if (listen !== current && listen.generation < current.generation) listen.retire?.();
  }

  /** HTTP: the POST's own stream. stdio: the request on the one channel; cancelled with `notifications/cancelled`. */
  private async send(transport: Transport, message: JsonRpcRequest, listen: OpenListen): Promise<SubscriptionStream> {
    if (transport.openSubscription) return transport.openSubscription(message);
    await transport.send(message);
    return {
      read: () => listen.ended,
      cancel: () => {
        listen.end();
        const cancelled = { requestId: listen.id, reason: 'the subscriptions changed or the client stopped listening' };
        transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: cancelled }).catch(() => {});
      },
    };
  }

  /**
   * A message that belongs to a listen: true when it was handled here (the acknowledgment, the
   * listen's answer, a notification of a listen no longer open); false when it goes on as usual.
   */
  route(message: JsonRpcMessage): boolean {
    if (!('method' in message)) {
      if (typeof message.id !== 'string' || !message.id.startsWith(LISTEN_ID_PREFIX)) return false;
      this.listens.get(message.id)?.answer(message);
      return true;
    }
    const id = (message.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID_META];
    if (typeof id !== 'string' || !id.startsWith(LISTEN_ID_PREFIX)) return false;
    const listen = this.listens.get(id);
    if (message.method === ACKNOWLEDGED) {
      const notifications = message.params?.notifications;
      listen?.acknowledge(typeof notifications === 'object' && notifications !== null ? notifications : {});
      return true;
    }
    if (!listen) return true;
    // A listen being replaced may still carry a URI unsubscribed meanwhile.
    if (listen.replaced && message.method === 'notifications/resources/updated')
      return !this.subscribed().includes(message.params?.uri as string);
    listen.progress?.onProgress?.();
    return false;
  }

  /** The transport died: every listen ends with it. */
  closeAll(): void {
    for (const listen of [...this.listens.values()]) {
      listen.retire?.();
      listen.end();
    }
    this.listens.clear();
  }

  /** Resolves with what the server honored once a listen opened at `generation` or later is acknowledged. */
  acknowledgedSince(generation: number, timeoutMs: number, signal?: AbortSignal): Promise<SubscriptionFilter> {
    return new Promise((resolve, reject) => {
      const waiter: AckWaiter = {
        generation,
        resolve: (f) => done(() => resolve(f)),
        reject: (e) => done(() => reject(e)),
      };
      const onAbort = () =>
        waiter.reject(new RequestAbortedError('subscriptions/listen', { server: this.server, cause: signal?.reason }));
      const timer = setTimeout(
        () => waiter.reject(new RequestTimeoutError('subscriptions/listen', timeoutMs, { server: this.server })),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        settle();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private settleWaiters(generation: number, honored: SubscriptionFilter | undefined, error?: Error): void {
    for (const waiter of this.waiters.filter((w) => w.generation <= generation)) {
      if (honored) waiter.resolve(honored);
      else waiter.reject(error ?? new ProtocolError('the listen was declined', { server: this.server }));
    }
  }
}
