/**
 * One server's side of authorization: its AuthProvider (shared by every transport it opens, so
 * tokens outlive reconnects), the challenge the next authorization answers, and the first success
 * after new credentials, which confirms them to the provider (resetting its step-up count).
 */
import type { AuthChallenge, AuthProvider, AuthStatus } from '../../auth/types.js';
import { resolveAuth } from '../../auth/resolve-provider.js';
import type { ServerConfig } from '../../config/server-config.js';
import { AuthorizationError, AuthorizationRequiredError } from '../../core/errors.js';
import type { ExchangeSignal } from '../../protocol/pending.js';
import type { Store } from '../../store/types.js';

export class Authorization {
  readonly provider: AuthProvider | undefined;
  private challenge: AuthChallenge | undefined;
  /** New credentials are in use and no request has succeeded with them yet. */
  private unconfirmed = false;
  private loaded: Promise<void> | undefined;
  /** Told the outcome of the next authorization (resume GETs waiting for new credentials); built by the first. */
  private waiters: Set<(renewed: boolean) => void> | undefined;

  constructor(
    config: ServerConfig,
    private readonly server: string,
    shared: { store?: Store | undefined; onWarning?: ((error: Error) => void) | undefined } = {},
  ) {
    this.provider =
      config.kind === 'url' ? resolveAuth(config.auth, { resourceUrl: config.url, server, ...shared }) : undefined;
  }

  /** A refusal a provider can answer (not the fatal kind raised when there is no provider). */
  isFixable(error: unknown): error is AuthorizationRequiredError {
    return error instanceof AuthorizationRequiredError && !error.fatal && this.provider !== undefined;
  }

  /** The refusal answered credentials that were replaced since: send again, do not authorize. */
  isOutdated(error: AuthorizationRequiredError): boolean {
    return this.provider !== undefined && error.credentialGeneration !== this.provider.generation;
  }

  /** For `status().auth`: the provider's own account, or just whether it holds credentials. */
  status(): AuthStatus | undefined {
    const provider = this.provider;
    if (provider === undefined) return undefined;
    return provider.status?.() ?? { authorized: provider.authorization() !== undefined };
  }

  /** Loads stored credentials once, before the first connection attempt. */
  ready(): Promise<void> {
    this.loaded ??= this.provider?.ready?.() ?? Promise.resolve();
    return this.loaded;
  }

  /** Keeps the challenge of a refusal for the next authorization. */
  remember(error: unknown): void {
    if (error instanceof AuthorizationRequiredError) this.challenge = error.challenge;
  }

  /** The `authorizing` state's effect: one authorization answering the last refusal. */
  async authorize(signal: AbortSignal): Promise<void> {
    const challenge = this.challenge;
    this.challenge = undefined;
    try {
      if (this.provider === undefined || challenge === undefined) {
        throw new AuthorizationError('authorization was required but there is no challenge to answer', {
          server: this.server,
          fatal: false,
        });
      }
      await this.provider.authorize(challenge, signal);
      this.unconfirmed = true;
      this.settleWaiters(true);
    } catch (error) {
      this.settleWaiters(false);
      throw error;
    }
  }

  /**
   * Resolves with the outcome of the next authorization: true when it brought new credentials,
   * false when it failed, or when `signal` fires first.
   */
  nextRenewal(signal: ExchangeSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = (renewed: boolean) => {
        this.waiters?.delete(settle);
        signal?.removeEventListener('abort', aborted);
        resolve(renewed);
      };
      const aborted = () => settle(false);
      (this.waiters ??= new Set()).add(settle);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }

  private settleWaiters(renewed: boolean): void {
    if (this.waiters) for (const settle of [...this.waiters]) settle(renewed);
  }

  /** Called for each successful response; cheap when there is nothing to confirm. */
  succeeded(): void {
    if (!this.unconfirmed) return;
    this.unconfirmed = false;
    this.provider?.confirmed?.();
  }
}
