/**
 * Composition root: validates the config, builds one runtime per server, provides the machines
 * with their effects, and exposes the supervisor and per-server handles. Users never touch
 * XState; the optional `inspect` observer sees the whole actor tree.
 */
import { EventsClient } from '../events/events-client.js';
import type { SupervisorOptions } from './options.js';
import { inTurns } from '../core/in-turns.js';
import { StartListenTurn } from './listen-turn.js';
import { sharedClock } from '../runtime/actors/shared-clock.js';
import {
  parseServerConfig,
  parseServers,
  secretSources,
  type ParseOptions,
  type ServerConfig,
  type ServerConfigInput,
} from '../config/server-config.js';
import { routeWarnings } from '../config/warning-route.js';
import { planChanges, type ApplyResult } from '../config/diff.js';
import {
  restartsOf,
  startServerActor,
  stopServerActor,
  closeWithSupervisor,
  supervisedServer,
  closeConnection,
  reconnectConnection,
  type ServerActor,
} from './supervised-server.js';
import { silentLogger } from '../observe/logger.js';
import { SanitizedInspector } from '../observe/inspection.js';
import { secretsOf } from '../core/redact.js';
import { ConfigError, ConnectionClosedError } from '../core/errors.js';
import { ToolCatalog, type CatalogSignal } from '../catalog/catalog.js';
import { resolveCatalogOptions } from '../catalog/options.js';
import type { CatalogSnapshot } from '../catalog/types.js';
import type { ClientCapabilities, Implementation } from '../protocol/messages.js';
import { extraCapabilities } from '../runtime/session/client-capabilities.js';
import { ServerHandle, type HandleOwner, type ServerStatus } from '../handle/server-handle.js';
import { ServerRuntime } from '../runtime/server-runtime.js';
import { StatusTable } from './status-table.js';
import { SupervisorEventRelay, type SupervisorEvents } from './events.js';
import { VERSION } from '../core/version.js';
import { interceptorList } from '../tools/interceptors.js';
import {
  PrincipalPool,
  PrincipalView,
  principalInfo,
  principalLabel,
  poolLimits,
  type ConnectionFactory,
  type Principal,
  type ViewHost,
} from './principals.js';
import type { Dashboard, DashboardOptions } from '../dashboard/dashboard.js';

export type { SupervisorOptions } from './options.js';

export type { SupervisorEvents } from './events.js';

const DEFAULT_CLIENT_INFO: Implementation = { name: 'mcp-supervisor', version: VERSION };

/** Servers in their first attempt at once during `start()`, or closing at once during `stop()` (an origin's pool has 128 sockets). */
const STARTING_AT_ONCE = 256;

/** The principal pools of a supervisor that has none. */
const NONE: ReadonlyMap<string, PrincipalPool> = new Map();

export class Supervisor implements HandleOwner {
  private readonly runtimes = new Map<string, ServerRuntime>();
  private readonly handles = new Map<string, ServerHandle>();
  /** `perPrincipal` servers: a connection per principal, opened by `as(principal)` (principals.ts). */
  private madePools: Map<string, PrincipalPool> | undefined = undefined;
  /** `as(principal)`'s views, by principal id: one catalog per principal. */
  private madeViews: Map<string, PrincipalView> | undefined = undefined;
  /** Read side: a supervisor without principals (every `connect()`) builds no map of them. */
  private get pools(): ReadonlyMap<string, PrincipalPool> {
    return this.madePools ?? NONE;
  }
  /** Loaded, not started: no runtime, no handle, until `enable(name)`. */
  private get disabledConfigs(): Map<string, ServerConfig> {
    // Built at first use: `connect()`'s supervisor of one never reads it (a Map's table: ~0.2 KB).
    return (this.disabledTable ??= new Map());
  }
  private disabledTable: Map<string, ServerConfig> | undefined = undefined;
  /** `apply` calls, one after the other. */
  private applying: Promise<unknown> | undefined = undefined;
  private readonly relay = new SupervisorEventRelay(this, () => this.runtimes.values());
  /** The user's `inspect`, fed sanitized copies; nothing else reads inspection events. */
  private readonly inspector: SanitizedInspector | undefined;
  /** Once started: each server's connection machine, a root actor of its own (supervised-server.ts). */
  private actors: Map<string, ServerActor> | undefined;
  /** The machines' long delays of every server of the process share one timer. */
  private readonly clock = sharedClock();
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  /** Built on first use: a supervisor whose catalog nobody reads (every `connect()`) holds none (~0.5 KB). */
  private builtCatalog: ToolCatalog | undefined = undefined;
  /** The validated extra capabilities, shared by every server. */
  private readonly capabilities: ClientCapabilities | undefined;

  /** `servers` apart from the options (what `connect()` passes): the options are kept as given, not copied. */
  constructor(
    private readonly options: SupervisorOptions,
    servers: SupervisorOptions['servers'] = options.servers,
  ) {
    this.inspector = options.inspect && new SanitizedInspector(options.inspect);
    this.capabilities = extraCapabilities(options);
    for (const config of parseServers(servers, this.parseOptions(options))) this.admit(config);
    poolLimits(options.principals); // bad bounds are a ConfigError now, not at the first principal
    resolveCatalogOptions(options.catalog); // bad catalog options are a ConfigError now, not at first use
    this.updateSanitizer();
  }

  /** Warnings (and those a loaded `config` carries) to onWarning, the logger, or emitWarning. */
  private parseOptions(config?: object): ParseOptions {
    return routeWarnings(this.options, config);
  }

  /** A disabled server is remembered; any other gets its runtime and handle. */
  private admit(config: ServerConfig): ServerHandle | undefined {
    if (config.disabled) {
      this.disabledConfigs.set(config.name, config);
      return undefined;
    }
    return this.adopt(config);
  }

  /**
   * The supervisor's face for one principal (a user the host acts for): `server(name)`, `tools()`,
   * `catalog`, `status()`. Shared servers answer through their one connection, `perPrincipal` ones
   * through this principal's own, opened on its first request (docs/principals.md).
   */
  as(principal: Principal): PrincipalView {
    const info = principalInfo(principal);
    const views = (this.madeViews ??= new Map<string, PrincipalView>());
    const known = views.get(info.id);
    if (known) {
      if (typeof principal !== 'string') known.principal = info;
      views.delete(info.id); // least recently used first
      views.set(info.id, known);
      return known;
    }
    const view = new PrincipalView(info, this.viewHost);
    views.set(info.id, view);
    // As many views as a server may have connections: a dropped one is built again when asked.
    if (views.size > this.connectionFactory.limits.maxConnections) views.delete(views.keys().next().value!);
    return view;
  }

  private get viewHost(): ViewHost {
    return (this.builtViewHost ??= this.newViewHost());
  }
  private builtViewHost: ViewHost | undefined = undefined;

  private newViewHost(): ViewHost {
    return {
      sharedHandle: (name) => this.handles.get(name),
      sharedNames: () => this.handles.keys(),
      pool: (name) => this.pools.get(name),
      poolNames: () => this.pools.keys(),
      catalogOptions: this.options.catalog,
      principalOptions: this.options.principals,
      logger: this.options.logger,
      unknownServer: (name) => {
        throw new ConfigError(`unknown server '${name}' (configured: ${this.names()})`);
      },
    };
  }

  /** What the pools ask of the supervisor: runtimes and machines built as for every server. */
  private get connectionFactory(): ConnectionFactory {
    return (this.builtFactory ??= this.newConnectionFactory());
  }
  private builtFactory: ConnectionFactory | undefined = undefined;

  private newConnectionFactory(): ConnectionFactory {
    return {
      newRuntime: (config) => this.newRuntime(config),
      startActor: (runtime) => (this.actors && !this.stopping ? this.runActor(runtime) : undefined),
      interceptors: interceptorList(this.options.interceptors),
      resolver: this.options.credentials,
      onAuthorizationRequired: this.options.onAuthorizationRequired,
      limits: poolLimits(this.options.principals),
      label: (id) => principalLabel(id, this.options.principals),
    };
  }

  /** Every tool of every server under provider-safe names, kept fresh (docs/agents.md). */
  get catalog(): ToolCatalog {
    return (this.builtCatalog ??= new ToolCatalog(
      { names: () => this.handles.keys(), get: (name) => this.handles.get(name) },
      this.options.catalog,
    ));
  }

  /** Experimental (SEP-3415 draft; docs/events.md): events subscriptions across every server. */
  get events(): EventsClient {
    return (this.builtEvents ??= new EventsClient({
      names: () => this.handles.keys(),
      events: (name) => this.server(name).events,
    }));
  }

  private builtEvents: EventsClient | undefined = undefined;

  /** What the catalog hears of the servers (supervisor-events.ts); before it is built, only what outlives it. */
  observeCatalog(signal: CatalogSignal): void {
    if (this.madeViews) for (const view of this.madeViews.values()) view.observeCatalog(signal);
    if (this.builtCatalog) this.builtCatalog.observe(signal);
    else if (signal.type === 'listChanged') this.handles.get(signal.server)?.storedTools?.forgetTools();
  }

  /** Every tool of every server, and the servers whose tools are missing: `catalog.list()`. */
  tools(): Promise<CatalogSnapshot> {
    return this.catalog.list();
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
    if (this.handles.has(name) || this.disabledConfigs.has(name))
      throw new ConfigError(`invalid configuration: servers.${name}: the name is in use`);
    const parsed = parseServerConfig(name, config, this.parseOptions());
    if (parsed.perPrincipal)
      throw new ConfigError(
        `invalid configuration: servers.${name}.perPrincipal: add() returns one handle; a per-principal server is added with apply(), and reached with sup.as(principal).server('${name}')`,
        [{ path: `servers.${name}.perPrincipal`, message: 'not with add()' }],
      );
    return this.addParsed(parsed, true)!;
  }

  private addParsed(config: ServerConfig, force = false): ServerHandle | undefined {
    const name = config.name;
    if (this.stopping) throw new ConnectionClosedError('the supervisor is stopping', { server: name });
    const handle = this.adopt(force ? { ...config, disabled: false } : config);
    this.updateSanitizer();
    if (this.actors && handle) this.startActor(name);
    this.observeCatalog({ type: 'added', server: name });
    return handle;
  }

  /** Closes a server (DELETE) and forgets it; its handle rejects every request with ConnectionClosedError. */
  async remove(name: string): Promise<void> {
    if (this.disabledConfigs.delete(name)) return;
    const pool = this.pools.get(name);
    if (pool) {
      this.madePools?.delete(name);
      this.updateSanitizer();
      this.observeCatalog({ type: 'removed', server: name });
      return pool.close('the server was removed');
    }
    const runtime = this.runtimes.get(name);
    if (!runtime) throw new ConfigError(`unknown server '${name}' (configured: ${this.names()})`);
    this.handles.delete(name);
    this.updateSanitizer();
    this.observeCatalog({ type: 'removed', server: name });
    const actor = this.actors?.get(name);
    // Closed and ended: the name can be added again at once.
    if (actor) await stopServerActor(actor);
    if (actor && this.actors?.get(name) === actor) {
      this.actors.delete(name);
      actor.stop();
    }
    runtime.rejectWaitingRequests('the server was removed');
    await runtime.closeSession().catch(() => {});
    this.runtimes.delete(name);
  }

  /** Starts a disabled server (at once if the supervisor runs); returns its handle. Enabled ones: their handle. */
  enable(name: string): ServerHandle {
    const config = this.disabledConfigs.get(name);
    if (!config) return this.server(name);
    if (this.stopping) throw new ConnectionClosedError('the supervisor is stopping', { server: name });
    this.disabledConfigs.delete(name);
    // A per-principal server has no handle of its own: `as(principal).server(name)` reaches it.
    return this.addParsed({ ...config, disabled: false })!;
  }

  /** Stops a server (like `remove`) but keeps its config: `status()` says `disabled`, `enable(name)` starts it again. */
  async disable(name: string): Promise<void> {
    if (this.disabledConfigs.has(name)) return;
    const config = this.configOf(name);
    if (!config) throw new ConfigError(`unknown server '${name}' (configured: ${this.names()})`);
    await this.remove(name);
    this.disabledConfigs.set(name, { ...config, disabled: true });
  }

  /**
   * Moves to a new configuration (e.g. `await loadConfig(file)` after the file changed): added
   * servers start, removed ones stop, changed ones restart, `disabled` toggles enable or disable,
   * unchanged ones are not touched. Every entry is validated first: an invalid one changes nothing.
   */
  async apply(config: Pick<SupervisorOptions, 'servers'>): Promise<ApplyResult> {
    const next = parseServers(config.servers, this.parseOptions(config));
    const run = (this.applying ?? Promise.resolve()).then(() => this.applyParsed(next));
    this.applying = run.catch(() => {});
    return run;
  }

  private async applyParsed(next: readonly ServerConfig[]): Promise<ApplyResult> {
    const current = new Map([...this.configs(), ...this.disabledConfigs]);
    const plan = planChanges(current, next);
    const byName = new Map(next.map((config) => [config.name, config]));
    await Promise.all([...plan.removed, ...plan.restarted].map((name) => this.remove(name)));
    await Promise.all(plan.disabled.map((name) => this.disable(name)));
    // Disabled servers keep the newest settings: `enable` starts them as the config says now.
    for (const config of next) if (config.disabled) this.disabledConfigs.set(config.name, config);
    for (const name of plan.enabled) this.disabledConfigs.set(name, { ...byName.get(name)!, disabled: true });
    for (const name of [...plan.added, ...plan.restarted]) {
      const config = byName.get(name)!;
      if (config.disabled) this.disabledConfigs.set(name, config);
      else this.addParsed(config);
    }
    for (const name of plan.enabled) this.enable(name);
    this.updateSanitizer();
    return plan;
  }

  private adopt(config: ServerConfig): ServerHandle | undefined {
    if (config.perPrincipal) {
      (this.madePools ??= new Map()).set(config.name, new PrincipalPool(config, this.connectionFactory));
      return undefined;
    }
    const runtime = this.newRuntime(config);
    const server = config.name;
    this.relay.follow(server, runtime, this.options.logger ?? silentLogger);
    const handle = new ServerHandle(runtime, this, interceptorList(this.options.interceptors));
    this.runtimes.set(server, runtime);
    this.handles.set(server, handle);
    return handle;
  }

  /** A server's runtime, shared or one principal's: built the same way. */
  private newRuntime(config: ServerConfig): ServerRuntime {
    return new ServerRuntime({
      config,
      clientInfo: this.options.clientInfo ?? DEFAULT_CLIENT_INFO,
      handlers: this.options.handlers,
      elicitation: this.options.elicitation,
      sampling: this.options.sampling,
      capabilities: this.capabilities,
      maxInputRounds: this.options.maxInputRounds,
      timers: this.options.timers,
      createTransport: this.options.createTransport,
      store: this.options.store,
    });
  }

  /**
   * A configured server's config: its runtime's, while it has a handle (a server being removed has
   * none). No map of configs beside the runtimes (a Map's table, ~0.2 KB for `connect()`'s one).
   */
  private configOf(name: string): ServerConfig | undefined {
    return this.handles.has(name) ? this.runtimes.get(name)?.context.config : this.pools.get(name)?.config;
  }

  /** Every configured server's config, by name. */
  private *configs(): Generator<[string, ServerConfig]> {
    for (const name of this.handles.keys()) yield [name, this.runtimes.get(name)!.context.config];
    for (const [name, pool] of this.pools) yield [name, pool.config];
  }

  /** Inspection events are sanitized by the secrets of every server configured now. */
  private updateSanitizer(): void {
    this.inspector?.update(secretsOf([...this.configs()].map(([, config]) => secretSources(config))));
  }

  /**
   * At most STARTING_AT_ONCE servers in their first attempt at a time (core/in-turns.ts says why); a
   * start of more opens the listening streams after the handshakes (src/listen-turn.ts).
   */
  private async launch(): Promise<void> {
    const actors = (this.actors = new Map());
    const names = [...this.runtimes.keys()];
    const turn = names.length > STARTING_AT_ONCE ? new StartListenTurn() : undefined;
    const stopping = () => this.stopping !== undefined;
    await inTurns(
      names,
      STARTING_AT_ONCE,
      (name) => {
        const runtime = this.runtimes.get(name);
        if (!runtime || actors.has(name)) return;
        this.startActor(name, turn);
        return runtime.view.firstOutcome;
      },
      stopping,
    );
    // Principals' connections opened before the start: their machines start now, not awaited.
    for (const pool of this.pools.values()) pool.start();
    // Not awaited: start() resolves with every server serving, the streams open right after.
    if (turn) void turn.release((name) => this.actors?.get(name), STARTING_AT_ONCE, stopping);
  }

  /** Starts a server's connection machine; a machine that dies (a bug) fails that server's requests. */
  private startActor(name: string, listenTurn?: StartListenTurn): void {
    this.actors!.set(name, this.runActor(this.runtimes.get(name)!, listenTurn));
  }

  /** A runtime's connection machine, started: one root actor per connection (supervised-server.ts). */
  private runActor(runtime: ServerRuntime, listenTurn?: StartListenTurn): ServerActor {
    return startServerActor(supervisedServer(runtime.context.config), runtime, {
      random: this.options.random,
      clock: this.clock,
      inspect: this.inspector?.inspect,
      onError: (error) => {
        // A root must never die unobserved: its server is failed with the cause.
        runtime.context.pending.failAll(
          new ConnectionClosedError(`supervisor crashed: ${error.message}`, { server: runtime.context.name }),
        );
      },
      listenTurn,
    });
  }

  /** Closes every session (DELETE) and stops all actors. Pending requests fail with ConnectionClosedError. */
  stop(): Promise<void> {
    this.stopping ??= this.halt();
    return this.stopping;
  }

  private async halt(): Promise<void> {
    const pools = Promise.all([...this.pools.values()].map((pool) => pool.close('the supervisor was stopped')));
    await this.haltShared();
    await pools;
  }

  private async haltShared(): Promise<void> {
    const actors = this.actors;
    if (!actors) {
      for (const runtime of this.runtimes.values()) runtime.rejectWaitingRequests('the supervisor was stopped');
      return;
    }
    // Not waiting for start() (a stop ends its attempts); paced like it (an aborted DELETE costs a socket).
    await inTurns([...actors].reverse(), STARTING_AT_ONCE, ([, actor]) => closeWithSupervisor(actor));
    // Servers whose turn to start had not come (a stop during start()).
    for (const runtime of this.runtimes.values())
      if (!actors.has(runtime.context.name)) runtime.rejectWaitingRequests('the supervisor was stopped');
  }

  server(name: string): ServerHandle {
    const handle = this.handles.get(name);
    if (handle) return handle;
    if (this.pools.has(name))
      throw new ConfigError(
        `server '${name}' has a connection per principal: sup.as(principal).server('${name}') reaches it`,
      );
    if (this.disabledConfigs.has(name))
      throw new ConfigError(`server '${name}' is disabled (sup.enable('${name}') starts it)`, [
        { path: `servers.${name}.disabled`, message: 'is true' },
      ]);
    throw new ConfigError(`unknown server '${name}' (configured: ${this.names()})`);
  }

  private names(): string {
    return [...this.handles.keys(), ...this.pools.keys(), ...this.disabledConfigs.keys()].join(', ');
  }

  /** Every server's status, frozen: the same object again while no server's status changed (status-table.ts). */
  status(): Record<string, ServerStatus> {
    // Built at the first call: a supervisor of one (`connect()`) is read through its handle.
    const reader = (this.statusReader ??= {
      table: new StatusTable(),
      isStarted: (name) => this.handles.has(name),
      restartsOf: (name) => this.restartsOf(name),
    });
    // Every runtime has its handle but while a server is being removed (its handle goes first).
    const started = this.handles.size === this.runtimes.size ? undefined : reader.isStarted;
    return reader.table.read(this.runtimes, started, this.disabledConfigs, reader.restartsOf);
  }
  private statusReader:
    { table: StatusTable; isStarted: (name: string) => boolean; restartsOf: (name: string) => number } | undefined =
    undefined;

  on<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): () => void {
    return this.relay.on(event, listener);
  }

  off<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): void {
    this.relay.off(event, listener);
  }

  /** A local web page of every server, its machine and its calls (docs/operations.md); resolves once it listens. */
  async dashboard(options?: DashboardOptions): Promise<Dashboard> {
    return (await import('../dashboard/dashboard.js')).startDashboard(this, options);
  }

  /** The typed error of the server's last failed attempt, if any. */
  lastFailureOf(name: string): Error | undefined {
    return this.runtimes.get(name)?.lastFailure;
  }

  /** How many times the supervisor restarted this server's connection. */
  restartsOf(name: string): number {
    return restartsOf(this.actors?.get(name));
  }

  /** Closes one server (what its handle's `close()` does); the others go on. */
  closeServer(name: string): Promise<void> {
    return closeConnection(this.actors?.get(name));
  }

  /** `handle.reconnect()`: resolves when the connection serves again, or went down once more. */
  reconnectServer(name: string): Promise<void> {
    return reconnectConnection(name, this.runtimes.get(name), this.actors?.get(name));
  }
}

export function createSupervisor(options: SupervisorOptions): Supervisor {
  return new Supervisor(options);
}
