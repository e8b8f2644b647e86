/**
 * Composition root: validates the config, builds one runtime per server, provides the machines
 * with their effects, and exposes the supervisor and per-server handles. Users never touch
 * XState; the optional `inspect` observer sees the whole actor tree.
 */
import { createActor, type Actor, type ActorRefFrom, type InspectionEvent, type Observer } from 'xstate';
import { DEFAULT_RESTART_POLICY } from '../machines/restart-policy.js';
import type { SupervisedServer } from '../machines/supervisor.machine.js';
import { type providedConnectionMachine, providedSupervisorMachine } from './runtime/actors/connection-actors.js';
import { registerRuntimes } from './runtime/actors/runtime-registry.js';
import { parseServerConfig, parseServers, secretSources, type ServerConfig, type ServerConfigInput } from './config.js';
import { Emitter } from './observe/emitter.js';
import { logTransition, silentLogger, type Logger } from './observe/logger.js';
import { createSanitizer, type Sanitizer } from './observe/inspection.js';
import { secretsOf } from './observe/redact.js';
import { ConfigError, ConnectionClosedError } from './errors.js';
import type { JsonRpcNotification } from './protocol/jsonrpc.js';
import type { Implementation } from './protocol/messages.js';
import type { Progress } from './protocol/pending.js';
import type { ClientHandlers, ElicitationOptions } from './runtime/server-requests.js';
import { ServerHandle, type HandleOwner, type ServerStatus } from './server-handle.js';
import { ServerRuntime, type LogMessage, type RuntimeEvents, type TransitionEvent } from './runtime/server-runtime.js';
import type { Timers } from './transports/transport.js';
import { VERSION } from './version.js';
import { pinOf } from './protocol/era.js';

export interface SupervisorOptions {
  servers: Record<string, ServerConfigInput>;
  clientInfo?: Implementation;
  /** Server-to-client requests: elicitation, sampling, roots. Only these are advertised. */
  handlers?: ClientHandlers;
  /** `{ applyDefaults: true }` fills accepted elicitation forms with the schema's defaults (SEP-1034). */
  elicitation?: ElicitationOptions;
  /** An XState inspection observer (e.g. from @statelyai/inspect); sees every actor, through sanitized copies of the events. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** A pino-compatible logger for transitions, restarts, fallbacks and stream warnings; silent by default. */
  logger?: Logger;
  /** Jitter source for restart backoff (tests pass a fixed one). */
  random?: () => number;
  /** Timers for stream reconnect delays (tests pass a simulated clock). */
  timers?: Timers;
}

export interface SupervisorEvents extends Record<string, unknown> {
  transition: TransitionEvent;
  notification: { server: string; notification: JsonRpcNotification };
  progress: Progress & { server: string };
  log: LogMessage & { server: string };
  listChanged: { server: string; list: 'tools' | 'resources' | 'prompts' };
}

const DEFAULT_CLIENT_INFO: Implementation = { name: 'mcp-supervisor', version: VERSION };

type ConnectionRef = ActorRefFrom<typeof providedConnectionMachine>;

export class Supervisor implements HandleOwner {
  private readonly runtimes = new Map<string, ServerRuntime>();
  private readonly handles = new Map<string, ServerHandle>();
  private readonly configs = new Map<string, ServerConfig>();
  private readonly events = new Emitter<SupervisorEvents>();
  private sanitizer: Sanitizer | undefined;
  private actor: Actor<typeof providedSupervisorMachine> | undefined;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private rootError: Error | undefined;

  constructor(private readonly options: SupervisorOptions) {
    for (const config of parseServers(options.servers)) this.adopt(config);
    this.updateSanitizer();
  }

  /** Starts every server; resolves once each is ready or has failed its first attempt (it keeps retrying). */
  start(): Promise<void> {
    this.starting ??= this.launch();
    return this.starting;
  }

  /**
   * Adds a server at run time (validated like the configured ones; a name in use is a
   * ConfigError). It starts at once if the supervisor has started. Returns its handle.
   */
  add(name: string, config: ServerConfigInput): ServerHandle {
    if (this.handles.has(name)) throw new ConfigError(`invalid configuration: servers.${name}: the name is in use`);
    if (this.stopping) throw new ConnectionClosedError('the supervisor is stopping', { server: name });
    const handle = this.adopt(parseServerConfig(name, config));
    this.updateSanitizer();
    if (this.actor) {
      this.runtimes.get(name)!.system = this.actor.system;
      this.actor.send({ type: 'ADD_SERVER', server: supervisedServer(this.configs.get(name)!) });
    }
    return handle;
  }

  /** Closes a server (DELETE) and forgets it; its handle rejects every request with ConnectionClosedError. */
  async remove(name: string): Promise<void> {
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new ConfigError(`unknown server '${name}' (configured: ${this.names()})`);
    this.handles.delete(name);
    this.configs.delete(name);
    this.updateSanitizer();
    const ref = this.connection(name);
    if (ref && this.actor) {
      const closed = waitForEnd(ref);
      this.actor.send({ type: 'REMOVE_SERVER', server: name });
      await closed;
    }
    runtime.rejectWaitingRequests('the server was removed');
    await runtime.closeSession().catch(() => {});
    this.runtimes.delete(name);
  }

  private adopt(config: ServerConfig): ServerHandle {
    const runtime = new ServerRuntime({
      config,
      clientInfo: this.options.clientInfo ?? DEFAULT_CLIENT_INFO,
      handlers: this.options.handlers,
      elicitation: this.options.elicitation,
      timers: this.options.timers,
    });
    const server = config.name;
    const logger = this.options.logger ?? silentLogger;
    // One hook per server, not a subscription per event: every server pays for it while idle.
    runtime.events.forward((event, payload) => this.relay(server, logger, event, payload));
    const handle = new ServerHandle(runtime, this);
    this.runtimes.set(server, runtime);
    this.handles.set(server, handle);
    this.configs.set(server, config);
    return handle;
  }

  /** Inspection events are sanitized by the secrets of every server configured now. */
  private updateSanitizer(): void {
    if (this.options.inspect)
      this.sanitizer = createSanitizer(secretsOf([...this.configs.values()].map(secretSources)));
  }

  private async launch(): Promise<void> {
    const lookup = (name: string) => {
      const runtime = this.runtimes.get(name);
      if (!runtime) throw new Error(`unknown server '${name}'`);
      return runtime;
    };
    const actor = createActor(providedSupervisorMachine, {
      input: { servers: [...this.configs.values()].map(supervisedServer), random: this.options.random },
      inspect: (event) => this.inspect(event),
    });
    this.actor = actor;
    registerRuntimes(actor.system, lookup);
    actor.subscribe({
      error: (error) => {
        // The root must never die unobserved; every server is failed with the cause.
        this.rootError = error instanceof Error ? error : new Error(String(error));
        for (const runtime of this.runtimes.values())
          runtime.pending.failAll(
            new ConnectionClosedError(`supervisor crashed: ${this.rootError.message}`, { server: runtime.name }),
          );
      },
    });
    for (const runtime of this.runtimes.values()) runtime.system = actor.system;
    actor.start();
    await Promise.all([...this.runtimes.values()].map((runtime) => runtime.firstOutcome));
  }

  /** Observes: transitions become events (nothing is started or decided here), the user's inspector sees sanitized copies. */
  private inspect(event: InspectionEvent): void {
    // Microsteps show transient states (expired) too; the snapshot event covers the start.
    if (event.type === '@xstate.microstep' || event.type === '@xstate.snapshot') {
      const systemId = (event.actorRef as { systemId?: string }).systemId;
      const runtime = systemId === undefined ? undefined : this.runtimes.get(systemId);
      const snapshot = event.snapshot as { status?: string; value?: unknown };
      if (runtime && event.actorRef !== this.actor && snapshot.status !== 'error') {
        runtime.onTransition(snapshot.value, event.event);
      }
    }
    const user = this.options.inspect;
    if (!user || !this.sanitizer) return;
    const safe = this.sanitizer.event(event);
    if (typeof user === 'function') user(safe);
    else user.next?.(safe);
  }

  /** Closes every session (DELETE) and stops all actors. Pending requests fail with ConnectionClosedError. */
  stop(): Promise<void> {
    this.stopping ??= this.halt();
    return this.stopping;
  }

  private async halt(): Promise<void> {
    const actor = this.actor;
    if (!actor) {
      for (const runtime of this.runtimes.values()) runtime.rejectWaitingRequests('the supervisor was stopped');
      return;
    }
    // No waiting for start(): a stop during connect ends the attempt (start() then resolves too).
    await new Promise<void>((resolve) => {
      const subscription = actor.subscribe({ complete: () => resolve(), error: () => resolve() });
      if (actor.getSnapshot().status !== 'active') {
        subscription.unsubscribe();
        resolve();
        return;
      }
      actor.send({ type: 'STOP' });
    });
    actor.stop();
  }

  server(name: string): ServerHandle {
    const handle = this.handles.get(name);
    if (!handle) throw new ConfigError(`unknown server '${name}' (configured: ${this.names()})`);
    return handle;
  }

  private names(): string {
    return [...this.handles.keys()].join(', ');
  }

  status(): Record<string, ServerStatus> {
    const result: Record<string, ServerStatus> = {};
    for (const [name, handle] of this.handles) result[name] = handle.status();
    return result;
  }

  on<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  off<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): void {
    this.events.off(event, listener);
  }

  /** The typed error of the server's last failed attempt, if any. */
  lastFailureOf(name: string): Error | undefined {
    return this.runtimes.get(name)?.lastFailure;
  }

  /** A server's event, as the supervisor's own (tagged with the server) and as log entries. */
  private relay<K extends keyof RuntimeEvents>(
    server: string,
    logger: Logger,
    event: K,
    payload: RuntimeEvents[K],
  ): void {
    switch (event) {
      case 'transition': {
        const transition = payload as RuntimeEvents['transition'];
        logTransition(logger, transition, this.restartsOf(server));
        this.events.emit('transition', transition);
        break;
      }
      case 'warning': {
        const error = payload as RuntimeEvents['warning'];
        logger.warn({ event: 'stream warning', server, error: error.message }, `${server}: ${error.message}`);
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
      case 'listChanged':
        this.events.emit('listChanged', { server, list: (payload as RuntimeEvents['listChanged']).list });
        break;
    }
  }

  /** How many times the supervisor restarted this server's connection. */
  restartsOf(name: string): number {
    return this.actor?.getSnapshot().context.restarts[name]?.total ?? 0;
  }

  /** Closes one server (what its handle's `close()` does); the others go on. */
  async closeServer(name: string): Promise<void> {
    const ref = this.connection(name);
    if (!ref || ref.getSnapshot().status !== 'active') return;
    const closed = waitForEnd(ref);
    ref.send({ type: 'CLOSE' });
    await closed;
  }

  /** `handle.reconnect()`: resolves when the connection serves again, or went down once more. */
  async reconnectServer(name: string): Promise<void> {
    const runtime = this.runtimes.get(name);
    const ref = this.connection(name);
    if (!runtime || !ref || ref.getSnapshot().status !== 'active' || runtime.state() === 'closing') {
      throw new ConnectionClosedError('cannot reconnect: the connection is closed', { server: name });
    }
    const attempt = runtime.nextAttempt();
    ref.send({ type: 'RECONNECT' });
    await attempt;
  }

  /** A server's connection actor (its systemId is the server's name). */
  private connection(name: string): ConnectionRef | undefined {
    return this.actor?.system.get(name) as ConnectionRef | undefined;
  }
}

/** Resolves when an actor has ended (closed, or crashed). */
function waitForEnd(ref: ConnectionRef): Promise<void> {
  return new Promise<void>((resolve) => {
    const subscription = ref.subscribe({ complete: () => resolve(), error: () => resolve() });
    if (ref.getSnapshot().status !== 'active') {
      subscription.unsubscribe();
      resolve();
    }
  });
}

/** What the supervisor machine needs of a server: its name, restart policy and connection input. */
function supervisedServer(config: ServerConfig): SupervisedServer {
  return {
    name: config.name,
    restart: config.restart ?? DEFAULT_RESTART_POLICY,
    connection: {
      server: config.name,
      transport: config.type,
      listenerOpenTimeoutMs: Math.min(config.requestTimeoutMs, 10_000),
      provenAfterMs: config.restart.provenAfterMs,
      keepalive: config.keepalive,
      revive: config.revive,
      era: pinOf(config.protocolVersion).era,
    },
  };
}

export function createSupervisor(options: SupervisorOptions): Supervisor {
  return new Supervisor(options);
}
