/**
 * What the connection machine says happened, in plain words: the facts it emits (`actor.on`).
 * Every change of top-level state ends with one `state changed` fact carrying its cause; the
 * lifecycle facts of that move come just before it (a session that ended, the restart, the
 * fallback …), so whoever reads them together reads one move. `revival scheduled` alone follows
 * the move into `failed` (it is decided on the way in).
 *
 * The machine decides the words: each transition that changes the top-level state names its
 * cause (`because`), and each top-level state announces itself on entry (`announce`).
 */
import type { Cause, Era, TransportKind } from './connection.types.js';
import { describeError } from './describe-error.js';

/** Why a session ended: its `expired` (the server forgot it), the connection was lost, a close, or `handle.reconnect()`. */
export type SessionEndReason = 'expired' | 'connection lost' | 'closed' | 'reconnect requested';

export type ConnectionFact =
  /** The move's last fact: the top-level state entered, why, and the error behind it (`to` is a `ConnectionState`). */
  | { type: 'state changed'; to: string; cause: string; error: string | undefined }
  /** A handshake (legacy) or a discovery (modern) succeeded: a new session, perhaps on another version or transport. */
  | {
      type: 'session started';
      era: Era;
      protocolVersion: string;
      generation: number;
      transport: TransportKind | undefined;
    }
  | { type: 'session ended'; reason: SessionEndReason; era: Era }
  /** A probe found the session alive: nothing was lost. */
  | { type: 'session confirmed' }
  /** A sign that may mean a lost session: one probe decides. */
  | { type: 'session in doubt' }
  /** Requests were refused for want of credentials: one authorization for all of them. */
  | { type: 'authorization required' }
  /** New credentials; `sessionKept`: the session goes on, else a new connection follows. */
  | { type: 'authorized'; sessionKept: boolean }
  /** Streamable HTTP was refused (400/404/405): the legacy HTTP+SSE transport is tried. */
  | { type: 'fell back to legacy SSE'; error: string | undefined }
  /** The connection is down; the supervisor decides between a restart and giving up. */
  | { type: 'connection down'; error: string; fatal: boolean }
  /** The supervisor's restart: a new transport and a new session. */
  | { type: 'restarted' }
  /** The restart budget is spent, or a restart cannot fix the failure. */
  | { type: 'gave up'; reason: string; fatal: boolean }
  /** A failed server is tried again in `delayMs`. */
  | { type: 'revival scheduled'; delayMs: number }
  | { type: 'close requested' }
  | { type: 'closed' };

export type ConnectionFactKind = ConnectionFact['type'];
export type FactOf<K extends ConnectionFactKind> = Extract<ConnectionFact, { type: K }>;

/** Every fact kind, for checks at run time (the type below keeps it equal to the union). */
export const CONNECTION_FACT_KINDS = Object.keys({
  'state changed': true,
  'session started': true,
  'session ended': true,
  'session confirmed': true,
  'session in doubt': true,
  'authorization required': true,
  authorized: true,
  'fell back to legacy SSE': true,
  'connection down': true,
  restarted: true,
  'gave up': true,
  'revival scheduled': true,
  'close requested': true,
  closed: true,
} satisfies Record<ConnectionFactKind, true>) as ConnectionFactKind[];

/** `note cause` with fixed words. */
export function because(cause: string) {
  return { type: 'note cause', params: { cause, error: undefined } } as const;
}

/** `note cause` with an invoked actor's error. */
export function becauseActorFailed(cause: string) {
  return {
    type: 'note cause',
    params: ({ event }: { event: { error: unknown } }): Cause => ({ cause, error: describeError(event.error) }),
  } as const;
}

/** `note cause` with an event's error text. */
export function becauseOf(cause: string) {
  return {
    type: 'note cause',
    params: ({ event }: { event: { error: string } }): Cause => ({ cause, error: event.error }),
  } as const;
}

/** A top-level state's entry says it was entered (the `state changed` fact). */
export function announce(state: string) {
  return { type: 'announce', params: { state } } as const;
}

/** `tell`: emits a fact known when the machine is written. */
export function tell(fact: ConnectionFact) {
  return { type: 'tell', params: fact } as const;
}
