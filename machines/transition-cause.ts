/**
 * Plain words for a connection's transitions: what caused one (from the event the machine took)
 * and the error it carried. Secret-free by construction: events carry error text only.
 */
import type { AnyEventObject } from 'xstate';

const ACTOR_ERROR = 'xstate.error.actor.';

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The top-level state of a snapshot value: `{ ready: 'serving' }` → `'ready'`. */
export function topLevelState(value: unknown): string {
  if (typeof value === 'string') return value;
  const [first] = Object.keys(value as object);
  return first ?? String(value);
}

/** A short, secret-free reason for a transition, from the event that caused it. */
export function describeCause(event: AnyEventObject, value?: unknown): string {
  // The same handshake failure either falls back or goes down: the state entered tells which.
  if (field(value, 'connecting') === 'falling back') return 'Streamable HTTP refused; falling back to legacy SSE';
  if (value === 'authorizing' && event.type.startsWith(ACTOR_ERROR)) return 'authorization required';
  switch (event.type) {
    case 'xstate.init':
      return 'start';
    case 'xstate.done.actor.transport':
      return 'transport ready';
    case 'xstate.done.actor.handshake':
      return 'initialized';
    case 'xstate.done.actor.discover':
      // A modern server is ready at once; a legacy one goes on to `initialize`.
      return field(field(event, 'output'), 'era') === 'modern'
        ? 'discovered (modern server)'
        : 'legacy server: initializing';
    case 'xstate.done.actor.authorize':
      return 'authorized';
    case 'AUTHORIZATION_REQUIRED':
      return 'authorization required';
    case 'xstate.done.actor.close':
      return 'closed';
    case 'xstate.done.actor.sse-fallback':
      return field(field(event, 'output'), 'found') === true ? 'legacy SSE endpoint found' : 'legacy SSE probe failed';
    case 'SESSION_EXPIRED': {
      const evidence = field(event, 'evidence');
      return `session expired (${typeof evidence === 'string' ? evidence : 'HTTP 404'})`;
    }
    case 'LISTENER_REFUSED_SESSION':
      return `session expired (the listening stream was refused: HTTP ${String(field(event, 'status'))})`;
    case 'SESSION_IN_DOUBT':
      return `checking the session (${String(field(event, 'evidence'))})`;
    case 'SERVER_UNREACHABLE':
      return 'server unreachable';
    case 'RECONNECT':
      return 'reconnect requested';
    case 'xstate.done.actor.probe':
      return probeCause(field(event, 'output'));
    case 'CONNECTION_LOST':
      return 'connection lost';
    case 'LISTENER_LOST':
      return 'listening stream lost';
    case 'RESTART':
      return 'restart';
    case 'GIVE_UP':
      return field(event, 'fatal') === true ? 'a restart cannot fix it' : 'restart budget spent';
    case 'CLOSE':
      return 'close requested';
    default:
      if (event.type.startsWith('xstate.after.revive delay.')) return 'reviving';
      if (event.type.startsWith(ACTOR_ERROR)) return `${event.type.slice(ACTOR_ERROR.length)} failed`;
      return event.type;
  }
}

/** What one probe of the session found, in words. */
function probeCause(output: unknown): string {
  switch (field(output, 'verdict')) {
    case 'alive':
      return 'session alive';
    case 'session lost':
      return `session expired (${String(field(output, 'evidence'))})`;
    case 'unauthorized':
      return 'authorization required';
    default:
      return 'server unreachable';
  }
}

/** The error text an event carries (actor errors, GIVE_UP reasons, a failed fallback), if any. */
export function eventError(event: AnyEventObject): string | undefined {
  if (event.type === 'xstate.done.actor.sse-fallback') {
    const error = field(field(event, 'output'), 'error');
    return typeof error === 'string' ? error : undefined;
  }
  if ('error' in event) return errorText(field(event, 'error'));
  if (event.type === 'GIVE_UP') return String(field(event, 'reason'));
  if (event.type === 'xstate.done.actor.probe') {
    const output = field(event, 'output');
    const error = field(output, 'error') ?? field(output, 'evidence');
    return typeof error === 'string' ? error : undefined;
  }
  return undefined;
}
