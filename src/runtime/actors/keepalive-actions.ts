/**
 * Binds the keepalive machine to a server's runtime: `send probe` is one call to the runtime's
 * probe, whose settling is sent to the keepalive as PROBE_ANSWERED or PROBE_FAILED (a stopped
 * keepalive drops it). No promise actor per probe: two closures settle it, nothing else.
 */
import type { AnyActorRef } from 'xstate';
import type { KeepaliveEvent, ProbeInput, ProbeOutput } from '../../../machines/keepalive.machine.js';
import { runtimeOf } from './runtime-registry.js';

export function sendProbe({ self, system }: { self: AnyActorRef; system: object }, input: ProbeInput): void {
  let probe: Promise<ProbeOutput>;
  try {
    probe = runtimeOf(system, input.server).probe(input.timeoutMs);
  } catch (error) {
    probe = Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  probe.then(
    (output) => self.send({ type: 'PROBE_ANSWERED', output } satisfies KeepaliveEvent),
    (error: unknown) => self.send({ type: 'PROBE_FAILED', error } satisfies KeepaliveEvent),
  );
}
