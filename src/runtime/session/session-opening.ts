/**
 * How a session opens: the era probe and modern discovery (`discovering`), or the `initialize`
 * handshake (`initializing`, `reinitializing`). Each returns the session's facts (session-facts.ts),
 * which the context adopts once; then the new session gets what the old one had (session-state.ts).
 * Also here: what the client declares of itself on every session (its capabilities, its info).
 */
import type { DiscoverVerdict, SessionInfo, TransportOpened } from '../../../machines/connection.machine.js';
import { probeTimeoutMs } from '../../protocol/deadlines.js';
import { ConnectionClosedError, ProtocolError } from '../../core/errors.js';
import { startOperation } from '../../observe/telemetry/server-telemetry.js';
import { ModernEnvelope, pinOf, type VersionPin } from '../../protocol/era.js';
import type { ClientCapabilities, Implementation } from '../../protocol/messages.js';
import { takesToolTasks, withTasksExtension } from '../../protocol/task-capabilities.js';
import type { Transport } from '../../transports/transport.js';
import type { Probes } from '../probes/probes.js';
import type { RequestPath } from '../requests/request-path.js';
import type { ReadOnlyContext, ServerContext } from '../context/server-context.js';
import { withoutRootsListChanged } from './client-capabilities.js';
import { discover } from './discover.js';
import { wrongPath } from './wrong-path.js';
import { handshake } from './handshake.js';
import { whileBusy } from './handshake-busy.js';
import type { SessionFacts } from '../context/session-facts.js';
import type { RestoreReport } from '../context/session-state.js';
import { EraMemory } from './era-memory.js';

/** The context as the opening holds it: the session's facts are its to write (and adopt), nothing else. */
type OpeningContext = ReadOnlyContext & Pick<ServerContext, 'facts' | 'adopt'>;

export class SessionOpening {
  /** What `protocolVersion` in the config asks for. */
  private readonly pin: VersionPin;
  /** The era verdict and the opt-in session kept in the store (nothing without a store). */
  private readonly memory: EraMemory | undefined;

  constructor(
    private readonly context: OpeningContext,
    private readonly requests: RequestPath,
    private readonly probes: Probes,
    private readonly clientInfo: Implementation,
    /** What the client declares: its handlers' capabilities and the extra ones it was given. */
    readonly capabilities: ClientCapabilities,
  ) {
    this.pin = pinOf(context.config.protocolVersion);
    this.memory = context.stored && new EraMemory(context, context.stored, probes, this.pin.era === 'auto');
  }

  /**
   * `connecting`: the transport is open; a fresh era verdict from the store comes with it (none
   * without a store). The store is read beside the opening (a spawned process, a store's first
   * connection), not after it.
   */
  withStoredEra(opening: Promise<TransportOpened>): Promise<TransportOpened> {
    const memory = this.memory;
    if (!memory) return opening;
    const reading = memory.storedEra();
    reading.catch(() => undefined); // an opening that fails first leaves the read unawaited
    return opening.then(async (opened) => {
      if (opened.transport === 'sse') return (await reading.catch(() => undefined), memory.unused(), opened);
      const storedEra = await reading;
      return storedEra ? { ...opened, storedEra } : opened;
    });
  }

  /** `discovering`: the era probe; a modern server's discovery stands for its session. */
  async discover(): Promise<DiscoverVerdict> {
    const context = this.context;
    const transport = context.transport;
    if (!transport)
      throw new ConnectionClosedError('no transport: the connection is not open', { server: context.name });
    context.facts = undefined;
    const timeoutMs = probeTimeoutMs(context.config);
    const verdict = await discover({
      server: context.name,
      transport,
      pin: this.pin,
      // 429/503: the server asks to wait (handshake-busy.ts), it says nothing about the era.
      // Within the request timeout: a server busy for longer fails the attempt (connect() settles).
      send: (version) =>
        whileBusy(
          context,
          this.requests.limits,
          (leftMs) =>
            this.probes.sendPastGate(
              'server/discover',
              new ModernEnvelope(version, this.modernCapabilities(), this.clientInfo).wrap(undefined),
              Math.min(timeoutMs, leftMs!),
            ),
          context.config.requestTimeoutMs,
        ),
    });
    if (verdict.era === 'modern') {
      this.memory?.learned(verdict.session);
      const replacing = context.connectedBefore;
      context.adopt(this.modernFacts(verdict.session));
      if (replacing) context.outputSchemas?.invalidate(); // a restarted server may declare other tools
      // No session-state restore here: the modern era has no session to carry state and no
      // `logging/setLevel`; the resource subscriptions travel in the listener's
      // `subscriptions/listen` (listen.ts), and the roots capability in every request's `_meta`.
    }
    return verdict;
  }

  private modernFacts(session: SessionInfo): SessionFacts {
    const envelope = new ModernEnvelope(
      session.protocolVersion,
      this.modernCapabilities(),
      this.clientInfo,
      this.context.savedSessionState?.loggingLevel,
    );
    return { envelope, runsToolTasks: false };
  }

  /** `initializing`, `reinitializing`: the handshake, then the session state restored on the new session. */
  async initialize(): Promise<SessionInfo> {
    const context = this.context;
    const transport = context.transport;
    if (!transport)
      throw new ConnectionClosedError('no transport: the connection is not open', { server: context.name });
    context.facts = undefined;
    const resumed = this.memory && (await this.memory.resumeSession(transport));
    if (resumed) {
      context.adopt(legacyFacts(resumed));
      return resumed;
    }
    // Awaited here, not in a helper: an attempt's failure must be recorded (TransportSlot.recordFailure)
    // before the machine's outcome lets `connect()` read it.
    let session: SessionInfo;
    try {
      const attempt = handshake({
        server: context.name,
        transport,
        protocolVersion: this.pin.era === 'legacy' ? this.pin.version : undefined,
        capabilities: this.advertisedCapabilities(),
        clientInfo: this.clientInfo,
        initialize: (params) =>
          whileBusy(
            context,
            this.requests.limits,
            (leftMs) => this.sendInitialize(params, leftMs!),
            context.config.requestTimeoutMs,
          ),
      });
      // A refused era verdict is dropped from the store (era-memory.ts).
      session = await (this.memory ? this.memory.checked(attempt) : attempt);
    } catch (error) {
      // `type: 'http'` has no fallback: its one first handshake answered 404 is a wrong URL (wrong-path.ts).
      throw (context.config.type === 'http' && wrongPath(context, [error])) || error;
    }
    this.memory?.learned(session, transport);
    const replacing = context.connectedBefore;
    context.adopt(legacyFacts(session));
    if (replacing) context.outputSchemas?.invalidate(); // a restarted server may declare other tools
    await this.restoreSessionState(transport, session.capabilities, replacing);
    return session;
  }

  /** The `initialize` request: through the pending requests and the request path, never cancelled. */
  private sendInitialize(params: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    const context = this.context;
    const operation = startOperation(context.observed, 'initialize', params);
    const { request, promise } = context.pending.create('initialize', operation?.params ?? params, {
      timeoutMs,
      uncancellable: true,
    });
    if (operation) context.telemetry?.track(request, promise, operation);
    this.requests.dispatch(request, true);
    return promise;
  }

  /** A `roots` handler was given: every session advertises the roots capability. */
  advertisesRoots(): boolean {
    return this.capabilities.roots !== undefined;
  }

  /** Roots set before the first handshake are advertised even without a `roots` handler. */
  private advertisedCapabilities(): ClientCapabilities {
    if (this.capabilities.roots || this.context.savedSessionState?.roots === undefined) return this.capabilities;
    return { ...this.capabilities, roots: { listChanged: true } };
  }

  /** Modern requests declare the tasks extension (callTool handles a task as an answer), and no `roots.listChanged`. */
  private modernCapabilities(): ClientCapabilities {
    return withTasksExtension(withoutRootsListChanged(this.advertisedCapabilities()));
  }

  /** The new session gets what the old one had (session-state.ts), before held requests are released. */
  private async restoreSessionState(
    transport: Transport,
    capabilities: Record<string, unknown>,
    replacing: boolean,
  ): Promise<void> {
    const context = this.context;
    const state = context.savedSessionState;
    if (!state) return;
    const timeoutMs = probeTimeoutMs(context.config);
    const report = await state.restore(
      {
        capabilities,
        request: (method, params) => this.probes.sendPastGate(method, params, timeoutMs, false),
        notify: (method) => transport.send({ jsonrpc: '2.0', method }),
      },
      replacing,
    );
    if (!report) return;
    for (const { what, error } of report.failed) {
      const text = context.redact(`could not restore the ${what} on the new session: ${error}`);
      context.events.emit('warning', new ProtocolError(text, { server: context.name }));
    }
    context.events.emit('sessionRestored', report satisfies RestoreReport);
  }
}

/** A 2025-era session: no envelope; `tools/call` may run as a task (2025-11-25 `tasks.requests.tools.call`). */
function legacyFacts(session: SessionInfo): SessionFacts {
  return { envelope: undefined, runsToolTasks: takesToolTasks(session.capabilities) };
}
