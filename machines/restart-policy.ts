/**
 * Restart intensity and backoff, as pure functions. The connection machine keeps its own counters
 * (each server's root actor decides its restarts; machines/connection.recovery.ts), and so does the
 * supervisor machine for connections composed under it; this file says what they mean.
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
  /** Revivals since the last proven session (`failed.waiting to revive`): the revival backoff's exponent. */
  revivals: number;
  /**
   * The last attempt found the server busy (429/503 through the whole handshake): the wait it
   * asked for. The next attempt comes after it, and spends no restart budget.
   */
  busyMs: number | undefined;
  /**
   * Attempts hurried by waiting requests (made at `waitingReconnectMs`, before the backoff was
   * over) are charged their share of a restart (`waitingReconnectMs / backoff`): the fraction not
   * yet counted. So callers waiting never spend the budget faster than the long backoff would.
   */
  owed: number;
}

export const NEW_RESTART_RECORD: RestartRecord = {
  inWindow: 0,
  attempt: 0,
  total: 0,
  epoch: 0,
  revivals: 0,
  busyMs: undefined,
  owed: 0,
};

export function hasRestartBudget(record: RestartRecord, policy: RestartPolicy): boolean {
  return record.inWindow < policy.maxRestarts;
}

/** One restart more: counted in the window, in the backoff's exponent and in the total. */
export function countRestart(record: RestartRecord): RestartRecord {
  return { ...record, inWindow: record.inWindow + 1, attempt: record.attempt + 1, total: record.total + 1 };
}

/** The connection's own attempt, made when its backoff ended: counted in the window and the backoff's exponent. */
export function countAttempt(record: RestartRecord): RestartRecord {
  return { ...record, inWindow: record.inWindow + 1, attempt: record.attempt + 1 };
}

/** A connection went down and will try again: counted in the total (status) when the attempt is decided. */
export function countDown(record: RestartRecord): RestartRecord {
  return { ...record, total: record.total + 1 };
}

/**
 * An attempt made early for waiting requests, after `waitedMs` of a backoff of `backoffMs`: its
 * share of a restart is owed; a whole one owed is counted (true) like an attempt.
 */
export function chargeHurriedAttempt(
  record: RestartRecord,
  waitedMs: number,
  backoffMs: number,
): { record: RestartRecord; counted: boolean } {
  const owed = record.owed + (backoffMs > waitedMs ? waitedMs / backoffMs : 1);
  // A float sum of shares (0.2 five times) may fall short of 1 by a rounding error.
  if (owed < 1 - 1e-9) return { record: { ...record, owed }, counted: false };
  return { record: { ...countAttempt(record), owed: Math.max(0, owed - 1) }, counted: true };
}

/** The backoff before attempt `attempt` without its jitter (what a hurried attempt's share is measured against). */
export function baseDelay(attempt: number, backoff: BackoffPolicy): number {
  return Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** attempt);
}

/** An attempt after a busy answer: in the backoff's exponent and the total, not in the window (no failure). */
export function countBusyAttempt(record: RestartRecord): RestartRecord {
  return { ...record, attempt: record.attempt + 1, total: record.total + 1 };
}

/** A restart left the sliding window. */
export function forgetOneRestart(record: RestartRecord): RestartRecord {
  return { ...record, inWindow: Math.max(0, record.inWindow - 1) };
}

/** A session proved healthy: the window and the backoff start over; expiries scheduled before are ignored. */
export function resetRestartBudget(record: RestartRecord): RestartRecord {
  return { ...record, inWindow: 0, attempt: 0, owed: 0, epoch: record.epoch + 1 };
}

/** Why a server is given up: a fatal failure as it is, else with the budget that was spent. */
export function giveUpReason(error: string, fatal: boolean, policy: RestartPolicy): string {
  return fatal ? error : `${error} (restart budget spent: ${policy.maxRestarts} restarts within ${policy.withinMs} ms)`;
}

export function restartDelay(attempt: number, backoff: BackoffPolicy, random: () => number): number {
  const base = baseDelay(attempt, backoff);
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
