/**
 * `mcp-supervisor serve`: every configured server behind one MCP server, for hosts that run a
 * command (stdio, the default) or connect to a URL (`--http [host:]port`, 127.0.0.1 unless a
 * host is given, a bearer token required unless `--no-auth`). docs/gateway.md.
 *
 * In stdio mode stdout is the protocol: everything else goes to stderr.
 */
import { readFileSync } from 'node:fs';
import { parseJsonText } from '../config/json-text.js';
import type { CatalogOptions } from '../catalog/options.js';
import { createGateway } from '../gateway/gateway.js';
import { generateToken, serveGatewayHttp, type HttpService } from '../gateway/http.js';
import { serveGatewayStdio } from '../gateway/stdio.js';
import { UsageError, type ServerMap } from './load-config.js';
import type { Store } from '../store/types.js';
import { prometheusMetrics } from './prometheus.js';
import { inheritedSocket, startSuccessor, toldListening } from './reload.js';
import { stderrLogger, type LogFormat } from './stderr-log.js';

export const TOKEN_ENV = 'MCP_SUPERVISOR_TOKEN';

export interface ServeOptions {
  servers: ServerMap;
  /** The CLI's store (logins, era verdicts, tool lists). */
  store?: Store | undefined;
  /** The config files: their `"gateway"` block names tools (prefix, separator, filters). */
  configs: readonly string[];
  /** `--http [host:]port`; undefined: stdio. */
  http: string | undefined;
  noAuth: boolean;
  statusTool: boolean;
  holdMs: number | undefined;
  /** `--strict-sessions`: an unknown session id gets 404 instead of being adopted. */
  strictSessions?: boolean | undefined;
  /** `--log-format`: the operators' log on stderr as text lines (default) or JSON. */
  logFormat?: LogFormat | undefined;
  /** `--drain-ms`: on a stop, how long requests in flight may take (default 10 s). */
  drainMs?: number | undefined;
  /** `--metrics`: GET /metrics in Prometheus text. */
  metrics?: boolean | undefined;
  /** `--allow-host`: Host/Origin names accepted besides the loopback ones. */
  allowedHosts?: readonly string[] | undefined;
  /** `--reload`: on SIGHUP, a successor takes the listening socket over, then this process drains. */
  reload?: boolean | undefined;
  err: (text: string) => void;
  /** Resolves when the command should end (a signal). */
  stop: Promise<void>;
}

interface GatewayBlock {
  catalog: CatalogOptions | undefined;
  statusTool: boolean | undefined;
  holdMs: number | undefined;
  sessionIdleMs: number | undefined;
  isolate: string[] | undefined;
}

/** The `"gateway": { "prefix", "separator", "servers": { name: { allow, deny, prefix } }, "statusTool", "holdMs", "sessionIdleMs", "isolate" }` of the config files. */
export function readGatewayBlock(files: readonly string[]): GatewayBlock {
  const block: GatewayBlock = {
    catalog: undefined,
    statusTool: undefined,
    holdMs: undefined,
    sessionIdleMs: undefined,
    isolate: undefined,
  };
  for (const file of files) {
    const json = parseJsonText(readFileSync(file, 'utf8')) as { gateway?: unknown };
    const gateway = json.gateway;
    if (gateway === undefined) continue;
    if (typeof gateway !== 'object' || gateway === null || Array.isArray(gateway))
      throw new UsageError(`${file}: gateway: expected an object`);
    const { statusTool, holdMs, sessionIdleMs, isolate, ...catalog } = gateway as Record<string, unknown>;
    if (statusTool !== undefined && typeof statusTool !== 'boolean')
      throw new UsageError(`${file}: gateway.statusTool: expected true or false`);
    if (holdMs !== undefined && typeof holdMs !== 'number')
      throw new UsageError(`${file}: gateway.holdMs: expected a number of milliseconds`);
    if (sessionIdleMs !== undefined && !(typeof sessionIdleMs === 'number' && sessionIdleMs >= 0))
      throw new UsageError(`${file}: gateway.sessionIdleMs: expected a number of milliseconds >= 0 (0: never)`);
    block.catalog = { ...block.catalog, ...(catalog as CatalogOptions) };
    block.statusTool = statusTool ?? block.statusTool;
    block.holdMs = holdMs ?? block.holdMs;
    block.sessionIdleMs = sessionIdleMs ?? block.sessionIdleMs;
    if (isolate !== undefined && !(Array.isArray(isolate) && isolate.every((name) => typeof name === 'string')))
      throw new UsageError(`${file}: gateway.isolate: expected a list of server names`);
    block.isolate = isolate ?? block.isolate;
  }
  return block;
}

/** `[host:]port` → where to listen; the host defaults to 127.0.0.1. */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535)
    throw new UsageError(`--http '${text}': expected [host:]port, e.g. 8080 or 127.0.0.1:8080`);
  const host = match[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1';
  return { host, port };
}

export const DEFAULT_DRAIN_MS = 10_000;

export async function runServe(options: ServeOptions): Promise<number> {
  const block = readGatewayBlock(options.configs);
  // Before the gateway is made: its instruments are taken from the provider registered now.
  const exported = options.metrics && options.http !== undefined ? await prometheusMetrics() : undefined;
  const format = options.logFormat ?? 'text';
  const logger = stderrLogger(format, options.err);
  /** A line of the command itself: plain text as ever, or one more JSON entry of the log. */
  const say = (level: 'info' | 'warn', fields: Record<string, unknown>, text: string) =>
    format === 'json' ? logger[level](fields, text) : options.err(`mcp-supervisor serve: ${text}\n`);
  const gateway = createGateway({
    servers: options.servers,
    store: options.store,
    catalog: block.catalog,
    statusTool: options.statusTool || block.statusTool === true,
    holdMs: options.holdMs ?? block.holdMs,
    isolate: block.isolate,
    logger,
  });
  try {
    await gateway.start();
    for (const [name, status] of Object.entries(gateway.supervisor.status()))
      say(
        'info',
        {
          event: 'upstream',
          server: name,
          state: status.state,
          ...(status.lastError ? { error: status.lastError } : {}),
        },
        `${name}: ${status.state}${status.lastError ? ` (${status.lastError})` : ''}`,
      );
    if (options.http === undefined) {
      const stdio = serveGatewayStdio(gateway, {}, (error) =>
        say('warn', { event: 'host error', error: error.message }, error.message),
      );
      await Promise.race([stdio.closed, options.stop]);
      await stdio.close();
      return 0;
    }
    const listen = parseListen(options.http);
    const fd = inheritedSocket();
    const token = options.noAuth ? undefined : (process.env[TOKEN_ENV] ?? generateToken());
    const service = await serveGatewayHttp(gateway, {
      ...listen,
      fd,
      token,
      allowedHosts: options.allowedHosts,
      sessionIdleMs: block.sessionIdleMs,
      strictSessions: options.strictSessions,
      metrics: exported && ((req, res) => exported.handler(req, res)),
    });
    say(
      'info',
      { event: 'listening', url: service.url, pid: process.pid, inherited: fd !== undefined },
      `listening on ${service.url} (pid ${process.pid}${fd === undefined ? '' : ', an inherited socket'})`,
    );
    toldListening();
    if (token === undefined)
      say(
        'warn',
        { event: 'no auth' },
        '--no-auth: no token is required (anyone who can reach the port can call every tool)',
      );
    // Not a log entry: the one way to learn a generated token (set the variable and none is printed).
    else if (process.env[TOKEN_ENV] === undefined)
      options.err(`mcp-supervisor serve: bearer token (set ${TOKEN_ENV} to choose one): ${token}\n`);
    await Promise.race([options.stop, options.reload ? reloaded(service, say) : new Promise<never>(() => {})]);
    const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
    say('info', { event: 'draining', drainMs }, `draining (up to ${drainMs} ms)`);
    await service.drain(drainMs);
    say('info', { event: 'drained' }, 'drained');
    return 0;
  } finally {
    await gateway.close();
    await exported?.close();
  }
}

type Say = (level: 'info' | 'warn', fields: Record<string, unknown>, text: string) => void;

/** Resolves once a SIGHUP's successor listens on this process's socket (a failed one is said, and waited for again). */
function reloaded(service: HttpService, say: Say): Promise<void> {
  return new Promise((resolve) => {
    const reload = () => {
      const fd = service.fd();
      if (fd === undefined) return say('warn', { event: 'reload failed' }, 'reload: no listening socket to hand over');
      say('info', { event: 'reloading' }, 'reloading: starting the new process');
      startSuccessor(fd).then(
        (pid) => {
          process.off('SIGHUP', reload);
          say('info', { event: 'reloaded', successor: pid }, `reloaded: pid ${pid} listens; draining`);
          resolve();
        },
        (error: unknown) =>
          say(
            'warn',
            { event: 'reload failed', error: (error as Error).message },
            `reload failed: ${(error as Error).message}`,
          ),
      );
    };
    process.on('SIGHUP', reload);
  });
}
