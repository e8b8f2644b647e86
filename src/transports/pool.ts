/**
 * One keep-alive undici Pool per origin, shared by every transport that talks to it and
 * closed when the last one lets go.
 */
import { Pool } from 'undici';

interface Entry {
  pool: Pool;
  users: number;
}

const pools = new Map<string, Entry>();

export function acquirePool(origin: string): Pool {
  let entry = pools.get(origin);
  if (!entry) {
    entry = {
      pool: new Pool(origin, {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        // Long-lived SSE bodies must not be cut by undici's default 300 s body timeout;
        // every request sets its own timeouts.
        bodyTimeout: 0,
      }),
      users: 0,
    };
    pools.set(origin, entry);
  }
  entry.users++;
  return entry.pool;
}

export async function releasePool(origin: string): Promise<void> {
  const entry = pools.get(origin);
  if (!entry) return;
  entry.users--;
  if (entry.users > 0) return;
  pools.delete(origin);
  await entry.pool.destroy().catch(() => {});
}
