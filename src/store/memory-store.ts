/**
 * The store of one process: a Map. The default for `connect()` in code and for tests; what it
 * holds is gone when the process ends. Values are copied in and out (JSON), as every other store
 * does, so a caller never mutates what is stored.
 */
import type { Store, StoreEntry, StoreLease, StoreLockOptions, StoreSetOptions, StoreSetResult } from './types.js';
import { checkFence, checkLockOptions, checkStoreKey, jsonCopy } from './checks.js';
import { StoreFencedError } from './errors.js';

interface Held {
  value: string;
  version: number;
  expiresAt: number | undefined;
}

interface LockState {
  token: number;
  holder: number | undefined;
  until: number;
  waiters: Array<() => void>;
}

export function memoryStore(): Store {
  const entries = new Map<string, Held>();
  const locks = new Map<string, LockState>();
  let versions = 0;

  const live = (key: string): Held | undefined => {
    const held = entries.get(key);
    if (held?.expiresAt !== undefined && held.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return held;
  };

  return {
    name: 'memory',
    async get<T>(key: string): Promise<StoreEntry<T> | undefined> {
      checkStoreKey(key);
      const held = live(key);
      return held && { value: JSON.parse(held.value) as T, version: held.version };
    },
    async set<T>(key: string, value: T, options: StoreSetOptions = {}): Promise<StoreSetResult<T>> {
      checkStoreKey(key);
      const text = jsonCopy(key, value);
      if (options.fence) {
        checkFence(options.fence);
        const newest = locks.get(options.fence.lock)?.token ?? 0;
        if (newest > options.fence.token) throw new StoreFencedError('memory', options.fence.token, newest);
      }
      const held = live(key);
      if (options.ifVersion !== undefined && (held?.version ?? 0) !== options.ifVersion) {
        return { ok: false, current: held && { value: JSON.parse(held.value) as T, version: held.version } };
      }
      // Versions grow across deletes too, so a version once seen never names another value.
      const version = ++versions;
      const expiresAt = options.ttlMs === undefined ? undefined : Date.now() + options.ttlMs;
      entries.set(key, { value: text, version, expiresAt });
      return { ok: true, version };
    },
    async delete(key, options = {}) {
      checkStoreKey(key);
      const held = live(key);
      if (held === undefined) return false;
      if (options.ifVersion !== undefined && held.version !== options.ifVersion) return false;
      return entries.delete(key);
    },
    async lock(name: string, options: StoreLockOptions): Promise<StoreLease | undefined> {
      checkStoreKey(name);
      checkLockOptions(options);
      const state = locks.get(name) ?? { token: 0, holder: undefined, until: 0, waiters: [] };
      locks.set(name, state);
      const deadline = Date.now() + (options.waitMs ?? 0);
      for (;;) {
        const now = Date.now();
        if (state.holder === undefined || state.until <= now) {
          const token = ++state.token;
          state.holder = token;
          state.until = now + options.leaseMs;
          return lease(state, token, options.leaseMs);
        }
        const wait = Math.min(deadline, state.until) - now;
        if (now >= deadline) return undefined;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(1, wait));
          state.waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

function lease(state: LockState, token: number, leaseMs: number): StoreLease {
  const held = () => state.holder === token && state.until > Date.now();
  return {
    token,
    async renew() {
      if (!held()) return false;
      state.until = Date.now() + leaseMs;
      return true;
    },
    async release() {
      if (state.holder !== token) return;
      state.holder = undefined;
      for (const wake of state.waiters.splice(0)) wake();
    },
  };
}
