/**
 * When to reconnect an SSE stream (the GET listener, or a POST response stream resumed through
 * GET) and when to give up. Pure: the listener machine and the HTTP transport share it.
 *
 * A server `retry` value is obeyed exactly, with no backoff and no jitter (spec: the client
 * MUST wait the given time). Without one, the delay grows with each attempt that brought no
 * new event. Every attempt without progress counts toward the cap, so a server that keeps
 * closing an empty stream cannot hold us in a loop forever.
 *
 * A stream that keeps ending soon after it opened is bounded by the same backoff even when each
 * one brings an event (a priming event, then a close): from the second reopen in a row, the delay
 * is at least `initialDelayMs · factor^(reopens-1)` (capped at `maxDelayMs`), the server's `retry`
 * being the floor. Never a fixed 1 Hz loop. A stream that stayed open `stableAfterMs` resets it.
 */
export interface StreamReconnectPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  factor: number;
  /** Reconnects in a row that delivered no new event before the stream is given up. */
  maxStalledAttempts: number;
  /** A stream open this long is healthy: the reopens in a row start over. */
  stableAfterMs: number;
}

/** Reopens counted at most (the backoff is at its cap by then). */
export const MAX_COUNTED_REOPENS = 6;

export const DEFAULT_STREAM_RECONNECT_POLICY: StreamReconnectPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  factor: 2,
  maxStalledAttempts: 5,
  stableAfterMs: 30_000,
};

export function streamReconnectDelay(
  retryMs: number | undefined,
  stalledAttempts: number,
  policy: StreamReconnectPolicy = DEFAULT_STREAM_RECONNECT_POLICY,
  /** Reopens in a row of a stream that did not stay open `stableAfterMs` (this one included). */
  reopens = 1,
): number {
  const backoff = (n: number) => Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** n);
  const base = retryMs ?? backoff(stalledAttempts);
  return reopens <= 1 ? base : Math.max(base, backoff(reopens - 1));
}

export function mayReconnectStream(
  stalledAttempts: number,
  policy: StreamReconnectPolicy = DEFAULT_STREAM_RECONNECT_POLICY,
): boolean {
  return stalledAttempts < policy.maxStalledAttempts;
}
