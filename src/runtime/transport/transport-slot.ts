/**
 * The life of one server's transport, kept in the context's slot: opened (or reused) when the
 * connection machine connects, replaced by a legacy one after a fallback, replaced by a new one
 * after a reconnect request, and closed on close. The runtime is every transport's sink.
 */
import type { ConfiguredTransport } from '../../../machines/connection.machine.js';
import { ConnectionClosedError, FallbackFailedError } from '../../core/errors.js';
import { wrongPath } from '../session/wrong-path.js';
import { createTransport, type TransportFactory } from '../../transports/factory/create-transport.js';
import type { Transport, TransportKind, TransportSink } from '../../transports/transport.js';
import type { ReadOnlyContext, ServerContext } from '../context/server-context.js';

/** The context as the slot holds it: the transport and `closing` are its to write, nothing else. */
type SlotContext = ReadOnlyContext & Pick<ServerContext, 'transport' | 'closing'>;

export class TransportSlot {
  /** The last failure of a connection attempt, typed (the machine keeps only its text). */
  lastFailure: Error | undefined = undefined;
  /** A transport being replaced or opened (see replaceTransport). */
  private opening: Promise<Transport> | undefined = undefined;
  /** `handle.reconnect()`: the next connect opens a new transport even if this one looks fine. */
  private replaceNext = false;

  constructor(
    private readonly context: SlotContext,
    /** Where the transports report (the runtime). */
    private readonly sink: TransportSink,
    /** Builds the transports; only the runtime model suite passes another (a scripted transport). */
    private readonly makeTransport: TransportFactory = createTransport,
  ) {}

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
    const context = this.context;
    const previous = context.transport;
    context.transport = undefined;
    await previous?.close().catch(() => {});
    try {
      const transport = this.makeTransport(
        context.config,
        { sink: this.sink, auth: context.authorization.provider, timers: context.timers },
        'sse',
      );
      await transport.open();
      context.transport = transport;
    } catch (error) {
      const first = this.lastFailure;
      // 404 to both first handshakes: a wrong URL, not an outage (session/wrong-path.ts).
      const notFound = wrongPath(context, [first, error]);
      this.lastFailure = notFound ?? new FallbackFailedError(first, error, { server: context.name });
      throw notFound ?? error;
    }
  }

  /** An attempt's failure is remembered typed (and shown to the authorization, which may fix it). */
  async recordFailure<T>(attempt: Promise<T>): Promise<T> {
    try {
      return await attempt;
    } catch (error) {
      this.context.authorization.remember(error);
      this.lastFailure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }

  /** Ends the session (DELETE) and releases the transport; waits for one still being opened. */
  async closeTransport(): Promise<void> {
    const context = this.context;
    context.closing = true;
    await this.opening?.catch(() => {});
    const transport = context.transport;
    context.transport = undefined;
    if (!transport) return;
    // `resumeSession`: the session outlives the process, for the next one to take up (era-memory.ts).
    if (!(context.config.resumeSession && context.stored)) await transport.terminateSession();
    await transport.close();
  }

  private async openTransport(kind: ConfiguredTransport): Promise<{ transport: TransportKind }> {
    const context = this.context;
    const wanted = kind === 'auto' ? 'http' : kind;
    // A stdio process is the session: a reconnect (keepalive misses, a failed handshake) needs a new one.
    const current = context.transport;
    const reuse = current?.isOpen && current.kind === wanted && wanted !== 'stdio' && !this.replaceNext;
    if (!reuse) {
      const endSession = this.replaceNext;
      this.replaceNext = false;
      const opening = this.openNew(wanted, endSession);
      this.opening = opening;
      try {
        context.transport = await opening;
      } catch (error) {
        // `type: 'sse'`: its stream refused with 404 before any session is a wrong URL (wrong-path.ts).
        throw (kind === 'sse' && wrongPath(context, [error])) || error;
      } finally {
        if (this.opening === opening) this.opening = undefined;
      }
    }
    return { transport: context.transport!.kind };
  }

  /**
   * Closes the old transport (ending its session first when it may still be alive: a reconnect
   * request) and opens a new one; closeTransport waits for this, so a close never leaves one
   * running (a stdio child in particular).
   */
  private async openNew(kind: TransportKind, endSession: boolean): Promise<Transport> {
    const context = this.context;
    const previous = context.transport;
    context.transport = undefined;
    if (endSession) await previous?.terminateSession().catch(() => {});
    await previous?.close().catch(() => {});
    await context.authorization.ready(); // stored credentials go out with the first request
    const transport = this.makeTransport(
      context.config,
      {
        sink: this.sink,
        auth: context.authorization.provider,
        timers: context.timers,
        hasConnectedBefore: () => context.connectedBefore,
      },
      kind,
    );
    await transport.open();
    if (kind === 'stdio' && context.connectedBefore) context.telemetry?.onStdioRestart();
    if (context.closing) {
      await transport.close().catch(() => {});
      throw new ConnectionClosedError('the connection was closed while opening', { server: context.name });
    }
    return transport;
  }
}
