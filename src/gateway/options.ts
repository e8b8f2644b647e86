/**
 * What a gateway is built from: the servers (as a config file holds them), the catalog's naming
 * and filters, how long a call to a server that is down is held, and the optional status tool.
 */
import type { CatalogOptions } from '../catalog/options.js';
import type { ServerConfigInput } from '../config/server-config.js';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../observe/logger.js';
import type { Store } from '../store/types.js';

export interface GatewayOptions {
  servers: Record<string, ServerConfigInput>;
  /** Naming (prefix, separator) and per-server tool filters, as for `sup.catalog`. */
  catalog?: CatalogOptions | undefined;
  /**
   * How long a request to a server that is not serving waits for it (held) before it fails with
   * an error naming the server and why. Default 30 000 ms: under the 60 s most hosts wait.
   */
  holdMs?: number | undefined;
  /** Adds the `mcp_supervisor_status` tool: every server's state, for the model. Default false. */
  statusTool?: boolean | undefined;
  /** Operators' log (transitions, restarts); silent by default. Never the host's channel. */
  logger?: Logger | undefined;
  /**
   * Shared durable state: the upstream connections' (credentials, era verdicts), and the 2025 host
   * sessions of the HTTP service, so that a restarted gateway or another replica serves them.
   * Default: none for the upstream connections, one in memory for the host sessions.
   */
  store?: Store | undefined;
  /**
   * Servers that keep state per client (a browser, a shell, a transaction): each 2025-era host
   * session gets a connection of its own to them, opened on its first request and closed with
   * the session. Every other server is one connection shared by all host sessions (the default).
   * 2026-07-28 hosts have no session: their requests use the shared connection.
   */
  isolate?: readonly string[] | undefined;
}

export interface ResolvedGatewayOptions extends GatewayOptions {
  holdMs: number;
  statusTool: boolean;
  isolated: ReadonlySet<string>;
}

export const STATUS_TOOL_NAME = 'mcp_supervisor_status';

export function resolveGatewayOptions(options: GatewayOptions): ResolvedGatewayOptions {
  const holdMs = options.holdMs ?? 30_000;
  if (!(Number.isFinite(holdMs) && holdMs >= 0))
    throw new ConfigError(`invalid gateway option: holdMs: expected a number of milliseconds >= 0, not ${holdMs}`, [
      { path: 'holdMs', message: 'expected a number of milliseconds >= 0' },
    ]);
  const isolated = new Set(options.isolate ?? []);
  for (const name of isolated)
    if (!Object.hasOwn(options.servers, name))
      throw new ConfigError(`invalid gateway option: isolate: '${name}' is not a configured server`, [
        { path: 'isolate', message: `'${name}' is not a configured server` },
      ]);
  return { ...options, holdMs, statusTool: options.statusTool ?? false, isolated };
}
