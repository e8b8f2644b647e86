/**
 * The built-in OAuth 2.1 client as an AuthProvider. `authorization()` only reads the cached
 * token; all the work happens in `authorize()` on a 401/403: refresh when that can help, else
 * discovery, client identity and a full grant; step-up on `insufficient_scope`; a limit on
 * attempts that do not lead to a successful request.
 */
import { AuthorizationError, ConfigError, isAbortError } from '../core/errors.js';
import { chooseAuthMethod, type ClientCredentials, type SigningKey } from './client-auth.js';
import { CredentialBook } from './credential-book.js';
import { discover, type Discovery } from './discovery.js';
import { runGrant } from './grants.js';
import { DpopBinding } from './dpop-binding.js';
import { USE_DPOP_NONCE } from './dpop.js';
import type { HttpContext } from './http.js';
import { defaultAlgorithm, loadPrivateKey } from './jwt.js';
import { parseOAuthOptions, type OAuthClientOptions, type OAuthGrant } from './options.js';
import { refreshGrant } from './grants.js';
import { revokeTokens } from './revocation.js';
import { resolveClient } from './registration.js';
import { canonicalResource } from './resource.js';
import { scopesCover, selectScope, unionScopes } from './scopes.js';
import type { Store } from '../store/types.js';
import { credentialKey, storeSlot, tokenStoreSlot } from './credential-slot.js';
import { isRefusal, SharedCredentials, type SharedCredentialsOptions } from './shared-credentials.js';
import { memoryTokenStore } from './token-store.js';
import type { AuthChallenge, AuthProvider, AuthStatus, OAuthTokens } from './types.js';
import { parseBearerChallenge, type BearerChallenge } from './www-authenticate.js';

export interface OAuthProviderContext {
  /** The MCP server URL: the protected resource. */
  resourceUrl: URL;
  /** The server's name, for error messages. */
  server: string;
  /** Where the options sit in the configuration, for ConfigError paths; default `auth`. */
  configPath?: string | undefined;
  /**
   * The supervisor's store: credentials live there, shared with every process given the same
   * store, and are renewed by one of them at a time (docs/fleets.md). `auth.store`, when given
   * too, is read once while the store holds nothing for this credential.
   */
  store?: Store | undefined;
  /** Told once per outage of the store (a StoreUnavailableError); the credentials in hand go on working. */
  onWarning?: ((error: Error) => void) | undefined;
  /** The lease of the credential lock, and how long an unreachable store is waited for (shared-credentials.ts). */
  coordination?: Pick<SharedCredentialsOptions, 'leaseMs' | 'unavailableWaitMs'> | undefined;
}

export interface OAuthProvider extends AuthProvider {
  /** Resolves once the store has been read; a stored token is then returned by `authorization()`. */
  ready(): Promise<void>;
  confirmed(): void;
  /** Proactive refresh (see AuthProvider.prepare); the margin is `refreshMarginMs`. */
  prepare(signal?: AbortSignal): Promise<void> | undefined;
  /** Forgets this server's tokens and registrations locally (every issuer); the server is not told. */
  clear(): Promise<void>;
  /** Same as `clear()`. */
  forget(): Promise<void>;
  /**
   * Logs out: revokes the tokens at the authorization server when it advertises a
   * `revocation_endpoint` (RFC 7009), then forgets them locally, whether or not revocation worked.
   * Resolves with whether the server revoked them; `error` says why not when it tried and failed.
   */
  revoke(signal?: AbortSignal): Promise<{ revoked: boolean; error?: Error | undefined }>;
  /** The canonical server URI: the store key (the `resource` sent is the one the PRM names). */
  readonly resource: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_REFRESH_MARGIN_MS = 60_000;

export function createOAuthProvider(options: OAuthClientOptions, context: OAuthProviderContext): OAuthProvider {
  return new OAuthClientProvider(options, context);
}

class OAuthClientProvider implements OAuthProvider {
  readonly resource: string;
  #generation = 0;
  /** Tokens and registration per authorization server (SEP-2352). */
  readonly #book = new CredentialBook();
  #requestedScope: string | undefined;
  #attempts = 0;
  /** The proactive refresh in flight: every request waiting for it shares it. */
  #refreshing: Promise<void> | undefined;
  #discovery: Discovery | undefined;
  /** DPoP (RFC 9449): proofs, the key per issuer, server nonces. */
  readonly #dpop: DpopBinding;
  readonly #options: OAuthClientOptions;
  readonly #grant: OAuthGrant;
  readonly #resourceUrl: URL;
  readonly #server: string;
  /** Where the credentials live, and the refresh protocol shared with other processes. */
  readonly #shared: SharedCredentials;
  readonly #signingKey: SigningKey | undefined;
  readonly #loaded: Promise<void>;

  constructor(options: OAuthClientOptions, context: OAuthProviderContext) {
    const path = context.configPath ?? 'auth';
    this.#options = parseOAuthOptions(options, path);
    this.#grant = this.#options.grant ?? 'authorization_code';
    // Checked here, not in parseOAuthOptions: a config file cannot hold a function, and the CLI
    // supplies both from its loopback listener after the file was validated.
    for (const field of ['redirectUri', 'onRedirect'] as const) {
      if (this.#grant === 'authorization_code' && !this.#options[field]) {
        throw new ConfigError(
          `${path}.${field}: required for the authorization_code grant (it completes the browser step)`,
          [{ path: `${path}.${field}`, message: 'required for the authorization_code grant' }],
        );
      }
    }
    this.#resourceUrl = new URL(context.resourceUrl.href);
    this.#server = context.server;
    this.resource = canonicalResource(this.#resourceUrl);
    const tokens = this.#options.store;
    const slot = context.store
      ? storeSlot(
          context.store,
          credentialKey(
            this.resource,
            this.#options.principal,
            this.#options.clientId ?? this.#options.clientMetadataUrl,
          ),
          tokens && { tokens, key: this.resource },
        )
      : tokenStoreSlot(tokens ?? memoryTokenStore(), this.resource);
    this.#shared = new SharedCredentials(slot, this.#book, () => this.#adopted(), this.#server, {
      ...context.coordination,
      onWarning: context.onWarning,
    });
    this.#dpop = new DpopBinding(this.#book, this.#options.dpop ?? 'auto', this.#server);
    if (this.#options.privateKeyPem) {
      const key = loadPrivateKey(this.#options.privateKeyPem);
      this.#signingKey = {
        key,
        algorithm: this.#options.signingAlgorithm ?? defaultAlgorithm(key)!,
        keyId: this.#options.keyId,
      };
    }
    this.#loaded = this.#load();
    // Observed here; ready() and authorize() still reject with the store's error.
    this.#loaded.catch(() => {});
  }

  get generation(): number {
    return this.#generation;
  }

  authorization(): string | undefined {
    const tokens = this.#book.tokens;
    if (!tokens) return undefined;
    return `${tokens.token_type === 'DPoP' ? 'DPoP' : 'Bearer'} ${tokens.access_token}`;
  }

  proof(method: string, url: URL): Promise<string> | undefined {
    return this.#dpop.proof(method, url);
  }

  rememberNonce(url: URL, nonce: string | string[]): void {
    this.#dpop.rememberNonce(url, nonce);
  }

  status(): AuthStatus {
    return {
      authorized: this.#book.tokens !== undefined,
      scope: this.#book.tokens?.scope,
      expiresAt: this.#book.tokens?.expires_at,
    };
  }

  ready(): Promise<void> {
    return this.#loaded;
  }

  confirmed(): void {
    if (this.#book.tokens) this.#attempts = 0;
  }

  async clear(): Promise<void> {
    await this.#loaded;
    this.#book.clear();
    this.#dpop.clear();
    this.#requestedScope = undefined;
    this.#discovery = undefined;
    this.#attempts = 0;
    this.#generation++;
    await this.#shared.clear();
  }

  prepare(signal?: AbortSignal): Promise<void> | undefined {
    if (this.#refreshing) return this.#refreshing;
    const tokens = this.#book.tokens;
    const margin = this.#options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
    if (!tokens?.refresh_token || tokens.expires_at === undefined || margin === 0) return undefined;
    if (tokens.expires_at - margin > Date.now()) return undefined;
    this.#refreshing = this.#refreshAhead(signal).finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  /** A refresh that fails is not an error here: the old token goes out, and a 401 takes the usual path. */
  async #refreshAhead(signal: AbortSignal | undefined): Promise<void> {
    const ctx = { server: this.#server, timeoutMs: this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal };
    try {
      const discovery = (this.#discovery ??= await discover(
        this.#resourceUrl,
        undefined,
        ctx,
        undefined,
        this.#book.issuer,
      ));
      if (this.#book.useIssuer(discovery.issuer)) this.#generation++;
      await this.#tryRefresh({}, discovery, { ...ctx, dpop: this.#dpop.signer(discovery) });
    } catch {
      // see above
    }
  }

  forget(): Promise<void> {
    return this.clear();
  }

  async revoke(signal?: AbortSignal): Promise<{ revoked: boolean; error?: Error | undefined }> {
    await this.#loaded;
    const tokens = this.#book.tokens;
    let result: { revoked: boolean; error?: Error | undefined } = { revoked: false };
    if (tokens) {
      const ctx = { server: this.#server, timeoutMs: this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal };
      try {
        const discovery = await discover(this.#resourceUrl, undefined, ctx, this.#discovery, this.#book.issuer);
        const endpoint = discovery.metadata?.revocation_endpoint;
        // Only tokens of the server they came from, with the client registered there.
        if (endpoint && discovery.issuer === this.#book.issuer && (this.#book.client || this.#options.clientId)) {
          await revokeTokens(new URL(endpoint), tokens, await this.#credentials(discovery, ctx), ctx);
          result = { revoked: true };
        }
      } catch (error) {
        result = { revoked: false, error: error instanceof Error ? error : new Error(String(error)) };
      }
    }
    await this.clear();
    return result;
  }

  async authorize(challenge: AuthChallenge, signal: AbortSignal): Promise<void> {
    await this.#loaded;
    signal.throwIfAborted();
    const maxAttempts = this.#options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (this.#attempts >= maxAttempts) {
      throw new AuthorizationError(
        `gave up after ${this.#attempts} authorization attempts that did not lead to a successful request (HTTP ${challenge.status} again)`,
        {
          server: this.#server,
          oauthError: parseBearerChallenge(challenge.wwwAuthenticate).error,
        },
      );
    }
    const bearer = parseBearerChallenge(challenge.wwwAuthenticate, this.#dpop.bound);
    // The server wants a proof with a newer nonce than the one retry had (the transport kept it):
    // the token is fine, the refused request just goes again. Counted, so a server that never
    // settles on a nonce ends at the attempt limit.
    if (bearer.error === USE_DPOP_NONCE && this.#dpop.bound) {
      this.#attempts++;
      this.#generation++;
      return;
    }
    const base = { server: this.#server, timeoutMs: this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal };
    const discovery = await this.#discover(bearer, base);
    // A new authorization server (SEP-2352): its own registration and tokens, never the old ones.
    if (this.#book.useIssuer(discovery.issuer)) this.#generation++;
    const ctx = { ...base, dpop: this.#dpop.signer(discovery, bearer) };
    const stepUp = challenge.status === 403 || bearer.error === 'insufficient_scope';
    if (!stepUp && (await this.#tryRefresh(bearer, discovery, ctx))) {
      this.#attempts++;
      return;
    }
    const scope = stepUp
      ? unionScopes(this.#requestedScope, this.#book.tokens?.scope, bearer.scope)
      : unionScopes(this.#requestedScope, this.#initialScope(bearer, discovery));
    // One sign-in across the processes sharing the credential: the others adopt its tokens.
    await this.#shared.signIn(
      async () => {
        // Workload identity authenticates with its assertion: no registration, a client id only if configured.
        const credentials =
          this.#grant === 'workload_identity' && !this.#options.clientId
            ? undefined
            : await this.#credentials(discovery, ctx);
        const tokens = await runGrant(
          { grant: this.#grant, options: this.#options, server: this.#server },
          discovery,
          credentials,
          scope,
          ctx,
        );
        await this.#accept(tokens, scope);
      },
      signal,
      (tokens) => scopesCover(tokens.scope, scope),
    );
    // Only attempts that produced credentials count: a network blip must not use up the budget.
    this.#attempts++;
  }

  #initialScope(bearer: BearerChallenge, discovery: Discovery): string | undefined {
    return selectScope({
      challengeScope: bearer.scope,
      configuredScope: this.#options.scope,
      resourceScopes: discovery.resourceMetadata?.document.scopes_supported,
      serverScopes: discovery.metadata?.scopes_supported,
      offlineAccess: this.#grant === 'authorization_code' && this.#options.offlineAccess !== false,
    });
  }

  /** True when a refresh produced a new token; false when a full grant is needed instead. */
  async #tryRefresh(bearer: BearerChallenge, discovery: Discovery, ctx: HttpContext): Promise<boolean> {
    const refreshToken = this.#book.tokens?.refresh_token;
    // A refresh cannot widen the scope: if the challenge asks for more, authorize again.
    if (!refreshToken || !scopesCover(this.#book.tokens?.scope ?? this.#requestedScope, bearer.scope)) return false;
    const scope = this.#book.tokens?.scope ?? this.#requestedScope;
    try {
      // Re-read, lock, re-read, refresh, compare-and-swap (shared-credentials.ts).
      const renewal = await this.#shared.refresh(async (freshest) => {
        const credentials = await this.#credentials(discovery, ctx);
        const tokens = await refreshGrant(
          { tokenEndpoint: discovery.tokenEndpoint, credentials, refreshToken: freshest, resource: discovery.resource },
          ctx,
        );
        return { ...tokens, scope: tokens.scope ?? scope };
      }, ctx.signal);
      if (renewal === 'none') return false;
      this.#requestedScope = scope ?? this.#requestedScope;
      if (renewal === 'refreshed') this.#generation++;
      return true;
    } catch (error) {
      if (isAbortError(error) || ctx.signal?.aborted || !isRefusal(error)) throw error;
      // The server refused the refresh token (expired, revoked, rotated away) and no other process
      // holds a newer one: start over. The refresh token is already dropped from the store.
      if (error.oauthError === 'invalid_client' && !this.#options.clientId) this.#book.client = undefined;
      return false;
    }
  }

  async #credentials(discovery: Discovery, ctx: HttpContext): Promise<ClientCredentials> {
    const resolved = await resolveClient(this.#options, discovery, this.#book.client, ctx);
    if (resolved.source === 'registered' || resolved.source === 'metadata-document') {
      this.#book.client = resolved.client;
      await this.#save();
    }
    const method = chooseAuthMethod(
      resolved.client,
      discovery.metadata?.token_endpoint_auth_methods_supported,
      this.#options.tokenEndpointAuthMethod,
      !!this.#signingKey,
    );
    return { client: resolved.client, method, signingKey: this.#signingKey, audience: discovery.issuer };
  }

  /** The PRM is re-read on each challenge: it is where a move to a new authorization server shows. */
  async #discover(bearer: BearerChallenge, ctx: HttpContext): Promise<Discovery> {
    this.#discovery = await discover(
      this.#resourceUrl,
      bearer.resourceMetadata,
      ctx,
      this.#discovery,
      this.#book.issuer,
    );
    return this.#discovery;
  }

  async #accept(tokens: OAuthTokens, requestedScope: string | undefined): Promise<void> {
    // RFC 6749 §5.1: without a `scope` in the answer, the requested scope was granted.
    this.#book.tokens = { ...tokens, scope: tokens.scope ?? requestedScope };
    this.#requestedScope = requestedScope ?? this.#requestedScope;
    this.#generation++;
    await this.#save();
  }

  /** A store that cannot be read (a corrupt token file) is an error, not a silent new login over it. */
  async #load(): Promise<void> {
    await this.#shared.load();
  }

  /** Stored credentials were taken into the book: at start-up, or renewed by another process. */
  #adopted(): void {
    this.#dpop.dropDamagedKey();
    if (this.#book.tokens?.access_token) {
      this.#requestedScope = this.#book.tokens.scope;
      this.#generation++;
    }
  }

  /** Best effort: the credentials work in memory for this run when the store cannot be written. */
  #save(): Promise<void> {
    return this.#shared.save();
  }
}
