/**
 * The contract between the transports and whatever supplies credentials. The transports only
 * ask for the current `Authorization` value and report 401/403 challenges; the connection
 * machine's `authorizing` state calls `authorize` once per challenge (the single flight).
 * The built-in OAuth 2.1 client (`createOAuthProvider`) is one implementation; users may bring
 * their own.
 */

import type { AuthChallenge } from '../core/errors.js';

// Declared on the ground floor, beside the typed error that carries it (AuthorizationRequiredError).
export type { AuthChallenge };

export interface AuthProvider {
  /**
   * The full `Authorization` header value for the next request (`Bearer …`), or undefined before
   * the first authorization. Called when the transport rebuilds its headers, not per request.
   */
  authorization(): string | undefined;
  /**
   * Increases whenever `authorization()` changes. Transports compare it on each send (one integer
   * compare) and tag every challenge with the generation that was refused, so a 401 that answers
   * an older token just resends instead of authorizing again.
   */
  readonly generation: number;
  /**
   * Obtains new credentials after `challenge` (refresh, step-up, a new grant). Resolves once
   * `authorization()` returns them; rejects with an `AuthorizationError` (`fatal` when trying
   * again cannot help). Never called concurrently for one server.
   */
  authorize(challenge: AuthChallenge, signal: AbortSignal): Promise<void>;
  /** What `status().auth` shows: never a token. Optional; without it status shows `{ authorized }` only. */
  status?(): AuthStatus;
  /** Loads stored credentials; awaited once before the first connection attempt. */
  ready?(): Promise<void>;
  /**
   * Called before each request is sent. Returns a promise when the credentials must be renewed
   * first (a token about to expire: proactive refresh, one refresh for any number of callers),
   * undefined when they are fine, so the common case costs no await. Optional.
   */
  prepare?(signal?: AbortSignal): Promise<void> | undefined;
  /**
   * Proof of possession for one request (DPoP, RFC 9449): the `DPoP` header value for `method` on
   * `url`, or undefined when the current token is a plain bearer token. Called for every request,
   * so it must cost nothing in the bearer case. Optional.
   */
  proof?(method: string, url: URL): Promise<string> | undefined;
  /** A `DPoP-Nonce` from a response of `url`'s origin: the next proofs for that origin carry it. Optional. */
  rememberNonce?(url: URL, nonce: string | string[]): void;
  /** A request succeeded with the current credentials (resets step-up attempt counts). */
  confirmed?(): void;
  /** Forget credentials (e.g. on `server.logout()`); optional. */
  clear?(): Promise<void>;
}

/** A server's authorization as `status().auth` shows it: no tokens, no secrets. */
export interface AuthStatus {
  /** Credentials are held (they may still be refused). */
  authorized: boolean;
  /** The granted scope, space-separated, when known. */
  scope?: string | undefined;
  /** When the access token expires (epoch ms), when the server said. */
  expiresAt?: number | undefined;
}

/** A token endpoint's answer, with `expires_in` turned into an absolute time. */
export interface OAuthTokens {
  access_token: string;
  /** `Bearer`, or `DPoP` for a token bound to the issuer's `dpopKey` (sent with the DPoP scheme and a proof). */
  token_type: string;
  refresh_token?: string | undefined;
  /** Epoch milliseconds; undefined when the server gave no `expires_in`. */
  expires_at?: number | undefined;
  scope?: string | undefined;
}

/** A client identity at one authorization server: pre-registered, a CIMD URL, or from DCR. */
export interface OAuthClientInformation {
  client_id: string;
  client_secret?: string | undefined;
  /** Epoch seconds, 0 = never (RFC 7591). */
  client_secret_expires_at?: number | undefined;
  token_endpoint_auth_method?: TokenEndpointAuthMethod | undefined;
}

export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none' | 'private_key_jwt';

/** What one authorization server issued: tokens and the client registered there. */
export interface IssuerCredentials {
  tokens?: OAuthTokens | undefined;
  client?: OAuthClientInformation | undefined;
  /**
   * The DPoP key pair (RFC 9449) the tokens are bound to, as a private P-256 JWK. A secret like
   * the refresh token: never logged, never in status or errors.
   */
  dpopKey?: PrivateJwk | undefined;
}

/**
 * A private key as a JSON Web Key (RFC 7517): for DPoP, P-256 (`kty`, `crv`, `x`, `y`, `d`). Declared
 * here rather than taken from `node:crypto`, whose export of `JsonWebKey` differs across `@types/node`
 * majors (a consumer's type check must not depend on which one it has).
 */
export interface PrivateJwk {
  kty?: string | undefined;
  crv?: string | undefined;
  x?: string | undefined;
  y?: string | undefined;
  d?: string | undefined;
  [member: string]: unknown;
}

/**
 * What a token store keeps per protected resource. Credentials are bound to the authorization
 * server that issued them (SEP-2352): `issuers` holds them per issuer, and `issuer` names the one
 * in use. Files written before that (`tokens` and `client` at the top level, for `issuer`) are read
 * as that issuer's entry and rewritten in this shape on the next save.
 */
export interface StoredAuthorization {
  /** The authorization server in use (its issuer URL). */
  issuer?: string | undefined;
  /** Credentials per issuer. */
  issuers?: Record<string, IssuerCredentials> | undefined;
  /** The previous format's tokens (of `issuer`); read, and written only while no issuer is known. */
  tokens?: OAuthTokens | undefined;
  /** The previous format's client registration (at `issuer`); read, never written. */
  client?: OAuthClientInformation | undefined;
}

/** Pluggable persistence; keyed by the canonical resource URL. In memory by default. */
export interface TokenStore {
  load(key: string): Promise<StoredAuthorization | undefined>;
  save(key: string, value: StoredAuthorization): Promise<void>;
  clear(key: string): Promise<void>;
}
