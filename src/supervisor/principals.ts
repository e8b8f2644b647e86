/**
 * Many users, one supervisor (docs/principals.md): a principal is the user a host acts for. A
 * server marked `perPrincipal` gets one connection per principal, opened on that principal's
 * first request and run like any server (the same runtime, machine, recovery and limits, built by
 * the supervisor); the other servers keep their one shared connection. `sup.as(principal)` is the
 * supervisor's face for one principal.
 */
import { AuthorizationRequiredError, ConfigError } from '../core/errors.js';
import type { RedirectHandler } from '../auth/options.js';
import { digestOf } from '../store/state-keys.js';
import { isAuthProvider } from '../auth/resolve-provider.js';
import type { ServerConfig } from '../config/server-config.js';
import { expandPrincipalIn } from '../config/interpolate.js';
import { silentLogger, type Logger } from '../observe/logger.js';
import { ServerHandle, type HandleOwner, type ServerStatus } from '../handle/server-handle.js';
import type { ServerRuntime } from '../runtime/server-runtime.js';
import type { ToolCallInterceptor } from '../tools/interceptors.js';
import { ToolCatalog, type CatalogSignal } from '../catalog/catalog.js';
import type { CatalogOptions } from '../catalog/options.js';
import type { CatalogSnapshot } from '../catalog/types.js';
import { SupervisorEventRelay, type SupervisorEvents } from './events.js';
import {
  closeConnection,
  noConnectionStatus,
  reconnectConnection,
  restartsOf,
  stopServerActor,
  type ServerActor,
} from './supervised-server.js';

/** Who a request is for: an id, or the id with what the host knows of the user (read by `${principal:<field>}` and resolvers). */
export type Principal = string | PrincipalInfo;

export interface PrincipalInfo {
  readonly id: string;
  readonly [field: string]: unknown;
}

/** What a credential resolver returns for one (principal, server): merged over the server's configured ones. */
export interface PrincipalCredentials {
  /** HTTP headers of every request of this principal's connection (`Authorization`, an API key). */
  headers?: Record<string, string>;
  /** A stdio server's environment for this principal's process. */
  env?: Record<string, string>;
}

/** Called once per connection, before it opens; what it returns is kept for the connection's life. */
export type CredentialResolver = (request: {
  principal: PrincipalInfo;
  server: string;
}) => PrincipalCredentials | undefined | Promise<PrincipalCredentials | undefined>;

export interface PrincipalOptions {
  /** Status, logs and telemetry show principal ids (`true`), or a stable hash of each (default `false`). */
  expose?: boolean;
  /** Live principal connections per server, at most (default 1,000): beyond, the least recently used closes. */
  maxConnections?: number;
  /** A principal connection unused this long, with no request outstanding, closes (default 15 minutes). */
  idleMs?: number;
}

const DEFAULT_MAX_CONNECTIONS = 1_000;
const DEFAULT_IDLE_MS = 15 * 60_000;
/** Idle connections are looked for at most this often (and at least twice per `idleMs`). */
const MAX_SWEEP_MS = 60_000;

/** The pool bounds of `principals`, checked: a ConfigError names a bad one. */
export function poolLimits(options: PrincipalOptions | undefined): { maxConnections: number; idleMs: number } {
  const maxConnections = options?.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const idleMs = options?.idleMs ?? DEFAULT_IDLE_MS;
  for (const [field, value] of [
    ['maxConnections', maxConnections],
    ['idleMs', idleMs],
  ] as const)
    if (!Number.isInteger(value) || value <= 0)
      throw new ConfigError(`invalid configuration: principals.${field}: must be a positive integer`, [
        { path: `principals.${field}`, message: 'must be a positive integer' },
      ]);
  return { maxConnections, idleMs };
}

/** A principal as given: its id checked, a string made `{ id }`. */
export function principalInfo(principal: Principal): PrincipalInfo {
  const info = typeof principal === 'string' ? { id: principal } : principal;
  if (typeof info !== 'object' || info === null || typeof info.id !== 'string' || info.id === '')
    throw new ConfigError('sup.as(principal): a principal is a non-empty string id, or an object with one (`{ id }`)', [
      { path: 'principal.id', message: 'must be a non-empty string' },
    ]);
  return info;
}

/** How a principal appears in status, logs and telemetry: its id when exposed, else a stable hash. */
export function principalLabel(id: string, options: PrincipalOptions | undefined): string {
  return options?.expose === true ? id : `principal-${digestOf(id).slice(0, 12)}`;
}

/**
 * A per-principal server's config for one principal, its own copy: `${principal}` expanded in
 * headers and env, and the built-in OAuth client's credential kept under the principal (its store
 * key, and the key of its private tool lists: runtime/stored/server-identity.ts).
 */
export function configFor(
  base: ServerConfig,
  principal: PrincipalInfo,
  signIn: RedirectHandler,
  label: string,
): ServerConfig {
  const config = { ...base, principal: label };
  const prefix = `servers.${config.name}`;
  const headers = expandPrincipalIn(config.headers, principal, `${prefix}.headers`);
  const secrets = [...config.secrets];
  if (config.kind === 'command')
    return { ...config, headers, env: expandPrincipalIn(config.env, principal, `${prefix}.env`), secrets };
  const auth =
    config.auth === undefined || isAuthProvider(config.auth)
      ? config.auth
      : { ...config.auth, principal: principal.id, onRedirect: signIn };
  return { ...config, headers, auth, secrets };
}

/**
 * The resolver's credentials, put into the connection's own config before its machine starts (the
 * transport reads them when it is built; they are redacted as the config's headers and env are).
 */
async function addCredentials(
  config: ServerConfig,
  principal: PrincipalInfo,
  resolver: CredentialResolver | undefined,
): Promise<void> {
  const resolved = await resolver?.({ principal, server: config.name });
  if (!resolved) return;
  Object.assign(config.headers, resolved.headers);
  if (config.kind === 'command') Object.assign(config.env, resolved.env);
}

/** What a pool asks of the supervisor: its runtimes and machines, built as for every server. */
export interface ConnectionFactory {
  newRuntime(config: ServerConfig): ServerRuntime;
  /** The connection's machine, started now; undefined while the supervisor has not started. */
  startActor(runtime: ServerRuntime): ServerActor | undefined;
  readonly interceptors: readonly ToolCallInterceptor[] | undefined;
  readonly resolver: CredentialResolver | undefined;
  readonly onAuthorizationRequired: AuthorizationRequiredHook | undefined;
  readonly limits: { maxConnections: number; idleMs: number };
  /** How a principal appears in telemetry (principalLabel). */
  label(id: string): string;
}

/** A principal must sign in to a server: `url` is where that principal authorizes (send it to them). */
export type AuthorizationRequiredHook = (request: { principal: PrincipalInfo; server: string; url: string }) => void;

/**
 * The browser step of one principal's OAuth sign-in, handed to the host: the requests waiting
 * fail with AuthorizationRequiredError carrying the URL, the hook is told, and the flow waits for
 * the redirect the host receives (`completeAuthorization`).
 */
class SignIn {
  private redirect: { resolve(url: string): void; reject(error: Error): void } | undefined;

  constructor(
    private readonly principal: PrincipalInfo,
    private readonly server: string,
    private readonly hook: AuthorizationRequiredHook | undefined,
    private readonly failWaiting: (url: string) => void,
  ) {}

  readonly handler: RedirectHandler = (authorizationUrl, signal) =>
    new Promise<string>((resolve, reject) => {
      this.redirect?.reject(new Error('a newer sign-in replaced this one'));
      this.redirect = { resolve, reject };
      signal.addEventListener('abort', () => reject(new Error('the connection gave up the sign-in')), { once: true });
      const url = authorizationUrl.href;
      this.failWaiting(url);
      this.hook?.({ principal: this.principal, server: this.server, url });
    });

  /** The redirect the host received: the flow goes on. False when no sign-in waits. */
  complete(callbackUrl: string | URL): boolean {
    const redirect = this.redirect;
    this.redirect = undefined;
    redirect?.resolve(String(callbackUrl));
    return redirect !== undefined;
  }
}

/** One principal's connection to one server. */
class PrincipalConnection implements HandleOwner {
  readonly handle: ServerHandle;
  actor: ServerActor | undefined = undefined;
  /** Its OAuth sign-in, handed to the host (a per-principal server with `auth`). */
  signIn: SignIn | undefined = undefined;
  /** Settles once the credentials are in and the connection's first attempt has an outcome. */
  readonly opened: Promise<void>;
  private closed = false;
  /** When a request for it last came through the view (Date.now()): idleness and LRU order. */
  lastUsed = Date.now();

  constructor(
    readonly runtime: ServerRuntime,
    factory: ConnectionFactory,
    credentials: Promise<unknown>,
    /** The credentials could not be resolved: the pool forgets it (the next request tries again). */
    onFailed: () => void,
  ) {
    this.handle = new ServerHandle(runtime, this, factory.interceptors);
    this.opened = credentials.then(
      () => {
        if (this.closed) return;
        this.actor = factory.startActor(runtime);
        return runtime.view.firstOutcome;
      },
      (error: unknown) => {
        this.closed = true;
        onFailed();
        const reason = error instanceof Error ? error.message : String(error);
        runtime.rejectWaitingRequests(`the credentials of this principal could not be resolved: ${reason}`);
      },
    );
  }

  /** The supervisor started after this connection was opened. */
  start(factory: ConnectionFactory): void {
    if (!this.closed && !this.actor) this.actor = factory.startActor(this.runtime);
  }

  restartsOf(): number {
    return restartsOf(this.actor);
  }

  closeServer(): Promise<void> {
    return closeConnection(this.actor);
  }

  reconnectServer(server: string): Promise<void> {
    return reconnectConnection(server, this.runtime, this.actor);
  }

  /** No request is outstanding: closing it fails nobody. */
  get quiet(): boolean {
    return this.runtime.context.pending.size === 0;
  }

  /** Ends the connection for good (DELETE); its handle then rejects every request. */
  async end(reason: string): Promise<void> {
    this.closed = true;
    if (this.actor) await stopServerActor(this.actor);
    this.runtime.rejectWaitingRequests(reason);
    await this.runtime.closeSession().catch(() => {});
  }
}

/**
 * The connections of one per-principal server, by principal id. The config is the server's as
 * loaded; each connection gets the principal's (configFor).
 */
export class PrincipalPool {
  /** By principal id, least recently used first (a use moves an entry to the end). */
  private readonly connections = new Map<string, PrincipalConnection>();
  private sweeper: ReturnType<typeof setInterval> | undefined = undefined;

  constructor(
    readonly config: ServerConfig,
    private readonly factory: ConnectionFactory,
  ) {}

  /** The principal's connection, opened now if it has none. */
  connection(principal: PrincipalInfo, follow: (runtime: ServerRuntime) => void): PrincipalConnection {
    const existing = this.connections.get(principal.id);
    if (existing) {
      this.connections.delete(principal.id);
      this.connections.set(principal.id, existing);
      existing.lastUsed = Date.now();
      return existing;
    }
    if (this.connections.size >= this.factory.limits.maxConnections) this.evictOne();
    // The runtime is built at once (a handle now); its machine starts once the credentials are in.
    const server = this.config.name;
    const signIn = new SignIn(principal, server, this.factory.onAuthorizationRequired, (url) =>
      runtime.context.pending.failAll(
        () =>
          new AuthorizationRequiredError(
            `${server}: this principal must sign in first (the error's authorizationUrl)`,
            { status: 401, wwwAuthenticate: undefined, resourceUrl: new URL(url) },
            -1,
            { server, authorizationUrl: url },
          ),
      ),
    );
    const config = configFor(this.config, principal, signIn.handler, this.factory.label(principal.id));
    const runtime = this.factory.newRuntime(config);
    follow(runtime);
    const credentials = Promise.resolve().then(() => addCredentials(config, principal, this.factory.resolver));
    const connection: PrincipalConnection = new PrincipalConnection(runtime, this.factory, credentials, () => {
      if (this.connections.get(principal.id) === connection) this.connections.delete(principal.id);
    });
    connection.signIn = signIn;
    this.connections.set(principal.id, connection);
    this.sweeper ??= this.startSweeping();
    return connection;
  }

  /** The bound is reached: the least recently used quiet connection closes (the least recently used if none is quiet). */
  private evictOne(): void {
    let victim: [string, PrincipalConnection] | undefined;
    for (const entry of this.connections) {
      victim ??= entry;
      if (entry[1].quiet) {
        victim = entry;
        break;
      }
    }
    if (victim) this.drop(victim[0], victim[1], 'it was the least recently used beyond principals.maxConnections');
  }

  private drop(id: string, connection: PrincipalConnection, why: string): void {
    this.connections.delete(id);
    void connection.end(`this principal's connection was closed: ${why}`);
  }

  private startSweeping(): ReturnType<typeof setInterval> {
    const { idleMs } = this.factory.limits;
    const timer = setInterval(() => this.sweep(), Math.max(1, Math.min(MAX_SWEEP_MS, Math.floor(idleMs / 2))));
    timer.unref();
    return timer;
  }

  /** Connections unused for `idleMs` with nothing outstanding close (2025-era sessions are DELETEd). */
  private sweep(): void {
    const before = Date.now() - this.factory.limits.idleMs;
    for (const [id, connection] of this.connections) {
      if (connection.lastUsed > before) break; // in LRU order: the rest were used later
      if (connection.quiet) this.drop(id, connection, `unused for principals.idleMs`);
      else {
        // Busy: used now, as far as idleness goes (its entry moves to the end).
        this.connections.delete(id);
        this.connections.set(id, connection);
        connection.lastUsed = Date.now();
      }
    }
    if (this.connections.size === 0) this.stopSweeping();
  }

  private stopSweeping(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** The principal's connection if it has one (nothing is opened). */
  peek(id: string): PrincipalConnection | undefined {
    return this.connections.get(id);
  }

  /** The supervisor started: connections opened before it start their machines. */
  start(): void {
    for (const connection of this.connections.values()) connection.start(this.factory);
  }

  get size(): number {
    return this.connections.size;
  }

  /** Closes every principal's connection (the server was removed, or the supervisor stops). */
  async close(reason: string): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    this.stopSweeping();
    await Promise.all(all.map((connection) => connection.end(reason)));
  }
}

/** What a view reads of its supervisor. */
export interface ViewHost {
  sharedHandle(name: string): ServerHandle | undefined;
  sharedNames(): Iterable<string>;
  pool(name: string): PrincipalPool | undefined;
  poolNames(): Iterable<string>;
  readonly catalogOptions: CatalogOptions | undefined;
  readonly principalOptions: PrincipalOptions | undefined;
  readonly logger: Logger | undefined;
  unknownServer(name: string): never;
}

/** Log entries of a principal's connections carry the principal (its label, never its credentials). */
function taggedLogger(logger: Logger, principal: string): Logger {
  const tag =
    (level: keyof Logger) =>
    (entry: object, message?: string): void =>
      logger[level]({ ...entry, principal }, message);
  return { debug: tag('debug'), info: tag('info'), warn: tag('warn'), error: tag('error') };
}

/**
 * The supervisor's face for one principal: shared servers through their one connection, the
 * per-principal ones through this principal's own. Its catalog lists what this principal sees.
 */
export class PrincipalView {
  private builtCatalog: ToolCatalog | undefined = undefined;
  private readonly events: SupervisorEventRelay;
  private readonly logger: Logger | undefined;
  /** This principal's connections, by server: the ones the view opened. */
  private readonly own = new Map<string, PrincipalConnection>();

  constructor(
    /** The newest details the host gave (`sup.as({ id, … })`): a connection opened from now on reads them. */
    public principal: PrincipalInfo,
    private readonly host: ViewHost,
  ) {
    this.events = new SupervisorEventRelay(
      {
        observeCatalog: (signal) => this.observeCatalog(signal),
        restartsOf: (name) => this.own.get(name)?.restartsOf() ?? 0,
      },
      () => [...this.own.values()].map((connection) => connection.runtime),
    );
    const label = principalLabel(principal.id, host.principalOptions);
    this.logger = host.logger && taggedLogger(host.logger, label);
  }

  /** How this principal appears in status, logs and telemetry (`principals.expose`). */
  get label(): string {
    return principalLabel(this.principal.id, this.host.principalOptions);
  }

  /** The server's handle for this principal: the shared one, or this principal's own connection. */
  server(name: string): ServerHandle {
    const shared = this.host.sharedHandle(name);
    if (shared) return shared;
    return this.connection(name).handle;
  }

  private connection(name: string): PrincipalConnection {
    const pool = this.host.pool(name);
    if (!pool) return this.host.unknownServer(name);
    const connection = pool.connection(this.principal, (runtime) =>
      this.events.follow(name, runtime, this.logger ?? silentLogger),
    );
    if (this.own.get(name) !== connection) {
      this.own.set(name, connection);
      this.builtCatalog?.observe({ type: 'added', server: name });
    }
    return connection;
  }

  /**
   * Completes this principal's sign-in to a server with the redirect the host received (the
   * `redirectUri` with `code` and `state`); resolves once the connection serves again, or went
   * down once more. A ConfigError when no sign-in of this principal waits for that server.
   */
  async completeAuthorization(server: string, callbackUrl: string | URL): Promise<void> {
    const connection = this.host.pool(server)?.peek(this.principal.id);
    const next = connection?.runtime.view.nextAttempt();
    if (!connection?.signIn?.complete(callbackUrl))
      throw new ConfigError(`completeAuthorization: no sign-in of this principal waits for server '${server}'`);
    await next;
  }

  /** Every tool this principal sees, under provider-safe names (docs/agents.md). */
  get catalog(): ToolCatalog {
    return (this.builtCatalog ??= new ToolCatalog(
      {
        names: () => [...this.host.sharedNames(), ...this.host.poolNames()],
        get: (name) =>
          this.host.sharedHandle(name) ?? (this.host.pool(name) ? this.connection(name).handle : undefined),
      },
      this.host.catalogOptions,
    ));
  }

  /** Every tool this principal sees; its per-principal servers are opened first (their first attempt awaited). */
  async tools(): Promise<CatalogSnapshot> {
    await Promise.all([...this.host.poolNames()].map((name) => this.connection(name).opened));
    return this.catalog.list();
  }

  /** Every server's status as this principal sees it; a per-principal server it has not used yet is `stopped`. */
  status(): Record<string, ServerStatus> {
    const status: Record<string, ServerStatus> = {};
    for (const name of this.host.sharedNames()) status[name] = this.host.sharedHandle(name)!.status();
    for (const name of this.host.poolNames()) {
      const connection = this.host.pool(name)!.peek(this.principal.id);
      status[name] = connection ? connection.handle.status() : noConnectionStatus(name, 'stopped');
    }
    return status;
  }

  /** Events of this principal's own connections, tagged with the server (shared servers' are on the supervisor). */
  on<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): () => void {
    return this.events.on(event, listener);
  }

  off<K extends keyof SupervisorEvents>(event: K, listener: (payload: SupervisorEvents[K]) => void): void {
    this.events.off(event, listener);
  }

  /** A shared server's signal (from the supervisor), or one of this principal's connections'. */
  observeCatalog(signal: CatalogSignal): void {
    if (signal.type === 'removed') this.own.delete(signal.server);
    this.builtCatalog?.observe(signal);
  }
}
