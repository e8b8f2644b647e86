/**
 * Credentials shared by every process and replica that uses the same slot, renewed by one of
 * them at a time. The refresh protocol, in order:
 *
 * 1. re-read the slot: a token another process already renewed is adopted, nothing is sent;
 * 2. take the credential's lease lock (waiting in rounds, re-reading between them); a holder
 *    that died is taken over after its lease, which the living holder renews while it works;
 * 3. re-read under the lock (the previous holder's token is adopted);
 * 4. refresh (or sign in), then write with compare-and-swap; a refresh token the server omitted
 *    is carried forward.
 *
 * A refused refresh (`invalid_grant`) re-reads before it counts: the winner's token may be there.
 * Nothing stored is ever deleted on a lost race or a transient failure; only a refusal that
 * survives the re-read drops the refresh token (never the registration). A slot that cannot be
 * reached (Redis away) is waited for a while, then the work goes on alone; one warning per
 * outage. The slot is read only here, never on a request's path.
 */
import { AuthorizationError } from '../core/errors.js';
import { StoreFencedError, StoreUnavailableError } from '../store/errors.js';
import type { StoreLease } from '../store/types.js';
import { CredentialBook } from './credential-book.js';
import type { CredentialSlot } from './credential-slot.js';
import type { OAuthTokens, StoredAuthorization } from './types.js';

export interface SharedCredentialsOptions {
  /** A lock holder that stopped renewing is taken over after this long. Default 5000 ms. */
  leaseMs?: number | undefined;
  /** How long a slot that cannot be reached is waited for before working alone. Default 10000 ms. */
  unavailableWaitMs?: number | undefined;
  /** Told once per outage of the slot (a StoreUnavailableError). */
  onWarning?: ((error: Error) => void) | undefined;
}

/** What a refresh came to. */
export type Renewal = 'adopted' | 'refreshed' | 'refused' | 'none';

export class SharedCredentials {
  /** The version of the slot's entry this process last read or wrote (0: none). */
  #version = 0;
  /** A warning was given for the current outage. */
  #warned = false;
  /** A write waiting for the store to come back (the lock is held until it settles). */
  #persisting: Promise<void> | undefined;
  /** The credential's lease while this process holds it: its writes carry the fencing token. */
  #lease: StoreLease | undefined;
  readonly #leaseMs: number;
  readonly #unavailableWaitMs: number;

  constructor(
    private readonly slot: CredentialSlot,
    private readonly book: CredentialBook,
    /** Called after stored credentials were taken into the book (the provider bumps its generation). */
    private readonly adopted: () => void,
    private readonly server: string,
    private readonly options: SharedCredentialsOptions = {},
  ) {
    this.#leaseMs = options.leaseMs ?? 5_000;
    this.#unavailableWaitMs = options.unavailableWaitMs ?? 10_000;
  }

  /**
   * Reads the slot into the book (start-up). A slot that cannot be read (a corrupt file) rejects;
   * one that cannot be reached is warned about and starts empty (the first grant waits for it a while).
   */
  async load(): Promise<boolean> {
    let entry;
    try {
      entry = await this.slot.read();
    } catch (error) {
      this.#unreachable(error);
      return false;
    }
    this.#version = entry?.version ?? 0;
    if (!entry) return false;
    this.book.load(entry.value);
    this.adopted();
    // Version 0: imported from `auth.store` (a token file of an earlier version). Moved into the
    // store at once, so every process sharing it has the login; only while the key is still free.
    if (entry.version === 0) await this.#import();
    return true;
  }

  async #import(): Promise<void> {
    try {
      const written = await this.slot.write(this.book.toStored(), 0);
      if (written.ok) this.#version = written.version;
      else if (written.current) {
        // Another process moved it (or renewed it) first: theirs is at least as new.
        this.book.load(written.current.value);
        this.#version = written.current.version;
        this.adopted();
      }
    } catch (error) {
      this.#unreachable(error);
    }
  }

  /**
   * Renews the current token through the protocol above. `refresh` runs under the lock with the
   * freshest refresh token; its AuthorizationError with an OAuth error code is a refusal, any
   * other error is transient and rethrown with nothing stored changed.
   */
  async refresh(
    refresh: (refreshToken: string) => Promise<OAuthTokens>,
    signal: AbortSignal | undefined,
  ): Promise<Renewal> {
    const replacing = this.book.tokens;
    if (await this.#adopt(replacing)) return 'adopted';
    return this.#underLock(
      replacing,
      signal,
      30_000,
      () => true,
      async () => {
        const refreshToken = this.book.tokens?.refresh_token;
        if (!refreshToken) return 'none';
        let tokens: OAuthTokens;
        try {
          tokens = await refresh(refreshToken);
        } catch (error) {
          if (!isRefusal(error) || signal?.aborted) throw error;
          // Refused: the winner of a race this process did not see may have stored its token.
          if (await this.#adopt(replacing)) return 'adopted';
          this.book.tokens = this.book.tokens ? { ...this.book.tokens, refresh_token: undefined } : undefined;
          await this.save();
          throw error;
        }
        this.book.tokens = { ...tokens, refresh_token: tokens.refresh_token ?? refreshToken };
        await this.save();
        return 'refreshed';
      },
    );
  }

  /**
   * A first sign-in (or any new grant) run by one process at a time: the others wait for the
   * lease, and adopt what the holder stored instead of signing in themselves.
   */
  async signIn(
    grant: () => Promise<void>,
    signal: AbortSignal | undefined,
    /** Whether a stored token would do (a step-up needs its scope); default any newer token. */
    suits: (tokens: OAuthTokens) => boolean = () => true,
  ): Promise<'adopted' | 'signed in'> {
    const replacing = this.book.tokens;
    if (await this.#adopt(replacing, suits)) return 'adopted';
    return this.#underLock(replacing, signal, 10 * 60_000, suits, async () => {
      await grant();
      return 'signed in' as const;
    });
  }

  /**
   * Writes the book: compare-and-swap at the version read last; a newer entry in between is
   * overwritten only under the lock. A store that cannot be reached is written again in the
   * background until it is back (for `unavailableWaitMs`), and the lock is held until then: a token
   * renewed during an outage is never lost to a process that would refresh with the spent one.
   */
  async save(): Promise<void> {
    try {
      await this.#write();
    } catch (error) {
      // Persistence is best effort: the credentials work in memory for this run.
      if (!(error instanceof StoreUnavailableError)) return;
      this.#unreachable(error);
      this.#persisting ??= this.#writeWhenBack().finally(() => {
        this.#persisting = undefined;
      });
    }
  }

  async #write(): Promise<void> {
    const value: StoredAuthorization = this.book.toStored();
    for (let attempt = 0; attempt < 3; attempt++) {
      let written;
      try {
        written = await this.slot.write(value, this.#version, this.#lease?.token);
      } catch (error) {
        if (!(error instanceof StoreFencedError)) throw error;
        // This process stalled past its lease and another holds the lock now: its word wins.
        this.#lease = undefined;
        await this.#yield();
        return;
      }
      this.#reachable();
      if (written.ok) {
        this.#version = written.version;
        return;
      }
      // Someone wrote without the lock (a logout, an earlier version of this library): what this
      // holder has is newer, since it was read under the lock. Write over it.
      this.#version = written.current?.version ?? 0;
    }
  }

  async #writeWhenBack(): Promise<void> {
    const deadline = Date.now() + this.#unavailableWaitMs;
    while (Date.now() < deadline) {
      await pause(100, undefined);
      try {
        await this.#write();
        return;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) return;
      }
    }
  }

  /**
   * After a fenced write: takes what the new holder stored, if it wrote since; otherwise keeps this
   * process's tokens in memory, unwritten (the new holder re-reads under the lock and decides).
   */
  async #yield(): Promise<void> {
    let entry;
    try {
      entry = await this.slot.read();
    } catch (error) {
      this.#unreachable(error);
      return;
    }
    if (!entry || entry.version === this.#version) return;
    const issuer = this.book.issuer;
    this.book.load(entry.value);
    if (issuer !== undefined) this.book.useIssuer(issuer);
    this.#version = entry.version;
    this.adopted();
  }

  async clear(): Promise<void> {
    await this.slot.clear();
    this.#version = 0;
  }

  /** Takes what the slot holds if it is not the token being replaced (and not older). */
  async #adopt(
    replacing: OAuthTokens | undefined,
    suits: (tokens: OAuthTokens) => boolean = () => true,
  ): Promise<boolean> {
    let entry;
    try {
      entry = await this.slot.read();
      this.#reachable();
    } catch (error) {
      this.#unreachable(error);
      return false;
    }
    if (!entry) {
      // Lost (a Redis that restarted empty): this process's credentials are written back by its next save.
      this.#version = 0;
      return false;
    }
    const stored = new CredentialBook();
    stored.load(entry.value);
    const issuer = this.book.issuer;
    if (issuer !== undefined) stored.useIssuer(issuer);
    const tokens = stored.tokens;
    const newer =
      tokens?.access_token !== undefined &&
      tokens.access_token !== replacing?.access_token &&
      (tokens.expires_at ?? Infinity) >= (replacing?.expires_at ?? 0) &&
      suits(tokens);
    if (!newer) {
      // Keep what this process holds; later writes compare against what is there now.
      this.#version = entry.version;
      return false;
    }
    this.book.load(entry.value);
    if (issuer !== undefined) this.book.useIssuer(issuer);
    this.#version = entry.version;
    this.adopted();
    return true;
  }

  /** Waits for the lease (re-reading between rounds), re-reads under it, runs `work`, releases. */
  async #underLock<T>(
    replacing: OAuthTokens | undefined,
    signal: AbortSignal | undefined,
    maxWaitMs: number,
    suits: (tokens: OAuthTokens) => boolean,
    work: () => Promise<T>,
  ): Promise<T | 'adopted'> {
    const deadline = Date.now() + maxWaitMs;
    let unreachableSince: number | undefined;
    let lease: StoreLease | undefined;
    for (;;) {
      signal?.throwIfAborted();
      try {
        lease = await this.slot.lock(this.#leaseMs, Math.min(500, this.#leaseMs));
        this.#reachable();
        unreachableSince = undefined;
      } catch (error) {
        this.#unreachable(error);
        unreachableSince ??= Date.now();
        // The slot stays away: go on alone rather than let requests wait for it.
        if (Date.now() - unreachableSince >= this.#unavailableWaitMs) break;
        await pause(Math.min(250, this.#unavailableWaitMs), signal);
        continue;
      }
      if (lease) break;
      if (await this.#adopt(replacing, suits)) return 'adopted';
      if (Date.now() >= deadline) {
        throw new AuthorizationError(
          `another process held the credential lock for ${Math.round(maxWaitMs / 1000)} s; trying again later`,
          { server: this.server, fatal: false },
        );
      }
    }
    const renewing = lease && setInterval(() => void lease.renew().catch(() => undefined), this.#leaseMs / 3);
    this.#lease = lease;
    const release = async () => {
      clearInterval(renewing);
      if (this.#lease === lease) this.#lease = undefined;
      await lease?.release().catch(() => undefined);
    };
    try {
      if (lease && (await this.#adopt(replacing, suits))) return 'adopted';
      return await work();
    } finally {
      // The renewed credentials are in hand now; the lock waits for their write to land.
      if (this.#persisting) void this.#persisting.then(release);
      else await release();
    }
  }

  #unreachable(error: unknown): void {
    if (!(error instanceof StoreUnavailableError)) throw error;
    if (this.#warned) return;
    this.#warned = true;
    this.options.onWarning?.(error);
  }

  #reachable(): void {
    this.#warned = false;
  }
}

/** The authorization server judged the grant and said no (`invalid_grant`, …): not a 5xx, a timeout or a network error. */
export function isRefusal(error: unknown): error is AuthorizationError {
  return error instanceof AuthorizationError && error.oauthError !== undefined && !error.retryable;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
