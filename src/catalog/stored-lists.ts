/**
 * A server's tool list in the supervisor's store (issue #26), so a restarted process or another
 * replica serves it without listing again. Only what the server allows to be cached (SEP-2549),
 * for its positive `ttlMs` (a list without one has no lifetime to trust), by its `cacheScope`:
 *
 * - `public`: no user-specific data; shared by every process on the store;
 * - `private` (also what a list without a scope is): reused only within the same authorization
 *   context, so kept under the server's credential (`auth.principal` and client), never served to
 *   another principal. A server whose requests carry no such credential (static headers, an
 *   AuthProvider of its own) has no context the store can name: its private lists are not stored.
 */
import type { ListToolsResult, Tool } from '../protocol/messages.js';
import type { ListScope } from '../store/state-keys.js';

/** What the catalog asks of the store for one server (runtime/stored/stored-state.ts has each member). */
export interface StoredToolLists {
  /** The stored list of that scope (a private one only under the server's authorization context). */
  tools(scope: ListScope): Promise<{ tools: Tool[]; freshUntil: number } | undefined>;
  rememberTools(tools: readonly Tool[], ttlMs: number, scope: ListScope): void;
  /** The list changed on the server: drops the public list and this context's private one. */
  forgetTools(): void;
}

/** A list served from the store: what the catalog learns from a listing, and where it came from. */
type FromStore = ListToolsResult & { fromStore: true };

/** The stored list while it is fresh (the public one first), else the server's (asked at once without a store). */
export function listFromStore(
  stored: StoredToolLists | undefined,
  list: () => Promise<ListToolsResult>,
): Promise<ListToolsResult | FromStore> {
  if (!stored) return list();
  return Promise.all([stored.tools('public'), stored.tools('private')]).then(([shared, own]) => {
    const kept = shared ?? own;
    return kept
      ? { tools: kept.tools, ttlMs: Math.max(0, kept.freshUntil - Date.now()), fromStore: true as const }
      : list();
  });
}

/** A list the server allows to be cached, for its `ttlMs`, in its scope. */
export function storeList(stored: StoredToolLists | undefined, result: ListToolsResult): void {
  const { ttlMs, cacheScope } = result as { ttlMs?: unknown; cacheScope?: unknown };
  if (!stored || typeof ttlMs !== 'number' || !(ttlMs > 0)) return;
  stored.rememberTools(result.tools, ttlMs, cacheScope === 'public' ? 'public' : 'private');
}
