/** The client credentials grant (OAuth 2.1 §4.2; MCP extension SEP-1046): machine-to-machine, no user. */
import type { ClientCredentials } from './client-auth.js';
import type { HttpContext } from './http.js';
import { requestTokens } from './token-endpoint.js';
import type { OAuthTokens } from './types.js';

export async function clientCredentialsGrant(
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
