/**
 * What the tool catalog hands out: tools with their exposed names, the servers whose tools are
 * missing, and the change event. Public types.
 */
import type { Tool } from '../protocol/messages.js';
import type { ConnectionState } from '../runtime/context/events.js';

export interface CatalogTool {
  /** The exposed name: unique across the catalog, `^[a-zA-Z0-9_-]{1,64}$`. Calls use it. */
  name: string;
  /** The server the tool belongs to. */
  server: string;
  /** The tool's name on its server. */
  originalName: string;
  description: string | undefined;
  /** The tool's JSON Schema for its arguments, as the server listed it. */
  inputSchema: Tool['inputSchema'];
  /** The tool as the server listed it (title, outputSchema, annotations, _meta, …). */
  definition: Tool;
}

/** A server whose tools are not in the catalog, and why. */
export interface MissingServer {
  server: string;
  /** Its connection state when the catalog was built. */
  state: ConnectionState | 'stopped' | 'disabled';
  /** Why its tools are missing: not listed yet (the server was never ready), the listing failed, or did not answer in time. */
  reason: string;
  /** The server's last error (its `status().lastError`), when it has one: why it is down. */
  lastError?: string | undefined;
}

/** A tool the catalog left out because its definition is invalid (SEP-2243 `x-mcp-header`), and why. */
export interface RejectedCatalogTool {
  server: string;
  /** Its name on the server. */
  tool: string;
  reason: string;
}

export interface CatalogSnapshot {
  /** Every tool of every server, sorted by exposed name. */
  tools: readonly CatalogTool[];
  /** Servers whose tools are not here (down since the start, or their listing failed). */
  missing: readonly MissingServer[];
  /** Tools left out because their definitions are invalid (modern Streamable HTTP servers only). */
  rejected: readonly RejectedCatalogTool[];
  /** Bumped on every change of `tools` or `missing`. */
  version: number;
}

export interface CatalogChange {
  version: number;
  /** The servers whose tools changed, appeared or went missing. */
  servers: string[];
  /** What set it off: a `notifications/tools/list_changed`, a (re)initialization, a server added or removed, or a listing. */
  cause: 'listChanged' | 'ready' | 'added' | 'removed' | 'listed';
}

export interface CatalogEvents extends Record<string, unknown> {
  changed: CatalogChange;
}
