/**
 * What `sup.apply(config)` changes: servers added, removed, restarted (their config changed),
 * enabled or disabled (only `disabled` changed), and the unchanged ones, left alone.
 */
import type { ServerConfig } from './server-config.js';

export interface ApplyResult {
  added: string[];
  removed: string[];
  restarted: string[];
  enabled: string[];
  disabled: string[];
  unchanged: string[];
}

/** Structural equality; URLs by text, functions and class instances (auth providers, stores) by identity. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof URL && b instanceof URL) return a.href === b.href;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const plain = (value: object) => {
    const prototype: unknown = Object.getPrototypeOf(value);
    return prototype === Object.prototype || prototype === Array.prototype || prototype === null;
  };
  if (!plain(a) || !plain(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  const recordA = a as Record<string, unknown>;
  const recordB = b as Record<string, unknown>;
  return keysA.every((key) => Object.hasOwn(recordB, key) && same(recordA[key], recordB[key]));
}

/** Equal apart from `disabled`. */
export function sameSettings(a: ServerConfig, b: ServerConfig): boolean {
  return same({ ...a, disabled: false }, { ...b, disabled: false });
}

/** The plan from the current configs to the next ones (in the order of `next`, then the removed). */
export function planChanges(current: ReadonlyMap<string, ServerConfig>, next: readonly ServerConfig[]): ApplyResult {
  const plan: ApplyResult = { added: [], removed: [], restarted: [], enabled: [], disabled: [], unchanged: [] };
  const names = new Set(next.map((config) => config.name));
  for (const config of next) {
    const old = current.get(config.name);
    // A server that is not running is enabled, or stays disabled, with the new settings as they are.
    if (!old) plan.added.push(config.name);
    else if (old.disabled) (config.disabled ? plan.unchanged : plan.enabled).push(config.name);
    else if (config.disabled) plan.disabled.push(config.name);
    else (sameSettings(old, config) ? plan.unchanged : plan.restarted).push(config.name);
  }
  for (const name of current.keys()) if (!names.has(name)) plan.removed.push(name);
  return plan;
}
