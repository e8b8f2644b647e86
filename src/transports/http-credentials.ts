/**
 * Credentials for the HTTP transports: the `Authorization` value from the auth provider, put into
 * headers only when the provider's generation moves, and 401/403 answers turned into typed
 * refusals that name the generation they refused.
 */
import type { AuthProvider } from '../auth/types.js';
import type { Timers, TransportSink } from './transport.js';
import { AuthorizationRequiredError } from '../core/errors.js';

type Headers = Record<string, string | string[] | undefined>;

/** What both HTTP transports (Streamable HTTP and legacy SSE) are built from. */
export interface HttpOptions {
  /** The MCP endpoint (Streamable HTTP) or the SSE URL (legacy): the protected resource. */
  url: URL;
  server: string;
  headers: Record<string, string>;
  requestTimeoutMs: number;
  maxMessageBytes: number;
  sink: TransportSink;
  /** Supplies `Authorization` and is told about 401/403 challenges; none: the configured headers only. */
  auth?: AuthProvider | undefined;
  timers?: Timers | undefined;
  /** Values expanded from the environment into the config: hidden in every error, whatever they were named. */
  secrets?: readonly string[] | undefined;
}

/** `error="insufficient_scope"` in a challenge: a 403 that a step-up authorization can fix. */
const INSUFFICIENT_SCOPE = /error\s*=\s*"?insufficient_scope"?/i;
/** `error="use_dpop_nonce"` (RFC 9449 §9): send the request again with the server's nonce. */
const USE_DPOP_NONCE = /error\s*=\s*"?use_dpop_nonce"?/i;

export class HttpCredentials {
  /** The provider generation in the cached POST headers (-1: none yet). */
  generation = -1;

  constructor(
    private readonly auth: AuthProvider | undefined,
    private readonly resourceUrl: URL,
    private readonly server: string,
  ) {}

  /** The provider's generation now: what headers built at this moment carry. */
  get current(): number {
    return this.auth?.generation ?? -1;
  }

  /** The provider has credentials newer than the cached POST headers: rebuild them before sending. */
  get stale(): boolean {
    return this.auth !== undefined && this.auth.generation !== this.generation;
  }

  /**
   * Before sending: a promise when the provider renews credentials first (proactive refresh),
   * undefined otherwise, so the usual send does not await.
   */
  prepare(signal?: AbortSignal): Promise<void> | undefined {
    return this.auth?.prepare?.(signal);
  }

  /** Adds the current `Authorization` (when there is one) to headers built for one request. */
  apply(headers: Record<string, string>): Record<string, string> {
    const value = this.auth?.authorization();
    if (value !== undefined) headers.authorization = value;
    return headers;
  }

  /** Whether requests are signed (DPoP): a proof per request, a nonce to keep from responses. */
  get signs(): boolean {
    return this.auth?.proof !== undefined || this.auth?.rememberNonce !== undefined;
  }

  /**
   * The headers of one request to `url`: `headers` itself (no await, no copy) with a bearer token,
   * else a copy with a fresh DPoP proof (RFC 9449 §7): a proof is never reused.
   */
  sign(
    method: string,
    url: URL,
    headers: Record<string, string>,
  ): Record<string, string> | Promise<Record<string, string>> {
    const proof = this.auth?.proof?.(method, url);
    if (proof === undefined) return headers;
    return proof.then((dpop) => ({ ...headers, dpop }));
  }

  /**
   * After any response of `url`: keeps the DPoP nonce it carries, and says whether it is a 401
   * asking for exactly that (`use_dpop_nonce`): the caller sends the request once more.
   */
  nonceRequested(statusCode: number, headers: Headers, url: URL): boolean {
    const nonce = headers['dpop-nonce'];
    if (nonce === undefined || this.auth?.rememberNonce === undefined) return false;
    this.auth.rememberNonce(url, nonce);
    if (statusCode !== 401) return false;
    const challenge = challengesOf(headers);
    return challenge !== undefined && USE_DPOP_NONCE.test(challenge);
  }

  /** Like `apply`, for the cached POST headers: remembers which generation they carry. */
  track(headers: Record<string, string>): Record<string, string> {
    this.generation = this.current;
    return this.apply(headers);
  }

  /** A refusal of credentials that have been replaced since: sending again may do, no authorization needed. */
  outdated(error: unknown): boolean {
    return (
      error instanceof AuthorizationRequiredError &&
      !error.fatal &&
      this.auth !== undefined &&
      error.credentialGeneration !== this.auth.generation
    );
  }

  /** The current credential, for redaction from error text. */
  secret(): string | undefined {
    return this.auth?.authorization();
  }

  /**
   * A 401, or a 403 whose challenge says `insufficient_scope`, as a typed refusal; undefined for
   * every other status. Without a provider the refusal is fatal: the same headers will not do.
   */
  refusal(
    statusCode: number,
    headers: Headers,
    what: string,
    generation: number,
  ): AuthorizationRequiredError | undefined {
    if (statusCode !== 401 && statusCode !== 403) return undefined;
    const wwwAuthenticate = challengesOf(headers);
    if (statusCode === 403 && !(wwwAuthenticate !== undefined && INSUFFICIENT_SCOPE.test(wwwAuthenticate)))
      return undefined;
    const challenge = { status: statusCode, wwwAuthenticate, resourceUrl: this.resourceUrl } as const;
    const refused = statusCode === 401 ? 'authorization required' : 'insufficient scope';
    if (this.auth === undefined) {
      return new AuthorizationRequiredError(
        `HTTP ${statusCode} for ${what}: ${refused}; configure \`auth\` for this server (OAuth) or an Authorization header`,
        challenge,
        -1,
        { server: this.server, fatal: true },
      );
    }
    return new AuthorizationRequiredError(`HTTP ${statusCode} for ${what}: ${refused}`, challenge, generation, {
      server: this.server,
    });
  }
}

/** Every `WWW-Authenticate` challenge: servers send Bearer and DPoP in one header or in two. */
function challengesOf(headers: Headers): string | undefined {
  const value = headers['www-authenticate'];
  return Array.isArray(value) ? value.join(', ') : value;
}
