/**
 * The store: where a supervisor keeps what outlives a process (credentials, era verdicts, tool
 * catalogs, task references, opt-in sessions), shared by every process and replica that is given
 * the same store. Small on purpose, so that a file, Redis or a database can hold it:
 *
 * - values are JSON, each with a version that grows on every write (compare-and-swap on it);
 * - a lease lock per name, carrying a fencing token that grows with every grant, so a holder that
 *   lost its lease (paused, partitioned) is told apart from the one that took over.
 *
 * The store is never read on a request's hot path: the runtime reads it when a connection opens,
 * refreshes a credential or lists a catalog.
 */

/** A stored value and the version it was written at (1 for the first write of a key). */
export interface StoreEntry<T = unknown> {
  readonly value: T;
  readonly version: number;
}

export interface StoreSetOptions {
  /**
   * Compare-and-swap: write only if the key's current version is this one (`0`: only if the key
   * does not exist). Omitted: write whatever is there.
   */
  ifVersion?: number | undefined;
  /** Forget the key this long after the write (catalog entries with a server-given lifetime). */
  ttlMs?: number | undefined;
  /**
   * Fencing: write only if no lease of `lock` newer than `token` (the writer's `StoreLease.token`)
   * was granted since. A holder whose lease ran out and was taken over (it stalled, was paused,
   * lost the network) is refused with a StoreFencedError instead of overwriting what the new
   * holder wrote. Checked in the same atomic step as `ifVersion`.
   */
  fence?: StoreFence | undefined;
}

/** The lease a write is made under: its lock name and the token it was granted with. */
export interface StoreFence {
  readonly lock: string;
  readonly token: number;
}

/** What a write did: the new version, or the entry that made a compare-and-swap lose. */
export type StoreSetResult<T = unknown> =
  { readonly ok: true; readonly version: number } | { readonly ok: false; readonly current: StoreEntry<T> | undefined };

export interface StoreLockOptions {
  /** How long the lease lasts unless renewed: a holder that died is taken over after it. */
  leaseMs: number;
  /** How long to wait for a lease held by someone else; 0 (the default) tries once. */
  waitMs?: number | undefined;
}

/** A held lease on one lock name. */
export interface StoreLease {
  /** Grows with every grant of this name, in every process: writes may carry it to fence out a holder that lost its lease. */
  readonly token: number;
  /** Extends the lease by its `leaseMs` from now; false when it was lost (expired and taken). */
  renew(): Promise<boolean>;
  /** Gives the lease up (a no-op once it was lost). */
  release(): Promise<void>;
}

export interface Store {
  /** A short name for logs and errors (`memory`, `file /path`, `redis host:port`); never a secret. */
  readonly name: string;
  get<T = unknown>(key: string): Promise<StoreEntry<T> | undefined>;
  set<T = unknown>(key: string, value: T, options?: StoreSetOptions): Promise<StoreSetResult<T>>;
  /** Deletes the key (only at that version, when given); true when something was deleted. */
  delete(key: string, options?: { ifVersion?: number | undefined }): Promise<boolean>;
  /** Takes the lease lock of a name, or resolves `undefined` when another holder kept it past `waitMs`. */
  lock(name: string, options: StoreLockOptions): Promise<StoreLease | undefined>;
  /** Releases what the store holds (connections, timers); the data stays. */
  close?(): Promise<void>;
}
