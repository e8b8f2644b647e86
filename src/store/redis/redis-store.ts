/**
 * The store in Redis (or Valkey), for replicas on many machines. The official `redis` client is
 * an optional peer dependency, imported and connected as soon as the store is made (the main
 * entry never loads it): loading the client takes a few hundred ms, paid beside whatever the
 * process does before its first connection rather than by it; or bring a client of your own. Compare-and-swap, deletes at a version and lock
 * grants are Lua scripts (scripts.ts); locks are `SET NX PX` with a fencing token from `INCR`.
 *
 * Redis unreachable (down, restarting, a network partition): every operation rejects at once with
 * a StoreUnavailableError (no offline queue: nothing runs late), the client reconnects in the
 * background, and operations work again when Redis is back.
 */
import { ConfigError } from '../../core/errors.js';
import { StoreFencedError, StoreUnavailableError } from '../errors.js';
import { checkFence, checkLockOptions, checkStoreKey, jsonCopy } from '../checks.js';
import type { Store, StoreEntry, StoreLease, StoreLockOptions, StoreSetOptions, StoreSetResult } from '../types.js';
import { DELETE_SCRIPT, LOCK_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT, SET_SCRIPT } from './scripts.js';

/** What the store uses of a client: the official `redis` client (v4 to v6) has it. */
export interface RedisClientLike {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  connect(): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  hGetAll(key: string): Promise<Record<string, string>>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  close?(): Promise<unknown>;
  quit?(): Promise<unknown>;
}

export type RedisStoreOptions = (
  | {
      /** `redis://[[user]:password@]host:port[/db]`, or `rediss://` for TLS. */
      url: string;
      client?: undefined;
    }
  | {
      /** A client of your own (connected, or connected here); `close()` leaves it open. */
      client: RedisClientLike;
      url?: undefined;
    }
) & {
  /** Prefix of every key the store writes. Default `mcp-supervisor:`. */
  prefix?: string | undefined;
  /** How long an operation may wait for Redis before it rejects, in ms. Default 2000. */
  timeoutMs?: number | undefined;
  /** How long a lock waiter waits between attempts, in ms. Default 25. */
  pollMs?: number | undefined;
};

export function redisStore(options: RedisStoreOptions): Store {
  if (typeof options !== 'object' || options === null || (!options.url && !options.client)) {
    throw new ConfigError('redisStore needs { url } or { client }');
  }
  if (options.url !== undefined && !URL.canParse(options.url)) {
    throw new ConfigError('redisStore: url must be a redis:// or rediss:// URL');
  }
  const prefix = options.prefix ?? 'mcp-supervisor:';
  const timeoutMs = options.timeoutMs ?? 2_000;
  const pollMs = options.pollMs ?? 25;
  const name = options.url ? `redis ${hostOf(options.url)}` : 'redis (a given client)';
  const owned = options.client === undefined;
  let client: RedisClientLike | undefined = options.client;
  let opening: Promise<RedisClientLike> | undefined;
  let connecting: Promise<void> | undefined;

  const open = (): Promise<RedisClientLike> =>
    (opening ??= (async () => {
      if (!client) {
        const redis = (await import('redis').catch((cause: unknown) => {
          throw new ConfigError(
            `redisStore needs the 'redis' package (npm install redis): ${(cause as Error).message}`,
          );
        })) as { createClient(this: void, options: unknown): RedisClientLike };
        client = redis.createClient({
          url: options.url,
          // A command while Redis is away fails at once instead of running whenever it comes back.
          disableOfflineQueue: true,
          socket: {
            connectTimeout: timeoutMs,
            reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1_000),
          },
        });
      }
      // Without a listener, an 'error' event (Redis went away) would end the process.
      client.on('error', () => undefined);
      if (!client.isOpen) client.connect().catch(() => undefined);
      return client;
    })());

  /** One operation, or a StoreUnavailableError when Redis is not there (never a late run). */
  const run = async <T>(operation: (redis: RedisClientLike) => Promise<T>): Promise<T> => {
    const redis = await open();
    let timer: NodeJS.Timeout | undefined;
    try {
      // Only the first operation waits for the first connection; later, Redis away fails at once.
      if (!redis.isReady) await (connecting ??= waitReady(redis, timeoutMs));
      return await Promise.race([
        operation(redis),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new StoreUnavailableError(name, reasonOf(error), { cause: error });
    } finally {
      clearTimeout(timer);
    }
  };

  // Load and connect now; the first operation waits only for what is left (a failure is its error).
  open().catch(() => undefined);

  const evalScript = (redis: RedisClientLike, script: string, keys: string[], args: string[]) =>
    redis.eval(script, { keys, arguments: args });

  const leaseOf = (lockKey: string, token: number, leaseMs: number): StoreLease => ({
    token,
    renew: async () =>
      (await run((r) => evalScript(r, RENEW_SCRIPT, [lockKey], [String(token), String(leaseMs)]))) === 1,
    release: async () => {
      await run((r) => evalScript(r, RELEASE_SCRIPT, [lockKey], [String(token)]));
    },
  });

  return {
    name,
    async get<T>(key: string): Promise<StoreEntry<T> | undefined> {
      checkStoreKey(key);
      const hash = await run((r) => r.hGetAll(`${prefix}entry:${key}`));
      if (hash['n'] === undefined || hash['v'] === undefined) return undefined;
      return { value: JSON.parse(hash['v']) as T, version: Number(hash['n']) };
    },
    async set<T>(key: string, value: T, setOptions: StoreSetOptions = {}): Promise<StoreSetResult<T>> {
      checkStoreKey(key);
      const json = jsonCopy(key, value);
      const fence = setOptions.fence;
      if (fence) checkFence(fence);
      const reply = (await run((r) =>
        evalScript(
          r,
          SET_SCRIPT,
          [`${prefix}entry:${key}`, `${prefix}version`, `${prefix}fence:${fence ? fence.lock : key}`],
          [
            json,
            setOptions.ifVersion === undefined ? '' : String(setOptions.ifVersion),
            ttlArgument(setOptions.ttlMs),
            fence ? String(fence.token) : '',
          ],
        ),
      )) as [number, string, string?];
      if (reply[0] === 1) return { ok: true, version: Number(reply[1]) };
      if (reply[0] === 2) throw new StoreFencedError(name, fence!.token, Number(reply[1]));
      const current = reply[1] ? { value: JSON.parse(reply[2] ?? 'null') as T, version: Number(reply[1]) } : undefined;
      return { ok: false, current };
    },
    async delete(key, deleteOptions = {}) {
      checkStoreKey(key);
      const ifVersion = deleteOptions.ifVersion === undefined ? '' : String(deleteOptions.ifVersion);
      return (await run((r) => evalScript(r, DELETE_SCRIPT, [`${prefix}entry:${key}`], [ifVersion]))) === 1;
    },
    async lock(lockName: string, lockOptions: StoreLockOptions): Promise<StoreLease | undefined> {
      checkStoreKey(lockName);
      checkLockOptions(lockOptions);
      const lockKey = `${prefix}lock:${lockName}`;
      const leaseMs = Math.max(1, Math.ceil(lockOptions.leaseMs));
      const deadline = Date.now() + (lockOptions.waitMs ?? 0);
      for (;;) {
        const token = Number(
          await run((r) => evalScript(r, LOCK_SCRIPT, [lockKey, `${prefix}fence:${lockName}`], [String(leaseMs)])),
        );
        if (token > 0) return leaseOf(lockKey, token, leaseMs);
        const left = deadline - Date.now();
        if (left <= 0) return undefined;
        await new Promise((wake) => setTimeout(wake, Math.min(left, pollMs)));
      }
    },
    async close() {
      const redis = client;
      if (!owned || !redis || !opening) return;
      opening = undefined;
      connecting = undefined;
      client = undefined;
      await (redis.close ?? redis.quit)?.call(redis).catch(() => undefined);
    },
  };
}

function ttlArgument(ttlMs: number | undefined): string {
  if (ttlMs === undefined) return '';
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new ConfigError(`a store ttlMs must be > 0 (got ${ttlMs})`);
  return String(Math.ceil(ttlMs));
}

/** Waits (a little) for a client that is connecting; Redis that stays away is an error. */
async function waitReady(redis: RedisClientLike, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + Math.min(timeoutMs, 500);
  while (!redis.isReady) {
    if (Date.now() >= deadline) throw new Error('not connected');
    await new Promise((wake) => setTimeout(wake, 10));
  }
}

/** host:port of a Redis URL, never its password. */
function hostOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}

/** A short reason, free of secrets: the error's code or first line (no URL with a password). */
function reasonOf(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string') return e.code;
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]! : String(error);
  return message.replace(/\/\/[^@/]*@/g, '//***@').slice(0, 200);
}
