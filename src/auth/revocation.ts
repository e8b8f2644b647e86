/**
 * Token revocation (RFC 7009): the refresh token first (a server revokes the access tokens issued
 * from it too, §2.1), then the access token. The server answers 200 for tokens it does not know,
 * so any 2xx is success; an error answer is reported, and the caller forgets the tokens anyway.
 */
import { AuthorizationError } from '../core/errors.js';
import { applyClientAuth, type ClientCredentials } from './client-auth.js';
import { describeUrl, httpCall, type HttpContext } from './http.js';
import type { OAuthTokens } from './types.js';

export async function revokeTokens(
  endpoint: URL,
  tokens: OAuthTokens,
  credentials: ClientCredentials,
  ctx: HttpContext,
): Promise<void> {
  const list: Array<[string, 'refresh_token' | 'access_token']> = [];
  if (tokens.refresh_token) list.push([tokens.refresh_token, 'refresh_token']);
  list.push([tokens.access_token, 'access_token']);
  for (const [token, hint] of list) {
    const form = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    applyClientAuth(credentials, form, headers, ctx.server);
    const answer = await httpCall(
      { what: 'token revocation', method: 'POST', url: endpoint, headers, body: form.toString() },
      ctx,
    );
    if (answer.status < 200 || answer.status >= 300) {
      throw new AuthorizationError(
        `token revocation: POST ${describeUrl(endpoint)} answered HTTP ${answer.status} for the ${hint.replace('_', ' ')}`,
        { server: ctx.server, fatal: false },
      );
    }
  }
}
