/**
 * Token requests (form-encoded POSTs) and their answers: a token response becomes OAuthTokens,
 * an OAuth error response an AuthorizationError carrying the server's `error` code. Secrets sent
 * in the request are redacted from anything the server echoes back.
 */
import { AuthorizationError } from '../core/errors.js';
import { NO_SECRETS, redact } from '../core/redact.js';
import { excerpt } from '../core/excerpt.js';
import { applyClientAuth, type ClientCredentials } from './client-auth.js';
import { USE_DPOP_NONCE } from './dpop.js';
import { describeUrl, httpCall, parseJsonObject, type HttpCall, type HttpContext } from './http.js';
import type { OAuthTokens } from './types.js';

/** Errors after which the same request cannot succeed; others (invalid_grant) may with a new grant. */
const FATAL_OAUTH_ERRORS = new Set([
  'invalid_client',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]);

export interface TokenRequest {
  /** For messages: 'authorization_code grant', 'refresh', 'token exchange at the IdP'… */
  what: string;
  endpoint: URL;
  params: Record<string, string | undefined>;
  /** Client authentication; undefined when the caller already put it in `params`/`headers`. */
  credentials?: ClientCredentials | undefined;
  headers?: Record<string, string> | undefined;
}

/**
 * POSTs a token request and returns the JSON body of a 2xx answer; OAuth errors throw. With
 * `ctx.dpop` each attempt carries a fresh proof, and one `use_dpop_nonce` refusal is retried with
 * the server's nonce (RFC 9449 §8).
 */
export async function postTokenRequest(request: TokenRequest, ctx: HttpContext): Promise<Record<string, unknown>> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await postOnce(request, ctx);
    if (outcome.kind === 'ok') return outcome.body;
    if (outcome.kind === 'retry' && attempt === 0) continue;
    throw outcome.error;
  }
}

type Outcome = { kind: 'ok'; body: Record<string, unknown> } | { kind: 'retry' | 'failed'; error: AuthorizationError };

async function postOnce(request: TokenRequest, ctx: HttpContext): Promise<Outcome> {
  // Built per attempt: a retry needs a new proof and a new client assertion (each has its own jti).
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(request.params)) if (value !== undefined) form.set(name, value);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', ...request.headers };
  if (request.credentials) applyClientAuth(request.credentials, form, headers, ctx.server);
  const dpop = ctx.dpop;
  if (dpop) {
    headers['dpop'] = await dpop.prover.proof({
      method: 'POST',
      url: request.endpoint,
      nonce: dpop.nonces.get(request.endpoint),
    });
  }
  const call: HttpCall = { what: request.what, method: 'POST', url: request.endpoint, headers, body: form.toString() };
  const answer = await httpCall(call, ctx);
  const newNonce = dpop?.nonces.remember(request.endpoint, answer.headers['dpop-nonce']) ?? false;
  const secrets = [...form.values(), headers['authorization'], request.credentials?.client.client_secret];
  if (answer.status >= 200 && answer.status < 300) return { kind: 'ok', body: parseJsonObject(answer, call, ctx) };
  let body: Record<string, unknown> | undefined;
  try {
    body = parseJsonObject(answer, call, ctx);
  } catch {
    body = undefined;
  }
  const error = typeof body?.['error'] === 'string' ? body['error'] : undefined;
  const description =
    typeof body?.['error_description'] === 'string'
      ? redact(excerpt(body['error_description'], 200), NO_SECRETS, secrets)
      : undefined;
  const where = `POST ${describeUrl(request.endpoint)}`;
  // A server error is transient whatever its body says (`temporarily_unavailable` in a 503): the
  // grant was not judged, so nothing it holds is given up.
  const transient = answer.status >= 500 || answer.status === 429;
  if (!error) {
    return {
      kind: 'failed',
      error: new AuthorizationError(`${request.what}: ${where} answered HTTP ${answer.status}`, {
        server: ctx.server,
        fatal: !transient,
        retryable: transient,
      }),
    };
  }
  const refused = new AuthorizationError(
    `${request.what}: the authorization server refused (${redact(error, NO_SECRETS, secrets)}${description ? `: ${description}` : ''})`,
    {
      server: ctx.server,
      oauthError: error,
      fatal: !transient && FATAL_OAUTH_ERRORS.has(error),
      retryable: transient,
    },
  );
  return { kind: error === USE_DPOP_NONCE && newNonce ? 'retry' : 'failed', error: refused };
}

/** A grant: POSTs its token request and reads the tokens from the answer. */
export async function requestTokens(
  request: TokenRequest,
  ctx: HttpContext,
  previousRefreshToken?: string,
): Promise<OAuthTokens> {
  const body = await postTokenRequest(request, ctx);
  return parseTokenResponse(body, request.what, ctx.server, previousRefreshToken, ctx.dpop !== undefined);
}

/**
 * A token response (RFC 6749 §5.1) as OAuthTokens: Bearer tokens, and DPoP-bound tokens when the
 * request carried a proof (`proved`; RFC 9449 §5 — a server may still answer Bearer).
 */
export function parseTokenResponse(
  body: Record<string, unknown>,
  what: string,
  server: string,
  previousRefreshToken?: string,
  proved = false,
): OAuthTokens {
  const accessToken = body['access_token'];
  if (typeof accessToken !== 'string' || accessToken === '')
    throw new AuthorizationError(`${what}: the token response has no access_token`, { server });
  const tokenType = typeof body['token_type'] === 'string' ? body['token_type'] : 'Bearer';
  const bound = tokenType.toLowerCase() === 'dpop';
  if (tokenType.toLowerCase() !== 'bearer' && !(bound && proved))
    throw new AuthorizationError(
      `${what}: token_type ${JSON.stringify(excerpt(tokenType, 40))} is not supported (${proved ? 'Bearer or DPoP' : 'only Bearer: no DPoP proof was sent'})`,
      { server },
    );
  const expiresIn =
    typeof body['expires_in'] === 'number'
      ? body['expires_in']
      : typeof body['expires_in'] === 'string'
        ? Number(body['expires_in'])
        : undefined;
  const refreshToken =
    typeof body['refresh_token'] === 'string' && body['refresh_token'] !== ''
      ? body['refresh_token']
      : previousRefreshToken;
  return {
    access_token: accessToken,
    token_type: bound ? 'DPoP' : 'Bearer',
    refresh_token: refreshToken,
    expires_at: expiresIn !== undefined && Number.isFinite(expiresIn) ? Date.now() + expiresIn * 1000 : undefined,
    scope: typeof body['scope'] === 'string' ? body['scope'] : undefined,
  };
}
