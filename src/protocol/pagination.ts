/**
 * The list methods (`tools/list`, `resources/list`, …) are paginated: follow `nextCursor` until the server gives none, checking
 * each page with the method's schema. Bounded: at most MAX_PAGES pages, and a cursor the server
 * already gave (a loop) ends the listing.
 */
import type { z } from 'zod';
import { parseResult } from './results.js';

const MAX_PAGES = 100;

type Page = { nextCursor?: string | undefined; [key: string]: unknown };

/**
 * Every page of `method`, the items under `key` concatenated into the first page's result (its
 * other fields kept, `nextCursor` dropped).
 */
export async function allPages<S extends z.ZodType<Page>>(
  send: (params: Record<string, unknown> | undefined) => Promise<unknown>,
  method: string,
  key: string,
  schema: S,
  server: string,
): Promise<z.infer<S>> {
  const first = parseResult(schema, method, await send(undefined), server) as z.infer<S> & Page;
  const items = [...(first[key] as unknown[])];
  const seen = new Set<string>();
  let cursor = first.nextCursor;
  // SEP-2549: each page has its own `ttlMs`; the whole list is fresh only as long as its stalest page.
  let ttlMs = first.ttlMs;
  for (let page = 1; cursor !== undefined && page < MAX_PAGES && !seen.has(cursor); page++) {
    seen.add(cursor);
    const next = parseResult(schema, method, await send({ cursor }), server) as Page;
    items.push(...(next[key] as unknown[]));
    if (typeof next.ttlMs === 'number') ttlMs = typeof ttlMs === 'number' ? Math.min(ttlMs, next.ttlMs) : next.ttlMs;
    cursor = next.nextCursor;
  }
  return ttlMs === first.ttlMs
    ? { ...first, [key]: items, nextCursor: undefined }
    : { ...first, [key]: items, nextCursor: undefined, ttlMs };
}
