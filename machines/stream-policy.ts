/**
 * When to reconnect an SSE stream (the GET listener, or a POST response stream resumed through
 * GET) and when to give up. Pure: the listener machine and the HTTP transport share it.
 *
 * A server `retry` value is obeyed exactly, with no backoff and no jitter (spec: the client
 * MUST wait the given time). Without one, the delay grows with each attempt that brought no
 * new event. Every attempt without progress counts toward the cap, so a server that keeps
 * closing an empty stream cannot hold us in a loop forever.
 */
export interface StreamReconnectPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  factor: number;
  /** Reconnects in a row that delivered no new event before the stream is given up. */
  maxStalledAttempts: number;
}

export const DEFAULT_STREAM_RECONNECT_POLICY: StreamReconnectPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  factor: 2,
  maxStalledAttempts: 5,
};

export function streamReconnectDelay(
  retryMs: number | undefined,
  stalledAttempts: number,
  policy: StreamReconnectPolicy = DEFAULT_STREAM_RECONNECT_POLICY,
): number {
  if (retryMs !== undefined) return retryMs;
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** stalledAttempts);
}

export function mayReconnectStream(
  stalledAttempts: number,
  policy: StreamReconnectPolicy = DEFAULT_STREAM_RECONNECT_POLICY,
): boolean {
  return stalledAttempts < policy.maxStalledAttempts;
}
