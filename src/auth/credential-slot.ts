/**
 * Where one provider's credentials live, versioned, with a lease lock for renewing them:
 *
 * - in a `Store` (the supervisor's `store`): one entry per (resource, principal, client), holding
 *   every issuer's tokens, client registration and DPoP key (StoredAuthorization). Shared by every
 *   process and replica given the same store. A `TokenStore` given as `auth.store` too is read once
 *   when the store holds nothing yet, so a token file of an earlier version needs no new login.
 * - in a `TokenStore` alone (`auth.store`, `fileTokenStore(path)`, memory by default): as before,
 *   in its own format, keyed by the resource; versions and the lock are this process's own.
 */
import type { Store, StoreEntry, StoreLease, StoreSetResult } from '../store/types.js';
import { memoryStore } from '../store/memory-store.js';
import type { StoredAuthorization, TokenStore } from './types.js';

export interface CredentialSlot {
  /** A short name for warnings (the store's name); never a secret. */
  readonly where: string;
  read(): Promise<StoreEntry<StoredAuthorization> | undefined>;
  /** `lease`: the token of the lease the write is made under; a store refuses it once the lease was taken over. */
  write(value: StoredAuthorization, ifVersion: number, lease?: number): Promise<StoreSetResult<StoredAuthorization>>;
  lock(leaseMs: number, waitMs: number): Promise<StoreLease | undefined>;
  clear(): Promise<void>;
}

/** The store key of a credential: `auth:v1:<resource>|<principal>|<client>`. */
export function credentialKey(resource: string, principal: string | undefined, client: string | undefined): string {
  return `auth:v1:${resource}|${principal ?? ''}|${client ?? ''}`;
}

export function storeSlot(store: Store, key: string, legacy?: { tokens: TokenStore; key: string }): CredentialSlot {
  return {
    where: store.name,
    async read() {
      const entry = await store.get<StoredAuthorization>(key);
      if (entry || !legacy) return entry;
      // Version 0: the first write (compare-and-swap at 0) moves it into the store.
      const imported = await legacy.tokens.load(legacy.key);
      return imported && { value: imported, version: 0 };
    },
    write: (value, ifVersion, lease) =>
      store.set(key, value, { ifVersion, fence: lease === undefined ? undefined : { lock: key, token: lease } }),
    lock: (leaseMs, waitMs) => store.lock(key, { leaseMs, waitMs }),
    async clear() {
      await store.delete(key);
      await legacy?.tokens.clear(legacy.key);
    },
  };
}

/** Per token store and key, this process's version counter; one lock table for all of them. */
const versions = new WeakMap<TokenStore, Map<string, number>>();
const localLocks = memoryStore();
let tokenStoreIds = 0;
const tokenStoreId = new WeakMap<TokenStore, number>();

export function tokenStoreSlot(tokens: TokenStore, key: string): CredentialSlot {
  const counters = versions.get(tokens) ?? new Map<string, number>();
  versions.set(tokens, counters);
  if (!tokenStoreId.has(tokens)) tokenStoreId.set(tokens, ++tokenStoreIds);
  const lockName = `${tokenStoreId.get(tokens)}:${key}`;
  const read = async (): Promise<StoreEntry<StoredAuthorization> | undefined> => {
    const value = await tokens.load(key);
    return value && { value, version: counters.get(key) ?? 0 };
  };
  return {
    where: 'auth.store',
    read,
    // The lock is this process's own: no other process can take it over.
    async write(value, ifVersion) {
      const version = counters.get(key) ?? 0;
      if (ifVersion !== version) return { ok: false, current: await read() };
      await tokens.save(key, value);
      counters.set(key, version + 1);
      return { ok: true, version: version + 1 };
    },
    lock: (leaseMs, waitMs) => localLocks.lock(lockName, { leaseMs, waitMs }),
    async clear() {
      counters.set(key, 0);
      await tokens.clear(key);
    },
  };
}
