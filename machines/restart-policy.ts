/**
 * Restart intensity and backoff, as pure functions. The supervisor machine keeps the counters;
 * this file says what they mean.
 *
 * Like an OTP supervisor: at most `maxRestarts` restarts within a sliding `withinMs` window,
 * else the server is failed. Each restart waits `initialMs * factor^attempt` (capped at
 * `maxMs`) with ±`jitter` spread. Both the window and the attempt count reset only after a
 * session proved healthy, so a server that reaches ready and dies at once keeps paying.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** Fraction of the delay drawn at random, 0..1. */
  jitter: number;
}

export interface RestartPolicy {
  maxRestarts: number;
  withinMs: number;
  /** How long a session must stay ready before the budget resets. */
  provenAfterMs: number;
  backoff: BackoffPolicy;
  /** While requests wait for the server, the backoff (restarts, revivals, its origin's slots) is capped at this; default 1000 ms. */
  waitingReconnectMs?: number | undefined;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  maxRestarts: 20,
  withinMs: 600_000,
  provenAfterMs: 10_000,
  backoff: { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 },
};

/** Per-server restart bookkeeping. */
export interface RestartRecord {
  /** Restarts still inside the sliding window. */
  inWindow: number;
  /** Restarts since the last proven session: the backoff exponent. */
  attempt: number;
  /** All restarts ever, for status. */
  total: number;
  /** Bumped on every reset so window expiries scheduled before it are ignored. */
  epoch: number;
}

export const NEW_RESTART_RECORD: RestartRecord = { inWindow: 0, attempt: 0, total: 0, epoch: 0 };

export function hasRestartBudget(record: RestartRecord, policy: RestartPolicy): boolean {
  return record.inWindow < policy.maxRestarts;
}

export function restartDelay(attempt: number, backoff: BackoffPolicy, random: () => number): number {
  const base = Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** attempt);
  const spread = base * backoff.jitter;
  return Math.max(0, Math.round(base - spread + random() * 2 * spread));
}

/**
 * Revival: once the restart budget is spent, a server that failed for a reason a restart can fix
 * is tried again, every `initialMs * 2^revivals`, capped at `maxMs`, for as long as it takes.
 * A long-running agent has nobody to restart it by hand.
 */
export interface ReviveSettings {
  initialMs: number;
  maxMs: number;
}

/** While requests wait for a server that is down, its reconnect (and revival) backoff is capped at this. */
export const DEFAULT_WAITING_RECONNECT_MS = 1_000;

export const DEFAULT_REVIVE: ReviveSettings = { initialMs: 1_000, maxMs: 30_000 };

export function reviveDelay(revivals: number, settings: ReviveSettings): number {
  return Math.min(settings.maxMs, settings.initialMs * 2 ** Math.min(revivals, 30));
}
