/**
 * The options of the built-in OAuth 2.1 client, and their validation. Plain data fields can come
 * from a config file; `onRedirect`, `idpIdToken` as a function, and `store` come from code.
 */
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { issueMessage, leafIssues } from '../core/zod-issues.js';
import { SIGNING_ALGORITHMS, defaultAlgorithm, keyMismatch, loadPrivateKey, type SigningAlgorithm } from './jwt.js';
import type { TokenEndpointAuthMethod, TokenStore } from './types.js';

export type OAuthGrant = 'authorization_code' | 'client_credentials' | 'cross_app_access' | 'workload_identity';

/**
 * Shows `authorizationUrl` to the user (a browser, a printed link) and resolves with the URL the
 * authorization server redirected back to (the `redirectUri` with `code` and `state`, or `error`).
 * Must honour `signal`: it aborts when the connection gives up or closes.
 */
export type RedirectHandler = (authorizationUrl: URL, signal: AbortSignal) => Promise<URL | string>;

export interface OAuthClientOptions {
  /** How tokens are obtained. Default `'authorization_code'` (a user consents in a browser). */
  grant?: OAuthGrant | undefined;
  /** A pre-registered client id. Takes priority over Client ID Metadata Documents and dynamic registration. */
  clientId?: string | undefined;
  /** The pre-registered client's secret (confidential clients). Never appears in errors or logs. */
  clientSecret?: string | undefined;
  /**
   * An https URL serving this client's metadata document, used as `client_id` when the
   * authorization server advertises `client_id_metadata_document_supported` (no registration).
   */
  clientMetadataUrl?: string | undefined;
  /** `client_name` sent in dynamic registration. Default `'mcp-supervisor'`. */
  clientName?: string | undefined;
  /** Where the authorization server sends the user back. Required for `authorization_code`. */
  redirectUri?: string | undefined;
  /** Completes the browser step of `authorization_code`; required for that grant. */
  onRedirect?: RedirectHandler | undefined;
  /**
   * Scopes (space-separated) to request when the server's challenge names none, instead of the
   * protected resource's `scopes_supported`. A challenge's `scope` always wins: it is authoritative.
   */
  scope?: string | undefined;
  /** Ask for `offline_access` (a refresh token) when the authorization server lists it. Default true. */
  offlineAccess?: boolean | undefined;
  /**
   * Force a token endpoint authentication method. By default: what registration returned, else
   * `private_key_jwt` with a key, `none` without a secret, else the first of `client_secret_basic`,
   * `client_secret_post` that the server supports.
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined;
  /** PKCS#8/PKCS#1/SEC1 PEM private key for `private_key_jwt` client authentication (RFC 7523). */
  privateKeyPem?: string | undefined;
  /** JWS algorithm for `privateKeyPem`; default from the key (RS256, ES256/384/512, EdDSA). */
  signingAlgorithm?: SigningAlgorithm | undefined;
  /** `kid` header of client assertions, when the server holds several keys for this client. */
  keyId?: string | undefined;
  /** `cross_app_access`: the enterprise IdP's token endpoint (RFC 8693 token exchange). */
  idpTokenEndpoint?: string | undefined;
  /** `cross_app_access`: the user's ID token from the IdP, or a function returning a fresh one. */
  idpIdToken?: string | (() => string | Promise<string>) | undefined;
  /** `cross_app_access`: this client's id at the IdP. */
  idpClientId?: string | undefined;
  /** `cross_app_access`: this client's secret at the IdP (client_secret_basic there). */
  idpClientSecret?: string | undefined;
  /**
   * `workload_identity` (SEP-1933): the JWT the workload's platform issued to it (audience: the
   * authorization server's issuer), or a function returning a fresh one for each grant.
   */
  workloadAssertion?: string | (() => string | Promise<string>) | undefined;
  /**
   * DPoP (RFC 9449, SEP-1932): sender-constrained tokens, bound to a key pair this client keeps
   * with its tokens; every token request and every request to the server carries a fresh proof.
   * `'auto'` (the default) uses it when the MCP server asks for it (a `DPoP` challenge, or
   * `dpop_bound_access_tokens_required` in its resource metadata) and the authorization server
   * takes ES256 proofs; `true` always, `false` never.
   */
  dpop?: boolean | 'auto' | undefined;
  /**
   * Where tokens and registrations persist, keyed by the canonical resource URL. Default: memory.
   * When the supervisor has a `store`, credentials live there instead, and this one is only read
   * while the store holds nothing yet for the credential (a token file of an earlier version).
   */
  store?: TokenStore | undefined;
  /**
   * Whose credential this is, when one store holds several users' credentials for the same server
   * and client (a service acting for many people). Part of the store key; default none (one shared
   * credential).
   */
  principal?: string | undefined;
  /**
   * Refresh a token this long before its `expires_at`, before it is sent, instead of sending it to
   * collect a 401. Needs a refresh token. Default 60000 ms; 0 turns proactive refresh off.
   */
  refreshMarginMs?: number | undefined;
  /** Authorization attempts without a successful request before giving up (fatal). Default 3. */
  maxAttempts?: number | undefined;
  /** Timeout of each HTTP call (metadata, registration, token), in ms. Default 30000. */
  timeoutMs?: number | undefined;
}

const httpsOrHttpUrl = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL');
const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', 'must be a function');

const schema = z
  .strictObject({
    grant: z.enum(['authorization_code', 'client_credentials', 'cross_app_access', 'workload_identity']).optional(),
    clientId: z.string().min(1).optional(),
    clientSecret: z.string().min(1).optional(),
    clientMetadataUrl: z
      .string()
      .refine(
        (v) => URL.canParse(v) && new URL(v).protocol === 'https:' && new URL(v).pathname !== '/',
        'must be an https URL with a path',
      )
      .optional(),
    clientName: z.string().min(1).optional(),
    redirectUri: z
      .string()
      .refine((v) => URL.canParse(v), 'must be an absolute URL')
      .optional(),
    onRedirect: fn.optional(),
    scope: z.string().optional(),
    offlineAccess: z.boolean().optional(),
    tokenEndpointAuthMethod: z
      .enum(['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'])
      .optional(),
    privateKeyPem: z.string().min(1).optional(),
    signingAlgorithm: z.enum(SIGNING_ALGORITHMS).optional(),
    keyId: z.string().min(1).optional(),
    idpTokenEndpoint: httpsOrHttpUrl.optional(),
    idpIdToken: z.union([z.string().min(1), fn]).optional(),
    idpClientId: z.string().min(1).optional(),
    idpClientSecret: z.string().min(1).optional(),
    workloadAssertion: z.union([z.string().min(1), fn]).optional(),
    store: z
      .custom<TokenStore>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          ['load', 'save', 'clear'].every((k) => typeof (v as Record<string, unknown>)[k] === 'function'),
        'must have load, save and clear methods',
      )
      .optional(),
    dpop: z.union([z.boolean(), z.literal('auto')]).optional(),
    principal: z.string().min(1).optional(),
    maxAttempts: z.number().int().min(1).optional(),
    refreshMarginMs: z.number().int().min(0).optional(),
    timeoutMs: z.number().int().positive().optional(),
  })
  .superRefine((o, ctx) => {
    const need = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: [field], message });
    const grant = o.grant ?? 'authorization_code';
    if (grant === 'workload_identity' && !o.workloadAssertion)
      need('workloadAssertion', 'required for the workload_identity grant (the JWT the workload presents)');
    if (grant !== 'authorization_code' && grant !== 'workload_identity' && !o.clientId)
      need('clientId', `required for the ${grant} grant (it needs a pre-registered client)`);
    if (grant === 'client_credentials' && !o.clientSecret && !o.privateKeyPem)
      need('clientSecret', 'the client_credentials grant needs clientSecret or privateKeyPem');
    if (grant === 'cross_app_access') {
      if (!o.idpTokenEndpoint) need('idpTokenEndpoint', 'required for the cross_app_access grant');
      if (!o.idpIdToken) need('idpIdToken', 'required for the cross_app_access grant');
      if (!o.idpClientId) need('idpClientId', 'required for the cross_app_access grant');
    }
    if (o.clientSecret && !o.clientId)
      need('clientSecret', 'set clientId too: a secret belongs to a pre-registered client');
    if (o.tokenEndpointAuthMethod === 'private_key_jwt' && !o.privateKeyPem)
      need('privateKeyPem', 'required for tokenEndpointAuthMethod private_key_jwt');
    if (
      o.clientId &&
      (o.tokenEndpointAuthMethod === 'client_secret_basic' || o.tokenEndpointAuthMethod === 'client_secret_post') &&
      !o.clientSecret
    ) {
      need('clientSecret', `required for tokenEndpointAuthMethod ${o.tokenEndpointAuthMethod}`);
    }
    if (o.privateKeyPem) {
      try {
        const key = loadPrivateKey(o.privateKeyPem);
        const algorithm = o.signingAlgorithm ?? defaultAlgorithm(key);
        if (!algorithm)
          need(
            'signingAlgorithm',
            `cannot infer an algorithm for a ${key.asymmetricKeyType} key; set signingAlgorithm`,
          );
        else {
          const mismatch = keyMismatch(key, algorithm);
          if (mismatch) need('signingAlgorithm', mismatch);
        }
      } catch {
        // never echo the key: the PEM is a secret
        need('privateKeyPem', 'is not a readable PEM private key');
      }
    }
  });

/**
 * Validates OAuth client options; errors name the field under `path`, e.g.
 * `servers.docs.auth.redirectUri: required for the authorization_code grant`.
 */
export function parseOAuthOptions(value: unknown, path = 'auth'): OAuthClientOptions {
  const result = schema.safeParse(value);
  if (result.success) return result.data as OAuthClientOptions;
  const issues = leafIssues(result.error.issues).map((issue) => ({
    path: [path, ...issue.path.map(String)].join('.'),
    message: issueMessage(schema, issue),
  }));
  throw new ConfigError(issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues);
}
