/**
 * When an origin last answered anything. Request sockets are shared per origin (pool.ts), so an
 * answer from an origin within a keepalive interval proves its process and its connection alive
 * for every server behind it: a keepalive with `proof: 'origin'` skips its probe then
 * (machines/keepalive.machine.ts), and one probe per origin per interval stands for all of them.
 *
 * Every answer writes one timestamp (protocol/pending.ts, `settleResponse`): no allocation, no
 * call. One record per origin the process has talked to, kept for the life of the process like
 * origin-turns' `upAt` (a few dozen bytes each).
 */

export class OriginLiveness {
  /** `Date.now()` of the origin's last answer (any server of it); -Infinity before the first. */
  lastAnswerAt = -Infinity;
  /** `Date.now()` of the last keepalive probe sent to the origin (by any server of it). */
  private probeSentAt = -Infinity;

  /**
   * Whether the origin proved alive within the last `intervalMs`: it answered anything, or a
   * sibling's probe went out since its last answer (the answer is coming) and that answer is
   * less than `intervalMs + timeoutMs` old. Servers whose intervals come due together so send
   * one probe, not one each; a frozen origin hides behind a probe no longer than its timeout.
   */
  provedAliveWithin(intervalMs: number, timeoutMs: number): boolean {
    const age = Date.now() - this.lastAnswerAt;
    return age < intervalMs || (this.probeSentAt > this.lastAnswerAt && age < intervalMs + timeoutMs);
  }

  /** A keepalive probe of one of the origin's servers went out. */
  probeSent(): void {
    this.probeSentAt = Date.now();
  }

  /** Shared runtime state, not a value of a snapshot: a machine context holding it serializes without it. */
  toJSON(): undefined {
    return undefined;
  }
}

const origins = new Map<string, OriginLiveness>();

/** The record of `origin` (shared by every server of it); a server without one (stdio) gets its own. */
export function originLiveness(origin: string | undefined): OriginLiveness {
  if (origin === undefined) return new OriginLiveness();
  let liveness = origins.get(origin);
  if (!liveness) origins.set(origin, (liveness = new OriginLiveness()));
  return liveness;
}
