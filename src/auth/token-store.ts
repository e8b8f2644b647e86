/**
 * Token stores: where a server's tokens and client registration live between authorizations.
 * In memory by default; values are copied in and out so callers cannot mutate what is stored.
 */
import type { StoredAuthorization, TokenStore } from './types.js';

export function memoryTokenStore(): TokenStore {
  const entries = new Map<string, StoredAuthorization>();
  return {
    async load(key) {
      const value = entries.get(key);
      return value === undefined ? undefined : structuredClone(value);
    },
    async save(key, value) {
      entries.set(key, structuredClone(value));
    },
    async clear(key) {
      entries.delete(key);
    },
  };
}
