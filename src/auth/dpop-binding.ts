/**
 * The OAuth provider's side of DPoP (RFC 9449, SEP-1932): whether token requests to an issuer
 * carry proofs, the key they are bound to (kept in the credential book, per issuer), the proofs
 * for requests to the MCP server, and the server nonces.
 */
import type { PrivateJwk } from './types.js';
import { AuthorizationError } from '../core/errors.js';
import type { CredentialBook } from './credential-book.js';
import type { Discovery } from './discovery.js';
import { DPOP_ALGORITHM, DpopNonces, DpopProver, generateDpopKey, isUsableDpopKey, type DpopSigner } from './dpop.js';
import type { BearerChallenge } from './www-authenticate.js';

export class DpopBinding {
  /** Server nonces, per origin (authorization and resource server). */
  readonly #nonces = new DpopNonces();
  /** The prover for the current issuer's key, made once per key. */
  #prover: { key: PrivateJwk; prover: DpopProver } | undefined;

  constructor(
    private readonly book: CredentialBook,
    private readonly mode: boolean | 'auto',
    private readonly server: string,
  ) {}

  /** The current token is DPoP-bound: it goes out with the DPoP scheme and a proof. */
  get bound(): boolean {
    return this.book.tokens?.token_type === 'DPoP';
  }

  /** The `DPoP` header for one request to the MCP server; undefined for a bearer token. */
  proof(method: string, url: URL): Promise<string> | undefined {
    const tokens = this.book.tokens;
    if (tokens?.token_type !== 'DPoP') return undefined;
    const prover = this.#proverFor(this.book.dpopKey);
    return prover?.proof({ method, url, accessToken: tokens.access_token, nonce: this.#nonces.get(url) });
  }

  rememberNonce(url: URL, nonce: string | string[]): void {
    this.#nonces.remember(url, nonce);
  }

  /**
   * The signer for token requests to the current issuer, or undefined for bearer tokens. Once an
   * issuer's tokens are bound to a key, its refreshes and grants keep using it.
   */
  signer(discovery: Discovery, bearer: BearerChallenge = {}): DpopSigner | undefined {
    if (this.mode === false) return undefined;
    const wanted =
      this.mode === true ||
      this.book.dpopKey !== undefined ||
      bearer.dpopOffered === true ||
      discovery.resourceMetadata?.document.dpop_bound_access_tokens_required === true;
    if (!wanted) return undefined;
    const algorithms = discovery.metadata?.dpop_signing_alg_values_supported;
    if (algorithms !== undefined && !algorithms.includes(DPOP_ALGORITHM)) {
      if (this.mode !== true) return undefined;
      throw new AuthorizationError(
        `DPoP: the authorization server takes ${algorithms.length ? algorithms.join(', ') : 'no algorithm'} in proofs, not ${DPOP_ALGORITHM}`,
        { server: this.server, fatal: true },
      );
    }
    const key = (this.book.dpopKey ??= generateDpopKey());
    return { prover: this.#proverFor(key)!, nonces: this.#nonces };
  }

  /** After loading the store: a damaged key cannot prove possession, so it goes with its tokens. */
  dropDamagedKey(): void {
    if (this.book.dpopKey === undefined || isUsableDpopKey(this.book.dpopKey)) return;
    this.book.dpopKey = undefined;
    if (this.bound) this.book.tokens = undefined;
  }

  clear(): void {
    this.#nonces.clear();
    this.#prover = undefined;
  }

  #proverFor(key: PrivateJwk | undefined): DpopProver | undefined {
    if (!key) return undefined;
    if (this.#prover?.key !== key) this.#prover = { key, prover: new DpopProver(key) };
    return this.#prover.prover;
  }
}
