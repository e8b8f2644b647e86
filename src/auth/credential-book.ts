/**
 * The provider's credentials, bound to the authorization server that issued them (SEP-2352):
 * tokens and client registration per issuer, one of them current. Switching issuer
 * never carries a registration or refresh token across; it brings back what that issuer issued
 * before, if anything. Also reads the token store's previous format (one issuer, top-level
 * `tokens` and `client`) without losing its tokens.
 */
import type {
  IssuerCredentials,
  OAuthClientInformation,
  OAuthTokens,
  StoredAuthorization,
  PrivateJwk,
} from './types.js';

export class CredentialBook {
  #issuer: string | undefined;
  #current: IssuerCredentials = {};
  readonly #others = new Map<string, IssuerCredentials>();

  get issuer(): string | undefined {
    return this.#issuer;
  }
  get tokens(): OAuthTokens | undefined {
    return this.#current.tokens;
  }
  set tokens(tokens: OAuthTokens | undefined) {
    this.#current.tokens = tokens;
  }
  get client(): OAuthClientInformation | undefined {
    return this.#current.client;
  }
  set client(client: OAuthClientInformation | undefined) {
    this.#current.client = client;
  }

  get dpopKey(): PrivateJwk | undefined {
    return this.#current.dpopKey;
  }
  set dpopKey(key: PrivateJwk | undefined) {
    this.#current.dpopKey = key;
  }

  /** Makes `issuer` current; true when that replaced another issuer's credentials. */
  useIssuer(issuer: string): boolean {
    if (this.#issuer === issuer) return false;
    const previous = this.#issuer;
    if (previous === undefined) {
      // Tokens of an unknown issuer (an old store entry without one): keep the access token, which
      // the resource server judges, but never offer its refresh token or client to this server.
      const tokens = this.#current.tokens ? { ...this.#current.tokens, refresh_token: undefined } : undefined;
      this.#current = { ...this.#others.get(issuer), ...(tokens && !this.#others.has(issuer) ? { tokens } : {}) };
    } else {
      this.#others.set(previous, this.#current);
      this.#current = this.#others.get(issuer) ?? {};
    }
    this.#others.delete(issuer);
    this.#issuer = issuer;
    return previous !== undefined;
  }

  /** Forgets every issuer's credentials. */
  clear(): void {
    this.#issuer = undefined;
    this.#current = {};
    this.#others.clear();
  }

  /** Reads a stored entry, in this format or the previous one. */
  load(stored: StoredAuthorization): void {
    this.clear();
    for (const [issuer, credentials] of Object.entries(stored.issuers ?? {})) this.#others.set(issuer, credentials);
    const legacy: IssuerCredentials | undefined =
      stored.tokens || stored.client ? { tokens: stored.tokens, client: stored.client } : undefined;
    if (stored.issuer !== undefined) {
      this.#current = this.#others.get(stored.issuer) ?? legacy ?? {};
      this.#others.delete(stored.issuer);
      this.#issuer = stored.issuer;
    } else if (legacy?.tokens) {
      this.#current = { tokens: legacy.tokens };
    }
  }

  toStored(): StoredAuthorization {
    const issuers: Record<string, IssuerCredentials> = Object.fromEntries(this.#others);
    if (this.#issuer !== undefined) issuers[this.#issuer] = this.#current;
    // Tokens not yet tied to an issuer stay in the previous format's field until discovery names one.
    else if (this.#current.tokens) return { tokens: { ...this.#current.tokens, refresh_token: undefined } };
    return { issuer: this.#issuer, issuers };
  }
}
