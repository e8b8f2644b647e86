/**
 * The gateway: every configured server behind one MCP server. Upstream, each server is a
 * supervised connection of this runtime (recovery, held requests, restarts, auth, the store);
 * downstream, each host session is an instance of the official SDK's server (both protocol eras),
 * served over stdio (stdio.ts) or Streamable HTTP (http.ts). All host sessions share the upstream
 * connections. What a session sees is the Surface; what goes out to every session, the Sessions.
 */
import type { Server } from '@modelcontextprotocol/server';
import { VERSION } from '../core/version.js';
import type { LoggingLevel } from '../protocol/results.js';
import { connect } from '../connect.js';
import type { SupervisorOptions } from '../supervisor/options.js';
import { createSupervisor, type Supervisor } from '../supervisor/supervisor.js';
import { silentLogger, type Logger } from '../observe/logger.js';
import { memoryStore } from '../store/memory-store.js';
import type { Store } from '../store/types.js';
import { DirectPath } from './direct-path.js';
import { createDownstreamServer, SERVER_INFO } from './downstream.js';
import { resolveGatewayOptions, type GatewayOptions, type ResolvedGatewayOptions } from './options.js';
import { InputExchanges } from './input-exchange.js';
import { forwardingHandlers, Sessions } from './sessions.js';
import { TaskListens } from './task-listen.js';
import { Surface } from './surface.js';

type ListKind = 'tools' | 'resources' | 'prompts';

export class Gateway {
  readonly supervisor: Supervisor;
  readonly sessions = new Sessions();
  /** Where 2025 host sessions are kept (the given store; else one in this process's memory). */
  readonly sessionStore: Store;
  /** The operators' log: upstream transitions, host sessions. */
  readonly logger: Logger;
  private readonly exchanges = new InputExchanges();
  private readonly surface: Surface;
  private readonly options: ResolvedGatewayOptions;
  private readonly changes = new Set<ListKind>();
  private flushing: NodeJS.Immediate | undefined;
  private readonly unsubscribe: (() => void)[] = [];
  private started: Promise<void> | undefined;
  /** How every upstream connection is made: the shared ones, and a host session's own (isolate). */
  private readonly upstreamOptions: Omit<SupervisorOptions, 'servers'>;

  constructor(options: GatewayOptions) {
    this.options = resolveGatewayOptions(options);
    this.sessionStore = options.store ?? memoryStore();
    this.logger = options.logger ?? silentLogger;
    this.upstreamOptions = {
      clientInfo: { name: 'mcp-supervisor-gateway', version: VERSION },
      handlers: forwardingHandlers(this.sessions),
      logger: options.logger,
      store: options.store,
      onWarning: () => {},
    };
    this.supervisor = createSupervisor({ ...this.upstreamOptions, servers: options.servers, catalog: options.catalog });
    this.surface = new Surface(this.supervisor, this.options);
  }

  /** Starts every upstream server; resolves once each is ready or has failed its first attempt. */
  start(): Promise<void> {
    this.started ??= this.launch();
    return this.started;
  }

  private async launch(): Promise<void> {
    const sup = this.supervisor;
    this.unsubscribe.push(
      sup.catalog.on('changed', () => this.changed('tools')),
      sup.on('listChanged', ({ list }) => this.changed(list)),
      sup.on('transition', ({ from, to }) => {
        // A failed server's tools leave the list, and come back with it.
        if (to === 'failed' || from === 'failed') this.changed('tools');
        if (to === 'ready' || to === 'failed') {
          this.changed('resources');
          this.changed('prompts');
        }
      }),
      sup.on('log', ({ server, ...message }) => this.sessions.log(server, message)),
      sup.on('resourceUpdated', ({ uri }) => this.sessions.resourceUpdated(uri)),
    );
    await sup.start();
  }

  /** A new host-facing server instance: one per session, connection, or modern request. */
  createServer(): Server {
    return createDownstreamServer({
      surface: this.surface,
      sessions: this.sessions,
      options: this.options,
      exchanges: this.exchanges,
      isolated: this.options.isolated,
      connectIsolated: (server) => connect(this.options.servers[server]!, { ...this.upstreamOptions, name: server }),
      setLevel: (level) => this.setLevel(level),
    });
  }

  /** The calls the HTTP service answers without an SDK server (direct-path.ts). */
  directPath(): DirectPath {
    return new DirectPath({
      surface: this.surface,
      sessions: this.sessions,
      options: this.options,
      exchanges: this.exchanges,
      serverInfo: SERVER_INFO,
    });
  }

  /** The 2026-07-28 listens that name tasks, served by the HTTP service (task-listen.ts). */
  taskListens(): TaskListens {
    return new TaskListens(this.surface, this.sessions, this.options.holdMs);
  }

  /** A host asked for a log level: every server that logs hears it (and keeps it for later sessions). */
  private setLevel(level: LoggingLevel): void {
    for (const handle of this.surface.offering('logging')) void handle.setLoggingLevel(level).catch(() => {});
  }

  /** List changes are told once per turn, however many servers moved. */
  private changed(kind: ListKind): void {
    this.changes.add(kind);
    this.flushing ??= setImmediate(() => {
      this.flushing = undefined;
      const kinds = [...this.changes];
      this.changes.clear();
      for (const changed of kinds) {
        if (changed === 'tools') this.sessions.toolsChanged();
        else if (changed === 'resources') this.sessions.resourcesChanged();
        else this.sessions.promptsChanged();
      }
    });
  }

  /** Closes the host sessions, then every upstream connection. */
  async close(): Promise<void> {
    for (const off of this.unsubscribe.splice(0)) off();
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    this.exchanges.close();
    await this.sessions.close();
    await this.supervisor.stop();
  }
}

export function createGateway(options: GatewayOptions): Gateway {
  return new Gateway(options);
}
