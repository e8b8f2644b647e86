/** The checks every store makes of what it is given: typed errors that name what was wrong. */
import { ConfigError } from '../core/errors.js';
import type { StoreFence, StoreLockOptions } from './types.js';

export function checkStoreKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new ConfigError(
      `a store key must be a non-empty string (got ${key === '' ? 'an empty string' : typeof key})`,
    );
  }
}

export function checkLockOptions(options: StoreLockOptions): void {
  if (!Number.isFinite(options?.leaseMs) || options.leaseMs <= 0) {
    throw new ConfigError(`a store lock needs leaseMs > 0 (got ${String(options?.leaseMs)})`);
  }
  if (options.waitMs !== undefined && (!Number.isFinite(options.waitMs) || options.waitMs < 0)) {
    throw new ConfigError(`a store lock's waitMs must be >= 0 (got ${String(options.waitMs)})`);
  }
}

export function checkFence(fence: StoreFence): void {
  checkStoreKey(fence?.lock);
  if (!Number.isInteger(fence.token) || fence.token < 0) {
    throw new ConfigError(`a store write's fence token must be a whole number >= 0 (got ${String(fence.token)})`);
  }
}

/** The value as JSON text; a value JSON cannot hold is refused (naming the key, never the value). */
export function jsonCopy(key: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new ConfigError(`the value for store key "${key}" is not JSON (${(cause as Error).message})`);
  }
  if (text === undefined) throw new ConfigError(`the value for store key "${key}" is not JSON (${typeof value})`);
  return text;
}
