/**
 * Binds the keepalive machine to a server's runtime: `send probe` is one call to the runtime's
 * probe, whose settling is sent to the keepalive as PROBE_ANSWERED or PROBE_FAILED (a stopped
 * keepalive is not told). No promise actor per probe: two closures settle it, nothing else.
 * `bind evidence` puts the runtime's liveness evidence (its origin's last answer) in the
 * keepalive's context, where the machine's guard reads it at each interval.
 */
import { assign, type AnyActorRef } from 'xstate';
import type { KeepaliveContext, KeepaliveEvent, ProbeInput, ProbeOutput } from '../../../machines/keepalive.machine.js';
import { runtimeOf } from './runtime-registry.js';

export const bindEvidence = assign<KeepaliveContext, KeepaliveEvent, unknown, KeepaliveEvent, never>(
  ({ context, system }) => ({ evidence: runtimeOf(system, context.server).origin.liveness }),
);

export function sendProbe({ self, system }: { self: AnyActorRef; system: object }, input: ProbeInput): void {
  settleProbe(self, () => runtimeOf(system, input.server).probe(input.timeoutMs));
}

/** Runs one probe and tells `keepalive` how it settled (also an origin's keepalive, src/runtime/keepalive/). */
export function settleProbe(keepalive: AnyActorRef, send: () => Promise<ProbeOutput>): void {
  let probe: Promise<ProbeOutput>;
  try {
    probe = send();
  } catch (error) {
    probe = Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  // A keepalive stopped meanwhile (the connection left `ready`) is not told: XState warns of
  // events sent to a stopped actor.
  probe.then(
    (output) => settle(keepalive, { type: 'PROBE_ANSWERED', output }),
    (error: unknown) => settle(keepalive, { type: 'PROBE_FAILED', error }),
  );
}

function settle(keepalive: AnyActorRef, event: KeepaliveEvent): void {
  if ((keepalive.getSnapshot() as { status: string }).status === 'active') keepalive.send(event);
}
