/** When a listed tool list is fresh, when a new one changed anything, and a bounded wait for listings. */
import type { Tool } from '../protocol/messages.js';

/** A list's `ttlMs` as a deadline: negative counts as 0 (stale at once), no number as no hint. */
export function freshUntil(ttlMs: unknown): number | undefined {
  if (typeof ttlMs !== 'number' || Number.isNaN(ttlMs)) return undefined;
  return Date.now() + Math.max(0, ttlMs);
}

/** True when every promise settled within `ms`; false when the wait ran out first (they go on). */
export async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([Promise.allSettled(promises).then(() => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Same tools, same definitions: a list_changed that changed nothing is no change. */
export function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (JSON.stringify(a[i]) !== JSON.stringify(b[i])) return false;
  return true;
}
