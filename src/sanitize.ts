/**
 * Inspection events leave the process (the Stately inspector, logs), so they are sanitized
 * before they reach the user's observer. The machines hold no secrets by design; this is the
 * second line of defence: values under secret-looking keys and configured header values become
 * '[redacted]', in a copy — the actors' own snapshots and events are never touched.
 */
import type { ActorRefLike, InspectionEvent } from 'xstate';

export const REDACTED = '[redacted]';

/** Keys whose values are never shown, whatever they hold. */
const SECRET_KEY = /authorization|session-?id|token|cookie|secret|api-?key|password/i;
/** Shorter values are not searched for inside longer strings (too many false hits). */
const MIN_SECRET_LENGTH = 4;
const MAX_DEPTH = 32;
/** Fields of an inspection event that are actor references or machine definitions, not data. */
const STRUCTURAL_FIELDS = new Set(['type', 'rootId', 'actorRef', 'sourceRef', '_transitions']);

export interface Secrets {
  /** Strings equal to one of these are redacted (every configured header value). */
  values: readonly string[];
  /** Strings containing one of these have it redacted (credential-bearing header values, longest first). */
  fragments: readonly string[];
}

/**
 * What to hide, from the configured headers (and stdio `env`): every value, and the values of
 * credential-looking names (authorization, token, key, …) also inside longer text.
 */
export function configuredSecrets(maps: Iterable<Record<string, string>>): Secrets {
  const values = new Set<string>();
  const fragments = new Set<string>();
  for (const map of maps) {
    for (const [name, value] of Object.entries(map)) {
      const bare = value.replace(/^\S+\s+/, '');
      for (const candidate of [value, bare]) if (candidate.length > 0) values.add(candidate);
      if (SECRET_KEY.test(name) || /key|auth/i.test(name)) {
        for (const candidate of [value, bare]) if (candidate.trim().length >= MIN_SECRET_LENGTH) fragments.add(candidate);
      }
    }
  }
  // Longest first, so `Bearer x` is replaced whole before `x`.
  return { values: [...values], fragments: [...fragments].sort((a, b) => b.length - a.length) };
}

export interface Sanitizer {
  /** A copy of `value` with secrets replaced; non-plain objects (actor refs, machines) are kept as they are. */
  value<T>(value: T): T;
  /** A copy of an inspection event whose data fields and actor snapshots are sanitized. */
  event(event: InspectionEvent): InspectionEvent;
}

export function createSanitizer(secrets: Secrets): Sanitizer {
  const views = new WeakMap<ActorRefLike, ActorRefLike>();
  const values = new Set(secrets.values);

  function redactString(text: string): string {
    if (values.has(text)) return REDACTED;
    let result = text;
    for (const secret of secrets.fragments) {
      if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    }
    return result;
  }

  function copy(value: unknown, depth: number, seen: WeakMap<object, unknown>): unknown {
    if (typeof value === 'string') return redactString(value);
    if (typeof value !== 'object' || value === null) return value;
    if (seen.has(value)) return seen.get(value);
    if (depth > MAX_DEPTH) return '[too deep]';
    if (value instanceof Error) {
      const error = new Error(redactString(value.message));
      error.name = value.name;
      return error;
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      seen.set(value, out);
      for (const item of value) out.push(copy(item, depth + 1, seen));
      return out;
    }
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    seen.set(value, out);
    for (const [key, item] of Object.entries(value)) {
      out[key] = SECRET_KEY.test(key) && item !== undefined && item !== null && typeof item !== 'function' ? REDACTED : copy(item, depth + 1, seen);
    }
    return out;
  }

  /** The actor as the observer sees it: the same ref, except that its snapshot is sanitized. */
  function view(ref: ActorRefLike): ActorRefLike {
    let proxy = views.get(ref);
    if (!proxy) {
      proxy = new Proxy(ref, {
        get(target, property, receiver) {
          if (property === 'getSnapshot') return () => sanitizer.value(target.getSnapshot());
          const result: unknown = Reflect.get(target, property, receiver);
          return typeof result === 'function' ? (result as (...args: unknown[]) => unknown).bind(target) : result;
        },
      });
      views.set(ref, proxy);
    }
    return proxy;
  }

  const sanitizer: Sanitizer = {
    value: <T>(value: T): T => copy(value, 0, new WeakMap()) as T,
    event(event) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(event)) {
        out[key] = STRUCTURAL_FIELDS.has(key) ? item : sanitizer.value(item);
      }
      out.actorRef = view(event.actorRef);
      if ('sourceRef' in event && event.sourceRef) out.sourceRef = view(event.sourceRef);
      return out as unknown as InspectionEvent;
    },
  };
  return sanitizer;
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
