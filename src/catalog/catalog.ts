/**
 * The tool catalog: every tool of every supervised server, under names LLM providers accept,
 * cached and kept fresh. A server's list is fetched again after `notifications/tools/list_changed`,
 * after every (re)initialization or restart (a restarted server may have other tools), and when a
 * server that was down becomes ready; `changed` tells the application. Calls route by exposed
 * name to the server's handle, which holds them while the server is down, like any request.
 *
 * Until the first `list()` (or a `changed` listener) the catalog is passive: invalidations only
 * mark lists stale, so a supervisor nobody asks for tools sends no `tools/list`.
 */
import type { ConnectionFact, FactOf } from '../../machines/connection.facts.js';
import { describeError, UnknownToolError } from '../core/errors.js';
import { Emitter } from '../core/emitter.js';
import type { CallToolResult, ListToolsResult, Tool } from '../protocol/messages.js';
import type { ConnectionState, RequestOptions, TransitionEvent } from '../runtime/context/events.js';
import {
  isToolAllowed,
  prefixOf,
  resolveCatalogOptions,
  type CatalogOptions,
  type ResolvedCatalogOptions,
} from './options.js';
import { assignNames, type NameSource } from './tool-names.js';
import type {
  CatalogChange,
  CatalogEvents,
  CatalogSnapshot,
  CatalogTool,
  MissingServer,
  RejectedCatalogTool,
} from './types.js';
import type { RejectedTool } from '../runtime/requests/tool-headers.js';
import { listFromStore, storeList, type StoredToolLists } from './stored-lists.js';

/** What the catalog needs of a server's handle. */
export interface ToolServer {
  listTools(options?: RequestOptions): Promise<ListToolsResult>;
  callTool(name: string, args?: Record<string, unknown>, options?: RequestOptions): Promise<CallToolResult>;
  status(): { state: ConnectionState | 'stopped' | 'disabled'; lastError: string | undefined };
  /** The tools its last list left out (invalid definitions), and why. */
  rejectedTools?(): RejectedTool[];
  /** Its lists in the supervisor's store (stored-lists.ts); undefined without a store. */
  readonly storedTools?: StoredToolLists | undefined;
}

/** What the catalog needs of its supervisor: the servers configured now. */
export interface ToolServers {
  names(): Iterable<string>;
  get(name: string): ToolServer | undefined;
}

/** What the supervisor tells the catalog. */
export type CatalogSignal =
  /** A server's move: its transition and the lifecycle facts that came with it. */
  | { type: 'transition'; transition: TransitionEvent; facts: readonly ConnectionFact[] }
  | { type: 'listChanged'; server: string }
  | { type: 'added'; server: string }
  | { type: 'removed'; server: string };

/**
 * The facts after which a server's list is fetched again: a new session (first, re-initialized,
 * restarted, revived) may have other tools, and so may new credentials on the same session. A
 * probe that found the session well changes nothing.
 */
export const RELIST_AFTER = {
  'session started': () => true,
  authorized: (fact) => fact.sessionKept,
} satisfies { [K in ConnectionFact['type']]?: (fact: FactOf<K>) => boolean };

function relists(fact: ConnectionFact): boolean {
  return (RELIST_AFTER as Record<string, ((fact: ConnectionFact) => boolean) | undefined>)[fact.type]?.(fact) === true;
}

interface ServerEntry {
  readonly name: string;
  state: ConnectionState | 'stopped' | 'disabled';
  /** The last list the server gave (unfiltered); undefined: never listed. */
  tools: readonly Tool[] | undefined;
  /** The list may be out of date (list_changed, a new session). */
  stale: boolean;
  /** SEP-2549: when the list's `ttlMs` runs out (epoch ms); undefined: no hint, fresh until invalidated. */
  freshUntil: number | undefined;
  /** Tools the server's last list had that the handle left out. */
  rejected: readonly RejectedTool[];
  /** Bumped on every invalidation: a listing that started before it is stale on arrival. */
  generation: number;
  /** The store was asked for this server's list (once per process: later listings ask the server). */
  askedStore: boolean;
  listing: Promise<void> | undefined;
  /** Why the last listing failed. */
  error: string | undefined;
  /** `list()` stopped waiting for this listing (`listWaitMs`): missing until it answers. */
  overdue: boolean;
}

export class ToolCatalog {
  /**
   * One entry per server, built on first use (a list, a snapshot, a listener): an agent that
   * never reads the catalog (every `connect()`) holds none. Until then what the feed says needs
   * no record: a new entry reads the server's state, and starts stale.
   */
  private table: Map<string, ServerEntry> | undefined = undefined;
  private readonly events = new Emitter<CatalogEvents>();
  private readonly options: ResolvedCatalogOptions;
  private active = false;
  private version = 0;
  private built: { snapshot: CatalogSnapshot; byName: Map<string, CatalogTool> } | undefined;

  constructor(
    private readonly servers: ToolServers,
    options?: CatalogOptions,
  ) {
    this.options = resolveCatalogOptions(options);
  }

  private get entries(): Map<string, ServerEntry> {
    if (this.table) return this.table;
    this.table = new Map();
    for (const name of this.servers.names()) this.table.set(name, this.newEntry(name));
    return this.table;
  }

  /**
   * Every tool of every server. Lists that are stale, or were never fetched, are fetched first
   * from the servers that are ready; the others keep their last list (calls to them wait for
   * the server), or are named in `missing`. Never rejects because of one server, and never waits
   * longer than `listWaitMs` for one: a server whose listing has not answered by then (it may
   * have just died) is named in `missing`, and the rest is served.
   */
  async list(): Promise<CatalogSnapshot> {
    this.active = true;
    let waits: Promise<void>[] | undefined;
    let waited: ServerEntry[] | undefined;
    const now = Date.now();
    for (const entry of this.entries.values()) {
      if (entry.state !== 'ready') continue;
      if (entry.freshUntil !== undefined && now >= entry.freshUntil && !entry.listing) this.markExpired(entry);
      if (entry.stale || entry.tools === undefined || entry.listing) {
        (waits ??= []).push(this.refresh(entry));
        (waited ??= []).push(entry);
      }
    }
    if (waits && !(await settledWithin(waits, this.options.listWaitMs))) {
      for (const entry of waited!) if (entry.listing) this.markOverdue(entry);
    }
    return this.snapshot();
  }

  /** The catalog as it is now, without asking any server. */
  snapshot(): CatalogSnapshot {
    return this.build().snapshot;
  }

  /** A tool by its exposed name, as the catalog is now. */
  tool(name: string): CatalogTool | undefined {
    return this.build().byName.get(name);
  }

  /**
   * Calls a tool by its exposed name on its server, with the request's options (timeout,
   * signal, progress). A name not in the catalog is looked up again after a refresh, then
   * rejects with UnknownToolError.
   */
  async call(name: string, args: Record<string, unknown> = {}, options?: RequestOptions): Promise<CallToolResult> {
    let tool = this.tool(name);
    if (!tool) {
      await this.list();
      tool = this.tool(name);
    }
    if (!tool) throw new UnknownToolError(name);
    return this.callServerTool(tool.server, tool.originalName, args, options);
  }

  /**
   * Calls a tool by its server and original name (what an adapter captured when it built its
   * tools: exposed names may shift when servers come and go, the identity does not).
   */
  callServerTool(
    server: string,
    tool: string,
    args: Record<string, unknown> = {},
    options?: RequestOptions,
  ): Promise<CallToolResult> {
    const handle = this.servers.get(server);
    if (!handle) return Promise.reject(new UnknownToolError(`${server}/${tool}`));
    return handle.callTool(tool, args, options);
  }

  /** Marks one server's list (or every list) stale: the next `list()` fetches it again. */
  invalidate(server?: string): void {
    const targets = server === undefined ? [...this.entries.values()] : [this.entries.get(server)];
    for (const entry of targets) if (entry) this.markStale(entry, 'listed');
  }

  /** `changed`: the tools or the missing servers changed. Listening activates the catalog. */
  on<K extends keyof CatalogEvents>(event: K, listener: (payload: CatalogEvents[K]) => void): () => void {
    this.activate();
    return this.events.on(event, listener);
  }

  off<K extends keyof CatalogEvents>(event: K, listener: (payload: CatalogEvents[K]) => void): void {
    this.events.off(event, listener);
  }

  /** @internal The supervisor's feed: transitions, list changes, servers added and removed. */
  observe(signal: CatalogSignal): void {
    switch (signal.type) {
      case 'transition': {
        const { server, to } = signal.transition;
        const entry = this.table?.get(server);
        if (!entry) return;
        entry.state = to;
        if (entry.tools === undefined) this.built = undefined; // `missing` shows the state
        if (signal.facts.some(relists)) this.markStale(entry, 'ready');
        return;
      }
      case 'listChanged': {
        const entry = this.table?.get(signal.server);
        this.servers.get(signal.server)?.storedTools?.forgetTools(); // no process may serve the old list
        if (entry) this.markStale(entry, 'listChanged');
        return;
      }
      case 'added': {
        if (!this.table) return this.changed([signal.server], 'added');
        if (this.table.has(signal.server)) return;
        this.table.set(signal.server, this.newEntry(signal.server));
        this.changed([signal.server], 'added');
        return;
      }
      case 'removed':
        if (!this.table) return this.changed([signal.server], 'removed');
        if (this.table.delete(signal.server)) this.changed([signal.server], 'removed');
        return;
    }
  }

  private newEntry(name: string): ServerEntry {
    const state = this.servers.get(name)?.status().state ?? 'stopped';
    return {
      name,
      state,
      tools: undefined,
      stale: true,
      freshUntil: undefined,
      rejected: [],
      generation: 0,
      askedStore: false,
      listing: undefined,
      error: undefined,
      overdue: false,
    };
  }

  /** Its listing did not answer within `listWaitMs`: named in `missing` until it does. */
  private markOverdue(entry: ServerEntry): void {
    if (entry.overdue) return;
    entry.overdue = true;
    this.changed([entry.name], 'listed');
  }

  private activate(): void {
    if (this.active) return;
    this.active = true;
    for (const entry of this.entries.values()) if (entry.stale && entry.state === 'ready') void this.refresh(entry);
  }

  /** The list's `ttlMs` ran out: stale, fetched by this `list()` (not in the background: TTL is no polling interval). */
  private markExpired(entry: ServerEntry): void {
    entry.stale = true;
    entry.freshUntil = undefined;
  }

  private markStale(entry: ServerEntry, cause: CatalogChange['cause']): void {
    entry.stale = true;
    entry.generation++;
    if (this.active && entry.state === 'ready') void this.refresh(entry, cause);
  }

  /** Fetches a server's list once at a time; a list invalidated meanwhile is fetched again. */
  private refresh(entry: ServerEntry, cause: CatalogChange['cause'] = 'listed'): Promise<void> {
    if (entry.listing) return entry.listing;
    const server = this.servers.get(entry.name);
    if (!server) return Promise.resolve();
    const generation = entry.generation;
    // The first list of a process may come from the store, while the server's `ttlMs` lasts.
    const stored = entry.askedStore ? undefined : server.storedTools;
    entry.askedStore = true;
    const listing = listFromStore(stored, () =>
      server.listTools(
        this.options.listTimeoutMs === undefined ? undefined : { timeoutMs: this.options.listTimeoutMs },
      ),
    )
      .then(
        (result) => this.listed(entry, generation, result, server, cause),
        (error: unknown) => this.listingFailed(entry, error, cause),
      )
      .finally(() => {
        if (entry.listing === listing) entry.listing = undefined;
      })
      .then(() => {
        // Invalidated while listing: what arrived may predate the change.
        if (entry.stale && this.entries.get(entry.name) === entry && entry.state === 'ready' && this.active)
          return this.refresh(entry, cause);
      });
    entry.listing = listing;
    return listing;
  }

  private listed(
    entry: ServerEntry,
    generation: number,
    result: ListToolsResult,
    server: ToolServer,
    cause: CatalogChange['cause'],
  ): void {
    if (this.entries.get(entry.name) !== entry) return;
    const tools = result.tools;
    const rejected = server.rejectedTools?.() ?? [];
    const wasMissing = entry.tools === undefined || entry.overdue;
    entry.overdue = false;
    const different =
      wasMissing || !sameTools(entry.tools!, tools) || JSON.stringify(entry.rejected) !== JSON.stringify(rejected);
    entry.tools = tools;
    entry.rejected = rejected;
    entry.freshUntil = freshUntil(result.ttlMs);
    if (!('fromStore' in result)) storeList(server.storedTools, result);
    entry.error = undefined;
    if (entry.generation === generation) entry.stale = false;
    if (different) this.changed([entry.name], cause);
  }

  private listingFailed(entry: ServerEntry, error: unknown, cause: CatalogChange['cause']): void {
    if (this.entries.get(entry.name) !== entry) return;
    const first = entry.error === undefined;
    const wasOverdue = entry.overdue;
    entry.error = describeError(error);
    entry.overdue = false;
    // Only a server with no tools is missing; one with a list keeps it (its calls wait for it).
    if ((entry.tools === undefined && first) || wasOverdue) this.changed([entry.name], cause);
  }

  private changed(servers: string[], cause: CatalogChange['cause']): void {
    this.built = undefined;
    this.version++;
    this.events.emit('changed', { version: this.version, servers, cause });
  }

  private missingReason(entry: ServerEntry): string {
    if (entry.overdue)
      return `its tools/list did not answer within ${this.options.listWaitMs} ms (the server is ${entry.state}); still listing`;
    if (entry.error !== undefined) return `listing its tools failed: ${entry.error}`;
    return entry.state === 'ready' ? 'its tools are being listed' : `not listed yet: the server is ${entry.state}`;
  }

  private build(): { snapshot: CatalogSnapshot; byName: Map<string, CatalogTool> } {
    if (this.built) return this.built;
    const sources: NameSource[] = [];
    const picked: { server: string; tool: Tool }[] = [];
    const missing: MissingServer[] = [];
    const rejected: RejectedCatalogTool[] = [];
    for (const entry of this.entries.values()) {
      for (const tool of entry.rejected) rejected.push({ server: entry.name, ...tool });
      if (entry.tools === undefined || entry.overdue) {
        const lastError = this.servers.get(entry.name)?.status().lastError;
        missing.push({ server: entry.name, state: entry.state, reason: this.missingReason(entry), lastError });
        continue;
      }
      const filter = this.options.servers[entry.name];
      const prefix = prefixOf(this.options, entry.name);
      for (const tool of entry.tools) {
        if (!isToolAllowed(filter, tool.name)) continue;
        sources.push({ server: entry.name, tool: tool.name, prefix });
        picked.push({ server: entry.name, tool });
      }
    }
    const names = assignNames(sources, this.options.separator);
    const byName = new Map<string, CatalogTool>();
    const tools = picked.map(({ server, tool }, index): CatalogTool => {
      const exposed: CatalogTool = {
        name: names[index]!,
        server,
        originalName: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        definition: tool,
      };
      byName.set(exposed.name, exposed);
      return exposed;
    });
    tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    missing.sort((a, b) => (a.server < b.server ? -1 : 1));
    this.built = { snapshot: { tools, missing, rejected, version: this.version }, byName };
    return this.built;
  }
}

// When a listed tool list is fresh, when a new one changed anything, and a bounded wait for listings.

/** A list's `ttlMs` as a deadline: negative counts as 0 (stale at once), no number as no hint. */
export function freshUntil(ttlMs: unknown): number | undefined {
  if (typeof ttlMs !== 'number' || Number.isNaN(ttlMs)) return undefined;
  return Date.now() + Math.max(0, ttlMs);
}

/** True when every promise settled within `ms`; false when the wait ran out first (they go on). */
async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([Promise.allSettled(promises).then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Same tools, same definitions: a list_changed that changed nothing is no change. */
function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (JSON.stringify(a[i]) !== JSON.stringify(b[i])) return false;
  return true;
}
