/**
 * Workload identity federation (MCP extension SEP-1933): the workload presents a JWT its platform
 * issued to it (a Kubernetes service account token, a cloud identity token) as an RFC 7523 §2.1
 * JWT-bearer grant. No browser, no dynamic registration; client authentication only when a client
 * id is configured. A refused assertion is reported, not retried with another grant.
 */
import { AuthorizationError } from '../core/errors.js';
import type { ClientCredentials } from './client-auth.js';
import type { HttpContext } from './http.js';
import { requestTokens } from './token-endpoint.js';
import type { OAuthTokens } from './types.js';

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface WorkloadIdentityInput {
  tokenEndpoint: URL;
  /** The workload's JWT; a function is called for a fresh one on each grant. */
  assertion: string | (() => string | Promise<string>);
  credentials: ClientCredentials | undefined;
  resource: string;
  scope: string | undefined;
}

export async function workloadIdentityGrant(input: WorkloadIdentityInput, ctx: HttpContext): Promise<OAuthTokens> {
  const assertion = typeof input.assertion === 'function' ? await input.assertion() : input.assertion;
  if (typeof assertion !== 'string' || assertion.split('.').length !== 3) {
    throw new AuthorizationError('workload identity: the assertion is not a JWT (three dot-separated parts)', {
      server: ctx.server,
    });
  }
  try {
    return await requestTokens(
      {
        what: 'jwt-bearer grant (workload identity)',
        endpoint: input.tokenEndpoint,
        params: { grant_type: JWT_BEARER_GRANT, assertion, scope: input.scope, resource: input.resource },
        credentials: input.credentials,
      },
      ctx,
    );
  } catch (error) {
    // The same static assertion will be refused again: stop, unless a function can supply a new one.
    if (
      error instanceof AuthorizationError &&
      error.oauthError === 'invalid_grant' &&
      typeof input.assertion === 'string'
    )
      throw new AuthorizationError(error.message, { server: ctx.server, oauthError: error.oauthError, fatal: true });
    throw error;
  }
}
