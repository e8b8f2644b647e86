// The authorization endpoint: a user who approves at once; the codes it hands out (with their
// PKCE challenge) until the token endpoint redeems them.
import type { ServerResponse } from 'node:http';
import type { Clients } from './clients.js';
import { issuerOf, oauthError, type OAuthContext } from './context.js';

export interface IssuedCode {
  clientId: string;
  challenge?: string | undefined;
  redirectUri: string;
  scope?: string | undefined;
  resource?: string | undefined;
}

export interface AuthorizationEndpoint {
  /** GET /authorize: redirect back with a code (or the configured error). */
  authorize(query: Record<string, string>, res: ServerResponse): void;
  /** Take a code; each works once. */
  redeem(code: string): IssuedCode | undefined;
}

export function createAuthorizationEndpoint(
  ctx: OAuthContext,
  clients: Clients,
  nextId: () => number,
): AuthorizationEndpoint {
  const { o } = ctx;
  const codes = new Map<string, IssuedCode>();
  return {
    authorize(q, res) {
      const client = q['client_id'] ? clients.forAuthorize(q['client_id']) : undefined;
      if (!client || !q['redirect_uri'])
        return oauthError(res, 400, 'invalid_request', 'unknown client or no redirect_uri');
      const back = new URL(q['redirect_uri']);
      if (o.authorizeError) back.searchParams.set('error', o.authorizeError);
      else {
        const code = `code-${nextId()}`;
        codes.set(code, {
          clientId: q['client_id']!,
          challenge: q['code_challenge'],
          redirectUri: q['redirect_uri'],
          scope: q['scope'],
          resource: q['resource'],
        });
        back.searchParams.set('code', code);
      }
      if (q['state']) back.searchParams.set('state', o.wrongState ? 'forged' : q['state']);
      if (o.iss === 'advertised') back.searchParams.set('iss', issuerOf(ctx));
      res.writeHead(302, { location: back.href }).end();
    },
    redeem(code) {
      const entry = codes.get(code);
      codes.delete(code);
      return entry;
    },
  };
}
