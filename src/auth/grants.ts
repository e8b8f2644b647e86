/**
 * The grant a client is configured for (`grant` in its OAuth options), run once discovery and the
 * client's identity are known: workload identity, the authorization code with PKCE, client
 * credentials, or cross-app access (an ID-JAG from the enterprise IdP); and the refresh grant
 * that renews what they gave. Each returns the tokens.
 */
import { AuthorizationError } from '../core/errors.js';
import { authorizationCodeGrant } from './authorization-code.js';
import type { ClientCredentials } from './client-auth.js';
import { crossAppAccessGrant } from './cross-app-access.js';
import type { Discovery } from './discovery.js';
import type { HttpContext } from './http.js';
import type { OAuthClientOptions, OAuthGrant } from './options.js';
import { requestTokens } from './token-endpoint.js';
import type { OAuthTokens } from './types.js';
import { workloadIdentityGrant } from './workload-identity.js';

/** Who runs the grant: the configured grant and options, and the server named in errors. */
export interface GrantClient {
  grant: OAuthGrant;
  options: OAuthClientOptions;
  server: string;
}

export async function runGrant(
  client: GrantClient,
  discovery: Discovery,
  credentials: ClientCredentials | undefined,
  scope: string | undefined,
  ctx: HttpContext & { signal: AbortSignal },
): Promise<OAuthTokens> {
  const o = client.options;
  if (client.grant === 'workload_identity') {
    return workloadIdentityGrant(
      {
        tokenEndpoint: discovery.tokenEndpoint,
        assertion: o.workloadAssertion!,
        credentials,
        resource: discovery.resource,
        scope,
      },
      ctx,
    );
  }
  // Every other grant authenticates the client (resolved before this call).
  if (!credentials) throw new AuthorizationError('no client credentials', { server: client.server });
  switch (client.grant) {
    case 'authorization_code':
      return authorizationCodeGrant(
        {
          discovery,
          credentials,
          redirectUri: o.redirectUri!,
          onRedirect: o.onRedirect!,
          resource: discovery.resource,
          scope,
        },
        ctx,
      );
    case 'client_credentials':
      return clientCredentialsGrant(
        { tokenEndpoint: discovery.tokenEndpoint, credentials, resource: discovery.resource, scope },
        ctx,
      );
    case 'cross_app_access': {
      const idToken = typeof o.idpIdToken === 'function' ? await o.idpIdToken() : o.idpIdToken!;
      return crossAppAccessGrant(
        {
          idpTokenEndpoint: new URL(o.idpTokenEndpoint!),
          idpClientId: o.idpClientId!,
          idpClientSecret: o.idpClientSecret,
          idToken,
          issuer: discovery.issuer,
          tokenEndpoint: discovery.tokenEndpoint,
          credentials,
          resource: discovery.resource,
          scope,
        },
        ctx,
      );
    }
  }
}

/** The client credentials grant (OAuth 2.1 §4.2; MCP extension SEP-1046): machine-to-machine, no user. */
async function clientCredentialsGrant(
  input: { tokenEndpoint: URL; credentials: ClientCredentials; resource: string; scope: string | undefined },
  ctx: HttpContext,
): Promise<OAuthTokens> {
  return requestTokens(
    {
      what: 'client_credentials grant',
      endpoint: input.tokenEndpoint,
      params: { grant_type: 'client_credentials', scope: input.scope, resource: input.resource },
      credentials: input.credentials,
    },
    ctx,
  );
}

/** The refresh_token grant (OAuth 2.1 §4.3). A rotating server's new refresh token replaces the old. */
export async function refreshGrant(
  input: { tokenEndpoint: URL; credentials: ClientCredentials; refreshToken: string; resource: string },
  ctx: HttpContext,
): Promise<OAuthTokens> {
  return requestTokens(
    {
      what: 'refresh_token grant',
      endpoint: input.tokenEndpoint,
      params: { grant_type: 'refresh_token', refresh_token: input.refreshToken, resource: input.resource },
      credentials: input.credentials,
    },
    ctx,
    input.refreshToken,
  );
}
