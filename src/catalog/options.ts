/**
 * The catalog's options: naming (prefix, separator) and per-server allow/deny filters, checked
 * once with errors that name the field.
 */
import { ConfigError } from '../core/errors.js';

/** A tool's original name, matched exactly (a string) or by a regular expression. */
export type ToolPattern = string | RegExp;

export interface ServerToolOptions {
  /** Only these tools (by original name) are in the catalog. Default: all. */
  allow?: readonly ToolPattern[] | undefined;
  /** These tools (by original name) are left out, after `allow`. */
  deny?: readonly ToolPattern[] | undefined;
  /** This server's prefix instead of its name; `false`: no prefix for this server. */
  prefix?: string | false | undefined;
}

export interface CatalogOptions {
  /** Prefix exposed names with their server's name (`docs__search`). Default true. */
  prefix?: boolean | undefined;
  /** Between prefix and tool name. Default `__`; characters of `[a-zA-Z0-9_-]`, at most 8. */
  separator?: string | undefined;
  /** Per-server filters and prefixes, by server name. */
  servers?: Record<string, ServerToolOptions> | undefined;
  /** Timeout of one server's `tools/list` when the catalog refreshes it. Default: the server's request timeout. */
  listTimeoutMs?: number | undefined;
  /**
   * How long `list()` (`sup.tools()`) waits for a server's listing before it answers without it:
   * the server is named in `missing` (with its state and last error) and the rest is served; its
   * listing goes on, and `changed` says when its tools are back. Default 5000 ms.
   */
  listWaitMs?: number | undefined;
}

export interface ResolvedCatalogOptions {
  prefix: boolean;
  separator: string;
  servers: Record<string, ServerToolOptions>;
  listTimeoutMs: number | undefined;
  listWaitMs: number;
}

const SEPARATOR = /^[a-zA-Z0-9_-]{1,8}$/;
/** A listing `list()` waits for: long enough for a slow server, short enough not to stall an agent's turn. */
const DEFAULT_LIST_WAIT_MS = 5_000;

function invalid(path: string, message: string): ConfigError {
  return new ConfigError(`invalid catalog option: ${path}: ${message}`, [{ path, message }]);
}

function checkPatterns(path: string, patterns: unknown): void {
  if (patterns === undefined) return;
  if (!Array.isArray(patterns)) throw invalid(path, 'expected an array of tool names or regular expressions');
  patterns.forEach((pattern: unknown, index) => {
    if (typeof pattern !== 'string' && !(pattern instanceof RegExp))
      throw invalid(`${path}[${index}]`, 'expected a tool name or a regular expression');
  });
}

export function resolveCatalogOptions(options: CatalogOptions = {}): ResolvedCatalogOptions {
  const separator = options.separator ?? '__';
  if (typeof separator !== 'string' || !SEPARATOR.test(separator))
    throw invalid('separator', 'expected 1 to 8 characters of [a-zA-Z0-9_-]');
  if (options.prefix !== undefined && typeof options.prefix !== 'boolean')
    throw invalid('prefix', 'expected a boolean');
  const listTimeoutMs = options.listTimeoutMs;
  if (listTimeoutMs !== undefined && !(Number.isFinite(listTimeoutMs) && listTimeoutMs > 0))
    throw invalid('listTimeoutMs', 'expected a positive number of milliseconds');
  const listWaitMs = options.listWaitMs ?? DEFAULT_LIST_WAIT_MS;
  if (!(Number.isFinite(listWaitMs) && listWaitMs > 0))
    throw invalid('listWaitMs', 'expected a positive number of milliseconds');
  const servers = options.servers ?? {};
  for (const [name, server] of Object.entries(servers)) {
    if (typeof server !== 'object' || server === null) throw invalid(`servers.${name}`, 'expected an object');
    checkPatterns(`servers.${name}.allow`, server.allow);
    checkPatterns(`servers.${name}.deny`, server.deny);
    const prefix = server.prefix;
    if (prefix !== undefined && prefix !== false && (typeof prefix !== 'string' || prefix.length === 0))
      throw invalid(`servers.${name}.prefix`, 'expected a non-empty string or false');
  }
  return { prefix: options.prefix ?? true, separator, servers, listTimeoutMs, listWaitMs };
}

function matches(patterns: readonly ToolPattern[], tool: string): boolean {
  return patterns.some((pattern) => (typeof pattern === 'string' ? pattern === tool : testOnce(pattern, tool)));
}

/** A global or sticky RegExp keeps state between tests; a copy does not. */
function testOnce(pattern: RegExp, tool: string): boolean {
  return pattern.global || pattern.sticky ? new RegExp(pattern.source, pattern.flags).test(tool) : pattern.test(tool);
}

/** Whether a server's tool passes its allow and deny lists. */
export function isToolAllowed(options: ServerToolOptions | undefined, tool: string): boolean {
  if (!options) return true;
  if (options.allow && !matches(options.allow, tool)) return false;
  return !(options.deny && matches(options.deny, tool));
}

/** The prefix of a server's exposed names; undefined: none. */
export function prefixOf(options: ResolvedCatalogOptions, server: string): string | undefined {
  const own = options.servers[server]?.prefix;
  if (own === false) return undefined;
  if (typeof own === 'string') return own;
  return options.prefix ? server : undefined;
}
