/**
 * Transition parts repeated across the connection's states: what a failure leaves in the context
 * (the error remembered: an actor's, an event's, a lost connection's), the way to `authorizing`
 * when an actor was refused, a handshake that succeeded, and the doubtful requests parked when a
 * probe did not find the session alive.
 */
import { because, becauseActorFailed } from './connection.facts.js';
import { failureOf, type Failure, type ProbeVerdict, type SessionInfo } from './connection.types.js';

/** `remember error` with an invoked actor's error. */
export const rememberActorError = {
  type: 'remember error',
  params: ({ event }: { event: { error: unknown } }) => failureOf(event.error),
} as const;
/** `remember error` with an event's error text (never fatal). */
export const rememberEventError = {
  type: 'remember error',
  params: ({ event }: { event: { error: string } }) => ({ error: event.error, fatal: false }),
} as const;
/** `remember error` with a lost connection (fatal when the event says so). */
export const rememberLostConnection = {
  type: 'remember error',
  params: ({ event }: { event: { error: string; fatal?: boolean } }) => ({
    error: event.error,
    fatal: event.fatal === true,
  }),
} as const;
export const needsAuthorizationGuard = {
  type: 'needs authorization',
  params: ({ event }: { event: { error: unknown } }) => ({ error: event.error }),
} as const;
/** An actor refused with 401/403 (or a refusing challenge): `authorizing` runs the one authorization. */
export const authorizeAfterRefusal = {
  guard: needsAuthorizationGuard,
  target: '#connection.authorizing',
  actions: [rememberActorError, becauseActorFailed('authorization required')],
} as const;
/** `initialize session` done (initializing, reinitializing): the session is kept and told, and serves. */
export const sessionInitialized = {
  target: '#connection.ready',
  actions: [
    { type: 'remember session', params: ({ event }: { event: { output: SessionInfo } }) => event.output },
    'tell session started',
    because('initialized'),
  ],
} as const;
/** Leaving `probing` any way but "alive": the doubtful requests are parked for replay. */
export const parkDoubtfulRequests = { type: 'settle doubtful requests', params: { lost: true } } as const;

/** A probe that did not find the session alive, as a failure. */
export function probeFailure(probe: ProbeVerdict): Failure {
  if (probe.verdict === 'unreachable' || probe.verdict === 'unauthorized') return { error: probe.error, fatal: false };
  if (probe.verdict === 'session lost') return { error: probe.evidence, fatal: false };
  return { error: undefined, fatal: false };
}
