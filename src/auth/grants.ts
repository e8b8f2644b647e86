/**
 * The grant a client is configured for (`grant` in its OAuth options), run once discovery and the
 * client's identity are known: workload identity, the authorization code with PKCE, client
 * credentials, or cross-app access (an ID-JAG from the enterprise IdP). Each returns the tokens.
 */
import { AuthorizationError } from '../core/errors.js';
import { authorizationCodeGrant } from './authorization-code.js';
import type { ClientCredentials } from './client-auth.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { crossAppAccessGrant } from './cross-app-access.js';
import type { Discovery } from './discovery.js';
import type { HttpContext } from './http.js';
import type { OAuthClientOptions, OAuthGrant } from './options.js';
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
