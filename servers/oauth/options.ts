// The OAuth fixture's switches, mirroring the conformance `auth/*` variants, and their defaults.
import type { KeyObject } from 'node:crypto';

export interface OAuthFixtureOptions {
  /** Where the PRM lives: path-based (default), the root, a custom path, or nowhere (2025-03-26). */
  prm?: 'path' | 'root' | 'custom' | 'none';
  /** Put `resource_metadata` in the 401 challenge. Default true. */
  prmInHeader?: boolean;
  /** Override the PRM `resource` (default: the MCP URL, or the origin for a root PRM); `{origin}` is replaced. */
  prmResource?: string;
  prmScopes?: string[];
  /** Issuer path, e.g. '/tenant1' (default none). */
  issuerPath?: string;
  /** Which well-known document serves AS metadata. Default 'oauth' (RFC 8414 path insertion). */
  asMetadata?: 'oauth' | 'openid' | 'openid-suffix' | 'none';
  asScopes?: string[];
  /** null = omit code_challenge_methods_supported. Default ['S256']. */
  codeChallengeMethods?: string[] | null;
  cimd?: boolean;
  /** Offer dynamic registration. Default true. */
  dcr?: boolean;
  authMethods?: string[];
  grantTypes?: string[];
  /** Clients known without registration. */
  clients?: { id: string; secret?: string; publicKey?: KeyObject }[];
  /** `expires_in` of issued access tokens, in seconds. Default 3600. */
  expiresIn?: number;
  /** Issue rotating refresh tokens. */
  refreshTokens?: boolean;
  /**
   * Access tokens really expire this long after they are issued (`expires_in` says so, in
   * fractional seconds): the resource answers 401 after it. Default: they never expire by time.
   */
  accessTokenMs?: number;
  /**
   * A refresh token presented a second time (reuse: two clients raced with one token) revokes the
   * whole grant, every access and refresh token issued from the same sign-in, as rotating servers do.
   */
  revokeOnReuse?: boolean;
  /** The refresh answer omits `refresh_token`, and the one presented stays valid (no rotation). */
  omitRefreshToken?: boolean;
  /**
   * Hold each refresh this long before processing it; a client that went away meanwhile (SIGKILLed)
   * has its refresh dropped unprocessed, as if it had never arrived.
   */
  refreshDelayMs?: number;
  /** Scope named in the 401 challenge. */
  challengeScope?: string;
  /** Scopes every MCP request needs; a token without them gets 403 insufficient_scope. */
  requiredScopes?: string[];
  /** Scopes `tools/call` needs (step-up). */
  callScopes?: string[];
  /** Answer 403 insufficient_scope to every authorized request, whatever the token. */
  alwaysInsufficient?: boolean;
  /** Redirect from /authorize with this error instead of a code. */
  authorizeError?: string;
  /**
   * RFC 9207: 'advertised' lists authorization_response_iss_parameter_supported and sends `iss`;
   * 'advertised-missing' lists it but leaves `iss` out (what a mix-up attacker's redirect looks like).
   */
  iss?: 'advertised' | 'advertised-missing';
  /** Redirect with a different state than requested. */
  wrongState?: boolean;
  /** RFC 7009: advertise `revocation_endpoint` and revoke what it is sent. */
  revocation?: boolean;
  /** SEP-1933: accept jwt-bearer grants whose assertion this key signed (ES256) with aud = the issuer. */
  workloadKey?: KeyObject;
  /** Make the token endpoint answer this OAuth error (with a description echoing the request). */
  tokenError?: string;
}

export function withDefaults(options: OAuthFixtureOptions) {
  return {
    prm: 'path' as const,
    prmInHeader: true,
    asMetadata: 'oauth' as const,
    codeChallengeMethods: ['S256'] as string[] | null,
    dcr: true,
    authMethods: ['none'],
    issuerPath: '',
    ...options,
  };
}

export type ResolvedOptions = ReturnType<typeof withDefaults>;
