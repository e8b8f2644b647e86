/**
 * A transport whose every outcome the test decides: opening it, each request's answer or
 * failure, the listening stream, the session's end, and the transport's death. It implements the
 * runtime's Transport shape, and is built through the supervisor's internal `createTransport`
 * hook, so everything above it (server runtime, gate, evidence, replay policy, machines) is real.
 * Nothing settles by itself: an open, a request, a listener or a DELETE waits for the script.
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import type { ServerConfig } from '../../../src/config/server-config.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../../../src/protocol/jsonrpc.js';
import type { TransportContext, TransportFactory } from '../../../src/transports/factory/create-transport.js';
import type { SendOptions, Transport, TransportKind, TransportSink } from '../../../src/transports/transport.js';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
  settled: boolean;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {}); // the runtime observes it; a rejection nobody awaits is not a test failure
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve: (value) => {
      d.settled = true;
      resolve(value);
    },
    reject: (error) => {
      d.settled = true;
      reject(error);
    },
  };
  return d;
}

/** One request on the wire, waiting for the script's answer. */
export interface Exchange {
  transport: ScriptedTransport;
  message: JsonRpcRequest;
  /** The session generation the request carried. */
  generation: number;
  /** The modern version the transport spoke when it was sent (`beginModern`); undefined on the 2025 wire. */
  modernVersion: string | undefined;
  reply: Deferred<void>;
  /** The script refused it in a way that proves it was not processed (404, 401, unreachable). */
  refusedUnprocessed?: boolean;
}

/** One GET stream being opened, then read. */
export interface ListenerExchange {
  transport: ScriptedTransport;
  lastEventId: string | undefined;
  open: Deferred<ListenerOpening>;
  /** Settles (the stream ends) when the script says so. */
  read: Deferred<void>;
}

/** Every transport the runtime built for one server, and what is waiting on them. */
export class Script {
  readonly transports: ScriptedTransport[] = [];
  /** Every request message sent, in order (replays included, with their new ids). */
  readonly sent: Exchange[] = [];
  readonly listeners: ListenerExchange[] = [];

  readonly factory: TransportFactory = (_config: ServerConfig, context: TransportContext, kind) => {
    const transport = new ScriptedTransport(this, context.sink, kind === 'auto' ? 'http' : kind);
    this.transports.push(transport);
    return transport;
  };

  /** The newest transport. */
  get current(): ScriptedTransport | undefined {
    return this.transports.at(-1);
  }

  /** Requests still waiting for an answer, oldest first. */
  waiting(filter: (exchange: Exchange) => boolean = () => true): Exchange[] {
    return this.sent.filter((exchange) => !exchange.reply.settled && filter(exchange));
  }

  /** The one request of `method` waiting now (the handshake's initialize, a probe's ping). */
  waitingFor(method: string): Exchange | undefined {
    return this.waiting((e) => e.message.method === method).at(-1);
  }

  answer(exchange: Exchange, result: unknown): void {
    exchange.transport.sink.onMessage({ jsonrpc: '2.0', id: exchange.message.id, result });
    exchange.reply.resolve();
  }

  /** A JSON-RPC error answer (as the HTTP transport reports a 4xx whose body is one on the modern wire). */
  error(exchange: Exchange, error: { code: number; message: string; data?: unknown }): void {
    exchange.transport.sink.onMessage({ jsonrpc: '2.0', id: exchange.message.id, error });
    exchange.reply.resolve();
  }

  fail(exchange: Exchange, error: unknown, unprocessed = false): void {
    exchange.refusedUnprocessed = unprocessed;
    exchange.reply.reject(error);
  }

  /** The GET stream being opened or read now, if any. */
  get listener(): ListenerExchange | undefined {
    return this.listeners.at(-1);
  }
}

export class ScriptedTransport implements Transport {
  /**
   * Never reused: every connection attempt opens a transport of its own (as a stdio server's
   * does), so each `connecting` waits for the script's open.
   */
  readonly isOpen = false;
  dead = false;
  sessionGeneration = 0;
  hasSession = false;
  readonly opening = deferred<void>();
  readonly terminating = deferred<void>();
  terminateCalled = false;
  /** Set by `beginModern`, cleared by `beginSession`: the wire the next request goes out on. */
  modernVersion: string | undefined;

  constructor(
    private readonly script: Script,
    readonly sink: TransportSink,
    readonly kind: TransportKind,
  ) {}

  open(): Promise<void> {
    return this.opening.promise;
  }

  send(message: JsonRpcMessage, _options?: SendOptions): Promise<void> {
    if (this.dead) return Promise.reject(new Error('the transport is closed'));
    if (!('method' in message) || !('id' in message)) return Promise.resolve(); // notifications, responses
    const exchange: Exchange = {
      transport: this,
      message: message,
      generation: this.sessionGeneration,
      modernVersion: this.modernVersion,
      reply: deferred(),
    };
    this.script.sent.push(exchange);
    return exchange.reply.promise;
  }

  beginSession(): void {
    this.sessionGeneration += 1;
    this.hasSession = false;
    this.modernVersion = undefined;
  }

  completeSession(): void {
    this.hasSession = true;
  }

  /** A modern exchange has no session to lose; it counts as a new one (the generation moves). */
  beginModern(protocolVersion: string): void {
    this.sessionGeneration += 1;
    this.hasSession = true;
    this.modernVersion = protocolVersion;
  }

  openListener(lastEventId: string | undefined): Promise<ListenerOpening> {
    const listener: ListenerExchange = { transport: this, lastEventId, open: deferred(), read: deferred() };
    this.script.listeners.push(listener);
    return listener.open.promise;
  }

  /** Like the HTTP transport: no session id (the modern wire), no DELETE to wait for. */
  terminateSession(): Promise<void> {
    if (this.modernVersion !== undefined) return Promise.resolve();
    this.terminateCalled = true;
    return this.terminating.promise;
  }

  close(): Promise<void> {
    this.dead = true;
    return Promise.resolve();
  }

  /** The transport dies on its own (a stdio child exits, the legacy SSE stream closes). */
  die(error: Error): void {
    this.dead = true;
    this.sink.onClosed(error);
  }
}
