/** The refresh_token grant (OAuth 2.1 §4.3). A rotating server's new refresh token replaces the old. */
import type { ClientCredentials } from './client-auth.js';
import type { HttpContext } from './http.js';
import { requestTokens } from './token-endpoint.js';
import type { OAuthTokens } from './types.js';

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
