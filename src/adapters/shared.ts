/**
 * What every framework adapter shares: where the catalog comes from, which of its tools to
 * take, and the call that turns `isError` into a thrown ToolResultError (each framework's error
 * path). Imports nothing of any framework.
 */
import type { ToolCatalog } from '../catalog/catalog.js';
import type { CatalogTool } from '../catalog/types.js';
import { ToolResultError } from '../core/errors.js';
import type { CallToolResult } from '../protocol/messages.js';
import type { RequestOptions } from '../runtime/context/events.js';
import { isObject } from '../core/is-object.js';

/** A supervisor (anything with a `catalog`) or the catalog itself. */
export type CatalogSource = ToolCatalog | { readonly catalog: ToolCatalog };

export interface AdapterOptions {
  /** Only the tools of these servers. Default: every server's. */
  servers?: readonly string[] | undefined;
  /** Only the tools this returns true for (after `servers`). */
  filter?: ((tool: CatalogTool) => boolean) | undefined;
  /** Options of every call (timeout, progress, retry); the framework's abort signal is added. */
  requestOptions?: Omit<RequestOptions, 'signal'> | undefined;
}

export function catalogOf(source: CatalogSource): ToolCatalog {
  return 'catalog' in source ? source.catalog : source;
}

/** The catalog's tools that the options select, listed fresh (cached when nothing changed). */
export async function selectTools(catalog: ToolCatalog, options: AdapterOptions): Promise<readonly CatalogTool[]> {
  const { tools } = await catalog.list();
  const servers = options.servers;
  const filter = options.filter;
  if (!servers && !filter) return tools;
  return tools.filter((tool) => (!servers || servers.includes(tool.server)) && (!filter || filter(tool)));
}

/**
 * Calls a tool by its identity (server and original name); a result with `isError` rejects
 * with ToolResultError, which carries the result.
 */
export async function callForFramework(
  catalog: ToolCatalog,
  tool: CatalogTool,
  args: unknown,
  options: AdapterOptions,
  signal: AbortSignal | undefined,
): Promise<CallToolResult> {
  const result = await catalog.callServerTool(tool.server, tool.originalName, toArguments(args), {
    ...options.requestOptions,
    signal,
  });
  if (result.isError === true) throw new ToolResultError(tool.name, result, { server: tool.server });
  return result;
}

function toArguments(args: unknown): Record<string, unknown> {
  return isObject(args) ? args : {};
}

/** The text parts of a result, joined; other parts as JSON (a model reads text). */
export function resultText(result: CallToolResult): string {
  return result.content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part)))
    .join('\n');
}
