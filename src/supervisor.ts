/**
 * Composition root: validates the config, builds one runtime per server, provides the machines
 * with their effects, and exposes the supervisor and per-server handles. Users never touch
 * XState; the optional `inspect` observer sees the whole actor tree.
 */
import { createActor, type Actor, type InspectionEvent, type Observer } from 'xstate';
import type { ConnectionContext } from '../machines/connection.machine.js';
import { DEFAULT_RESTART_POLICY } from '../machines/restart-policy.js';
import { supervisorMachine, type SupervisedServer } from '../machines/supervisor.machine.js';
import { providedConnectionMachine } from './actors/connection-actors.js';
import { registerRuntimes } from './actors/runtime-registry.js';
import { parseServers, type ServerConfigInput } from './config.js';
import { assertTransportSupported } from './transports/create-transport.js';
import { Emitter } from './emitter.js';
import { logTransition, silentLogger, type Logger } from './logger.js';
import { createSanitizer, configuredSecrets, type Sanitizer } from './sanitize.js';
import { ConfigError, ConnectionClosedError } from './protocol/errors.js';
import type { JsonRpcNotification } from './protocol/jsonrpc.js';
import type { Implementation } from './protocol/messages.js';
import type { Progress } from './protocol/pending.js';
import type { ClientHandlers, ElicitationOptions } from './server-requests.js';
import { ServerHandle, type HandleOwner, type ServerStatus } from './server-handle.js';
import { ServerRuntime, type LogMessage, type RuntimeEvents, type TransitionEvent } from './server-runtime.js';
import type { Timers } from './transports/transport.js';
import { VERSION } from './version.js';

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
/** Provided once: every supervisor shares the machine definitions (see actors/runtime-registry.ts). */
const providedSupervisorMachine = supervisorMachine.provide({ actors: { connection: providedConnectionMachine } });

export class Supervisor implements HandleOwner {
  private readonly runtimes = new Map<string, ServerRuntime>();
  private readonly handles = new Map<string, ServerHandle>();
  private readonly events = new Emitter<SupervisorEvents>();
  private readonly servers: SupervisedServer[];
  private readonly sanitizer: Sanitizer | undefined;
  private actor: Actor<typeof supervisorMachine> | undefined;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private rootError: Error | undefined;

  constructor(private readonly options: SupervisorOptions) {
    const configs = parseServers(options.servers);
    for (const config of configs) assertTransportSupported(config);
    if (options.inspect) this.sanitizer = createSanitizer(configuredSecrets(configs.map((config) => (config.kind === 'command' ? { ...config.headers, ...config.env } : config.headers))));
    this.servers = configs.map((config) => ({
      name: config.name,
      restart: config.restart ?? DEFAULT_RESTART_POLICY,
      connection: {
        server: config.name,
        transport: config.type,
        listenerOpenTimeoutMs: Math.min(config.requestTimeoutMs, 10_000),
        provenAfterMs: config.restart.provenAfterMs,
        keepalive: config.keepalive,
      },
    }));
    for (const config of configs) {
      const runtime = new ServerRuntime({
        config,
        clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
        handlers: options.handlers,
        elicitation: options.elicitation,
        timers: options.timers,
      });
      const server = config.name;
      const logger = options.logger ?? silentLogger;
      // One hook per server, not a subscription per event: every server pays for it while idle.
      runtime.events.forward((event, payload) => this.relay(server, logger, event, payload));
      this.runtimes.set(config.name, runtime);
      this.handles.set(config.name, new ServerHandle(runtime, this));
    }
  }

  /** Starts every server; resolves once each is ready or has failed its first attempt (it keeps retrying). */
  start(): Promise<void> {
    this.starting ??= this.launch();
    return this.starting;
  }

  private async launch(): Promise<void> {
    const lookup = (name: string) => {
      const runtime = this.runtimes.get(name);
      if (!runtime) throw new Error(`unknown server '${name}'`);
      return runtime;
    };
    const actor = createActor(providedSupervisorMachine, {
      input: { servers: this.servers, random: this.options.random },
      inspect: (event) => this.inspect(event),
    });
    this.actor = actor;
    registerRuntimes(actor.system, lookup);
    actor.subscribe({
      error: (error) => {
        // The root must never die unobserved; every server is failed with the cause.
        this.rootError = error instanceof Error ? error : new Error(String(error));
        for (const runtime of this.runtimes.values()) runtime.pending.failAll(new ConnectionClosedError(`supervisor crashed: ${this.rootError.message}`, { server: runtime.name }));
      },
    });
    for (const runtime of this.runtimes.values()) {
      runtime.sendToConnection = (event) => actor.system.get(runtime.name)?.send(event);
    }
    actor.start();
    await Promise.all([...this.runtimes.values()].map((runtime) => runtime.firstOutcome));
  }

  private inspect(event: InspectionEvent): void {
    // Microsteps show transient states (expired) too; the snapshot event covers the start.
    if (event.type === '@xstate.microstep' || event.type === '@xstate.snapshot') {
      const systemId = (event.actorRef as { systemId?: string }).systemId;
      const runtime = systemId === undefined ? undefined : this.runtimes.get(systemId);
      if (runtime && event.actorRef !== this.actor) {
        const snapshot = event.snapshot as unknown as { status: string; error?: unknown; value: unknown; context: ConnectionContext };
        if (snapshot.status === 'error') runtime.onCrash(snapshot.error);
        else runtime.onSnapshot(snapshot.value, snapshot.context, event.event);
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
    if (!actor) return;
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
    if (!handle) throw new ConfigError(`unknown server '${name}' (configured: ${[...this.handles.keys()].join(', ')})`);
    return handle;
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
  private relay<K extends keyof RuntimeEvents>(server: string, logger: Logger, event: K, payload: RuntimeEvents[K]): void {
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
    const ref = this.actor?.system.get(name);
    if (!ref || ref.getSnapshot().status !== 'active') return;
    await new Promise<void>((resolve) => {
      const subscription = ref.subscribe({ complete: () => resolve(), error: () => resolve() });
      ref.send({ type: 'CLOSE' });
      if (ref.getSnapshot().status !== 'active') {
        subscription.unsubscribe();
        resolve();
      }
    });
  }
}

export function createSupervisor(options: SupervisorOptions): Supervisor {
  return new Supervisor(options);
}
