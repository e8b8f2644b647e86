/**
 * Inspection events leave the process (the Stately inspector, logs), so they are sanitized
 * before they reach the user's observer. The machines hold no secrets by design; this is the
 * second line of defence, by the one redaction rule (redact.ts): values under secret-looking keys
 * and configured secrets become '[redacted]', in a copy — the actors' own snapshots and events
 * are never touched.
 */
import type { ActorRefLike, InspectionEvent, Observer } from 'xstate';
import { isSecretName, redact, REDACTED, type Secrets } from '../core/redact.js';

const MAX_DEPTH = 32;
/** Fields of an inspection event that are actor references or machine definitions, not data. */
const STRUCTURAL_FIELDS = new Set(['type', 'rootId', 'actorRef', 'sourceRef', '_transitions']);

export interface Sanitizer {
  /** A copy of `value` with secrets replaced; non-plain objects (actor refs, machines) are kept as they are. */
  value<T>(value: T): T;
  /** A copy of an inspection event whose data fields and actor snapshots are sanitized. */
  event(event: InspectionEvent): InspectionEvent;
}

export function createSanitizer(secrets: Secrets): Sanitizer {
  const views = new WeakMap<ActorRefLike, ActorRefLike>();
  const redactString = (text: string) => redact(text, secrets);

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
      out[key] =
        isSecretName(key) && item !== undefined && item !== null && typeof item !== 'function'
          ? REDACTED
          : copy(item, depth + 1, seen);
    }
    return out;
  }

  /** The actor as the observer sees it: the same ref, except that its snapshot is sanitized. */
  function view(ref: ActorRefLike): ActorRefLike {
    let proxy = views.get(ref);
    if (!proxy) {
      proxy = new Proxy(ref, {
        get(target, property, receiver) {
          if (property === 'getSnapshot') return () => sanitizer.value<unknown>(target.getSnapshot());
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

/**
 * The user's `inspect`, fed sanitized copies of the inspection events: the secrets are those of the
 * servers configured now (`update` after every change of the configuration).
 */
export class SanitizedInspector {
  private sanitizer: Sanitizer | undefined;

  constructor(private readonly user: Observer<InspectionEvent> | ((event: InspectionEvent) => void)) {}

  update(secrets: Secrets): void {
    this.sanitizer = createSanitizer(secrets);
  }

  /** One function for every actor of the supervisor (the inspect option of each). */
  readonly inspect = (event: InspectionEvent): void => {
    if (!this.sanitizer) return;
    const safe = this.sanitizer.event(event);
    if (typeof this.user === 'function') this.user(safe);
    else this.user.next?.(safe);
  };
}
