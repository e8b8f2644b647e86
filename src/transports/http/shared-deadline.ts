/**
 * One `AbortSignal.timeout` shared by the requests of one kind that start within the same
 * 100 ms: never early, at most 100 ms late. A `stop()` of 10,000 servers sends 10,000 DELETEs
 * with a 2 s bound each; a signal and a weakly held timer per DELETE was work for nothing, as
 * almost every one is answered long before.
 */
import { setMaxListeners } from 'node:events';

const SLOT_MS = 100;

const slots = new Map<number, { signal: AbortSignal; until: number }>();

/** A signal that aborts no sooner than `ms` from now, and at most SLOT_MS later. */
export function sharedDeadline(ms: number): AbortSignal {
  const now = performance.now();
  let slot = slots.get(ms);
  if (!slot || now >= slot.until) {
    const signal = AbortSignal.timeout(ms + SLOT_MS);
    // Every request of the slot listens to it (undici removes its listener when the request ends).
    setMaxListeners(0, signal);
    slot = { signal, until: now + SLOT_MS };
    slots.set(ms, slot);
  }
  return slot.signal;
}
