/** The store's typed errors: what the store could not do, naming the store and never its contents. */
import { McpSupervisorError, type ErrorDetails } from '../core/errors.js';

/**
 * A store's data cannot be read as a store (a file that is not the store's JSON): nothing was
 * overwritten. Names the store (`file /path`), never its contents. Fix or delete it.
 */
export class StoreCorruptError extends McpSupervisorError {
  readonly code = 'STORE_CORRUPT' as const;
  readonly retryable = false;
  override readonly fatal = true;
  constructor(
    /** The store's name (`file /path/to/store.json`). */
    readonly store: string,
    what: string,
  ) {
    super(`the store ${store} ${what}; fix or delete it (nothing was overwritten)`);
  }
}

/**
 * A write carried the fencing token of a lease that was taken over since (the writer stalled past
 * its lease and another process holds the lock now): nothing was written. Re-read what the new
 * holder wrote. Names the store, never the key or the value.
 */
export class StoreFencedError extends McpSupervisorError {
  readonly code = 'STORE_FENCED' as const;
  readonly retryable = false;
  constructor(
    readonly store: string,
    /** The token the write carried, and the newest one granted for its lock. */
    readonly token: number,
    readonly newest: number,
  ) {
    super(
      `the store ${store} refused a write under lease ${token}: lease ${newest} of the same lock was granted since (the writer lost its lease); nothing was written`,
    );
  }
}

/**
 * A store could not be reached (Redis down or restarting, a file system error): the operation did
 * not happen. Callers go on with what they hold; coordination resumes when the store is back.
 */
export class StoreUnavailableError extends McpSupervisorError {
  readonly code = 'STORE_UNAVAILABLE' as const;
  readonly retryable = true;
  constructor(
    readonly store: string,
    reason: string,
    details?: ErrorDetails,
  ) {
    super(`the store ${store} is unavailable (${reason})`, details);
  }
}
