/**
 * The supervisor's events: every server's events, tagged with the server, for the supervisor's
 * listeners, and what the catalog and the log need to hear of them (a transition comes with the
 * lifecycle facts of its move: runtime/lifecycle-facts.ts).
 */
import type { CatalogSignal } from '../catalog/catalog.js';
import { Emitter } from '../core/emitter.js';
import { StoreUnavailableError } from '../store/errors.js';
import { CallObserver, type CallEvent } from '../observe/calls.js';
import { logMove, silentLogger, type Logger } from '../observe/logger.js';
import type { JsonRpcNotification } from '../protocol/jsonrpc.js';
import type { Progress } from '../protocol/pending.js';
import type {
  BackpressureEvent,
  LogMessage,
  ResourceUpdated,
  RuntimeEvents,
  TransitionEvent,
} from '../runtime/context/events.js';
import { factsOfMove } from '../runtime/lifecycle-facts.js';
import type { ServerContext } from '../runtime/context/server-context.js';

export interface SupervisorEvents extends Record<string, unknown> {
  transition: TransitionEvent;
  notification: { server: string; notification: JsonRpcNotification };
  progress: Progress & { server: string };
  log: LogMessage & { server: string };
  listChanged: { server: string; list: 'tools' | 'resources' | 'prompts' };
  resourceUpdated: ResourceUpdated & { server: string };
  elicitationComplete: { server: string; elicitationId: string };
  /** A server answered 429/503: a Retry-After window opened (`hold`) or ended (`resume`). */
  backpressure: BackpressureEvent;
  /** A request settled: method, tool, duration, outcome, sends (observed only while someone listens). */
  call: CallEvent;
}

/** What the relay follows: a server's runtime (its context's `calls` slot is written here alone). */
interface Followed {
  readonly context: ServerContext;
}

/** Starts or stops observing a server's calls (observe/calls.ts): only while `call` has listeners. */
function observeCalls(runtime: Followed, on: boolean): void {
  const context = runtime.context;
  if (!on) {
    context.calls?.stop();
    context.calls = undefined;
  } else
    context.calls ??= new CallObserver(
      context.name,
      context.pending,
      (call) => context.events.emit('call', call),
      (text) => context.redact(text),
    );
}

export class SupervisorEventRelay {
  private readonly events = new Emitter<SupervisorEvents>();

  /** The supervisor: read when an event comes, not here (its catalog is built on first use). */
  constructor(
    private readonly owner: {
      observeCatalog(signal: CatalogSignal): void;
      restartsOf(name: string): number;
    },
    /** The runtimes now: their calls are observed while `call` has listeners. */
    private readonly runtimes: () => Iterable<Followed>,
  ) {}

  on<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): () => void {
    const off = this.events.on(event, listener);
    if (event !== 'call') return off;
    this.observeCalls();
    return () => this.off(event, listener);
  }

  off<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): void {
    this.events.off(event, listener);
    if (event === 'call') this.observeCalls();
  }

  private observeCalls(): void {
    const on = this.events.hasListeners('call');
    for (const runtime of this.runtimes()) observeCalls(runtime, on);
  }

  /** Takes every event of one server's runtime from now on. */
  follow(server: string, runtime: Followed, logger: Logger): void {
    // One hook per server, not a subscription per event: every server pays for it while idle.
    runtime.context.events.forward((event, payload) => this.relay(server, runtime, logger, event, payload));
    if (this.events.hasListeners('call')) observeCalls(runtime, true);
  }

  /** A server's event, as the supervisor's own (tagged with the server) and as log entries. */
  private relay<K extends keyof RuntimeEvents>(
    server: string,
    runtime: object,
    logger: Logger,
    event: K,
    payload: RuntimeEvents[K],
  ): void {
    switch (event) {
      case 'transition': {
        const transition = payload as RuntimeEvents['transition'];
        const facts = factsOfMove(runtime);
        // The default logger hears nothing: no entry built, no restart count read (every move of 10,000 servers).
        if (logger !== silentLogger) logMove(logger, transition, facts, this.owner.restartsOf(server));
        this.owner.observeCatalog({ type: 'transition', transition, facts });
        this.events.emit('transition', transition);
        break;
      }
      case 'warning': {
        const error = payload as RuntimeEvents['warning'];
        // A store that cannot be reached is said once per outage (the credentials in hand go on working).
        const kind = error instanceof StoreUnavailableError ? 'store unavailable' : 'stream warning';
        logger.warn({ event: kind, server, error: error.message }, `${server}: ${error.message}`);
        break;
      }
      case 'backpressure': {
        const pressure = payload as RuntimeEvents['backpressure'];
        const what =
          pressure.phase === 'hold'
            ? `HTTP ${pressure.status}: nothing is sent for ${pressure.waitMs} ms (${pressure.waiting} waiting)`
            : `the Retry-After window ended: ${pressure.waiting} waiting requests go`;
        logger[pressure.phase === 'hold' ? 'warn' : 'info'](
          { event: 'backpressure', ...pressure },
          `${server}: ${what}`,
        );
        this.events.emit('backpressure', pressure);
        break;
      }
      case 'notification':
        this.events.emit('notification', { server, notification: payload as RuntimeEvents['notification'] });
        break;
      case 'progress':
        this.events.emit('progress', { ...(payload as RuntimeEvents['progress']), server });
        break;
      case 'log':
        this.events.emit('log', { ...(payload as RuntimeEvents['log']), server });
        break;
      case 'listChanged': {
        const list = (payload as RuntimeEvents['listChanged']).list;
        if (list === 'tools') this.owner.observeCatalog({ type: 'listChanged', server });
        this.events.emit('listChanged', { server, list });
        break;
      }
      case 'resourceUpdated':
        this.events.emit('resourceUpdated', { ...(payload as RuntimeEvents['resourceUpdated']), server });
        break;
      case 'elicitationComplete':
        this.events.emit('elicitationComplete', { ...(payload as RuntimeEvents['elicitationComplete']), server });
        break;
      case 'call':
        this.events.emit('call', payload as RuntimeEvents['call']);
        break;
    }
  }
}
