/**
 * A server's tool list in the supervisor's store (issue #26), so a restarted process or another
 * replica serves it without listing again. Only what the server allows to be shared (SEP-2549):
 *
 * - a list with a positive `ttlMs`, kept that long (a list without one has no lifetime to trust);
 * - `cacheScope: 'public'`; a `private` list (or one without a scope) may differ per principal
 *   and is kept only under the principal it was listed for. No principal is known yet (the
 *   supervisor has one credential per server, not one per user): private lists are not stored.
 */
import type { ListToolsResult, Tool } from '../protocol/messages.js';

/** What the catalog asks of the store for one server (runtime/stored/stored-state.ts has each member). */
export interface StoredToolLists {
  tools(principal?: string): Promise<{ tools: Tool[]; freshUntil: number } | undefined>;
  rememberTools(tools: readonly Tool[], ttlMs: number, principal?: string): void;
  forgetTools(principal?: string): void;
}

/** A list served from the store: what the catalog learns from a listing, and where it came from. */
type FromStore = ListToolsResult & { fromStore: true };

/** The stored list while it is fresh, else the server's (asked at once when there is no store). */
export function listFromStore(
  stored: StoredToolLists | undefined,
  list: () => Promise<ListToolsResult>,
): Promise<ListToolsResult | FromStore> {
  if (!stored) return list();
  return stored
    .tools()
    .then((kept) =>
      kept ? { tools: kept.tools, ttlMs: Math.max(0, kept.freshUntil - Date.now()), fromStore: true as const } : list(),
    );
}

/** A list the server said may be shared, for its `ttlMs`. */
export function storeList(stored: StoredToolLists | undefined, result: ListToolsResult): void {
  const { ttlMs, cacheScope } = result as { ttlMs?: unknown; cacheScope?: unknown };
  if (!stored || typeof ttlMs !== 'number' || !(ttlMs > 0) || cacheScope !== 'public') return;
  stored.rememberTools(result.tools, ttlMs);
}
