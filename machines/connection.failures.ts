/**
 * What a failure leaves in the connection's context, as transition parts repeated across its
 * states: the error remembered (an actor's, an event's, a lost connection's), the authorization
 * guard, and the doubtful requests parked when a probe did not find the session alive.
 */
import { failureOf, type Failure, type ProbeVerdict } from './connection.types.js';

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
/** Leaving `probing` any way but "alive": the doubtful requests are parked for replay. */
export const parkDoubtfulRequests = { type: 'settle doubtful requests', params: { lost: true } } as const;

/** A probe that did not find the session alive, as a failure. */
export function probeFailure(probe: ProbeVerdict): Failure {
  if (probe.verdict === 'unreachable' || probe.verdict === 'unauthorized') return { error: probe.error, fatal: false };
  if (probe.verdict === 'session lost') return { error: probe.evidence, fatal: false };
  return { error: undefined, fatal: false };
}
