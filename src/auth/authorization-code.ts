/**
 * The authorization code grant with PKCE (OAuth 2.1 §4.1): build the authorization URL, hand it
 * to `onRedirect`, check the redirect (state, iss per RFC 9207 / SEP-2468, error), and redeem the code.
 */
import { AuthorizationError, describeError } from '../core/errors.js';
import type { ClientCredentials } from './client-auth.js';
import type { Discovery } from './discovery.js';
import type { HttpContext } from './http.js';
import type { RedirectHandler } from './options.js';
import { assertS256Supported, createPkce, createState } from './pkce.js';
import { requestTokens } from './token-endpoint.js';
import type { OAuthTokens } from './types.js';

export interface AuthorizationCodeInput {
  discovery: Discovery;
  credentials: ClientCredentials;
  redirectUri: string;
  onRedirect: RedirectHandler;
  resource: string;
  scope: string | undefined;
}

export async function authorizationCodeGrant(
  input: AuthorizationCodeInput,
  ctx: HttpContext & { signal: AbortSignal },
): Promise<OAuthTokens> {
  const { discovery, credentials } = input;
  assertS256Supported(discovery.metadata, ctx.server);
  if (!discovery.authorizationEndpoint) {
    throw new AuthorizationError(`authorization server ${discovery.issuer} publishes no authorization_endpoint`, {
      server: ctx.server,
    });
  }
  const pkce = createPkce();
  const state = createState();
  const url = new URL(discovery.authorizationEndpoint.href);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', credentials.client.client_id);
  url.searchParams.set('redirect_uri', input.redirectUri);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', pkce.challenge);
  url.searchParams.set('code_challenge_method', pkce.method);
  if (input.scope) url.searchParams.set('scope', input.scope);
  url.searchParams.set('resource', input.resource);

  let returned: URL;
  try {
    const answer = await input.onRedirect(url, ctx.signal);
    returned = new URL(String(answer));
  } catch (error) {
    if (ctx.signal.aborted) throw ctx.signal.reason ?? error;
    if (error instanceof AuthorizationError) throw error;
    throw new AuthorizationError(
      `the authorization step (onRedirect) failed: ${error instanceof TypeError ? 'it did not return an absolute URL' : describeError(error)}`,
      {
        server: ctx.server,
        fatal: false,
        retryable: true,
        cause: error,
      },
    );
  }
  const code = readRedirect(returned, state, discovery, ctx.server);
  return requestTokens(
    {
      what: 'authorization_code grant',
      endpoint: discovery.tokenEndpoint,
      params: {
        grant_type: 'authorization_code',
        code,
        redirect_uri: input.redirectUri,
        code_verifier: pkce.verifier,
        resource: input.resource,
      },
      credentials,
    },
    ctx,
  );
}

/** The code from the redirect, after checking `state` (CSRF) and `iss` (mix-up, RFC 9207). */
function readRedirect(returned: URL, state: string, discovery: Discovery, server: string): string {
  const params = returned.searchParams;
  if (params.get('state') !== state) {
    throw new AuthorizationError(
      'the redirect from the authorization server carries a state that does not match the request; ignoring it',
      { server },
    );
  }
  const iss = params.get('iss');
  if (iss !== null && iss !== discovery.issuer) {
    throw new AuthorizationError(`the redirect names issuer ${iss}, not ${discovery.issuer}; ignoring it`, { server });
  }
  // RFC 9207 §2.4: a server that promises `iss` and leaves it out may be an attacker's (mix-up).
  if (iss === null && discovery.metadata?.authorization_response_iss_parameter_supported === true) {
    throw new AuthorizationError(
      `the redirect carries no iss, though ${discovery.issuer} advertises authorization_response_iss_parameter_supported (RFC 9207); ignoring it`,
      { server },
    );
  }
  const error = params.get('error');
  if (error !== null) {
    const description = params.get('error_description');
    throw new AuthorizationError(
      `the authorization server refused the authorization request (${error}${description ? `: ${description.slice(0, 200)}` : ''})`,
      {
        server,
        oauthError: error,
        fatal: error !== 'temporarily_unavailable',
      },
    );
  }
  const code = params.get('code');
  if (!code) throw new AuthorizationError('the redirect from the authorization server carries no code', { server });
  return code;
}
