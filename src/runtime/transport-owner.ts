/**
 * The life of one server's transport: opened (or reused) when the connection machine connects,
 * replaced by a legacy one after a fallback, replaced by a new one after a reconnect request, and
 * closed on close. The server runtime extends this and is the transports' sink.
 */
import type { ConfiguredTransport } from '../../machines/connection.machine.js';
import type { ServerConfig } from '../config/server-config.js';
import { ConnectionClosedError, FallbackFailedError } from '../core/errors.js';
import { createTransport, type TransportFactory } from '../transports/factory/create-transport.js';
import type { ServerTelemetry } from '../observe/telemetry/server-telemetry.js';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';
import type { Timers, Transport, TransportKind, TransportSink } from '../transports/transport.js';
import type { Authorization } from './authorization.js';

export abstract class TransportOwner implements TransportSink {
  transport: Transport | undefined;
  /** Built once an OpenTelemetry SDK is registered (observe/telemetry); undefined costs nothing. */
  telemetry: ServerTelemetry | undefined = undefined;
  /** The last failure of a connection attempt, typed (the machine keeps only its text). */
  lastFailure: Error | undefined;
  /** A handshake succeeded once: from then on a stdio process that dies is restarted, not failed. */
  protected connectedBefore = false;
  /** The connection is closing or closed: a transport still opening is closed at once. */
  protected closing = false;
  /** A transport being replaced or opened (see replaceTransport). */
  private opening: Promise<Transport> | undefined;
  /** `handle.reconnect()`: the next connect opens a new transport even if this one looks fine. */
  private replaceNext = false;

  protected constructor(
    readonly name: string,
    readonly config: ServerConfig,
    readonly authorization: Authorization,
    /** The timers of this server's transports and waits (tests pass hand-fired ones). */
    readonly timers: Timers | undefined,
    /** Builds the transports; only the runtime model suite passes another (a scripted transport). */
    private readonly makeTransport: TransportFactory = createTransport,
  ) {}

  abstract onMessage(message: JsonRpcMessage): void;
  abstract isAwaiting(id: string | number): boolean;
  abstract onStreamError(error: Error): void;
  abstract onClosed(error: Error): void;

  get transportKind(): TransportKind | undefined {
    return this.transport?.kind;
  }

  /** The connection machine's `connect transport` actor. */
  connectTransport(kind: ConfiguredTransport): Promise<{ transport: TransportKind }> {
    return this.recordFailure(this.openTransport(kind));
  }

  /** The machine's `replace transport` action: the next connect starts from a new transport. */
  replaceTransport(): void {
    this.replaceNext = true;
  }

  /** The sse-fallback probe: replaces the refused Streamable HTTP transport with a legacy one. */
  async openLegacyTransport(): Promise<void> {
    const previous = this.transport;
    this.transport = undefined;
    await previous?.close().catch(() => {});
    try {
      const transport = this.makeTransport(
        this.config,
        { sink: this, auth: this.authorization.provider, timers: this.timers },
        'sse',
      );
      await transport.open();
      this.transport = transport;
    } catch (error) {
      const first = this.lastFailure;
      this.lastFailure = new FallbackFailedError(first, error, { server: this.name });
      throw error;
    }
  }

  protected async recordFailure<T>(attempt: Promise<T>): Promise<T> {
    try {
      return await attempt;
    } catch (error) {
      this.authorization.remember(error);
      this.lastFailure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }

  /** Ends the session (DELETE) and releases the transport; waits for one still being opened. */
  protected async closeTransport(): Promise<void> {
    this.closing = true;
    await this.opening?.catch(() => {});
    const transport = this.transport;
    this.transport = undefined;
    if (!transport) return;
    await transport.terminateSession();
    await transport.close();
  }

  private async openTransport(kind: ConfiguredTransport): Promise<{ transport: TransportKind }> {
    const wanted = kind === 'auto' ? 'http' : kind;
    // A stdio process is the session: a reconnect (keepalive misses, a failed handshake) needs a new one.
    const reuse = this.transport?.isOpen && this.transport.kind === wanted && wanted !== 'stdio' && !this.replaceNext;
    if (!reuse) {
      const endSession = this.replaceNext;
      this.replaceNext = false;
      const opening = this.openNew(wanted, endSession);
      this.opening = opening;
      try {
        this.transport = await opening;
      } finally {
        if (this.opening === opening) this.opening = undefined;
      }
    }
    return { transport: this.transport!.kind };
  }

  /**
   * Closes the old transport (ending its session first when it may still be alive: a reconnect
   * request) and opens a new one; closeTransport waits for this, so a close never leaves one
   * running (a stdio child in particular).
   */
  private async openNew(kind: TransportKind, endSession: boolean): Promise<Transport> {
    const previous = this.transport;
    this.transport = undefined;
    if (endSession) await previous?.terminateSession().catch(() => {});
    await previous?.close().catch(() => {});
    await this.authorization.ready(); // stored credentials go out with the first request
    const transport = this.makeTransport(
      this.config,
      {
        sink: this,
        auth: this.authorization.provider,
        timers: this.timers,
        hasConnectedBefore: () => this.connectedBefore,
      },
      kind,
    );
    await transport.open();
    if (kind === 'stdio' && this.connectedBefore) this.telemetry?.onStdioRestart();
    if (this.closing) {
      await transport.close().catch(() => {});
      throw new ConnectionClosedError('the connection was closed while opening', { server: this.name });
    }
    return transport;
  }
}
