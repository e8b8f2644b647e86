/**
 * Cross-app access (MCP extension SEP-990, "Enterprise-Managed Authorization"): exchange the
 * user's IdP ID token for an Identity Assertion JWT Authorization Grant (ID-JAG) at the IdP
 * (RFC 8693 token exchange), then present it to the MCP server's authorization server with the
 * JWT bearer grant (RFC 7523 §2.1).
 */
import { AuthorizationError } from '../core/errors.js';
import type { ClientCredentials } from './client-auth.js';
import { formEncode, type HttpContext } from './http.js';
import { postTokenRequest, requestTokens } from './token-endpoint.js';
import type { OAuthTokens } from './types.js';

const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

export interface CrossAppAccessInput {
  idpTokenEndpoint: URL;
  idpClientId: string;
  idpClientSecret?: string | undefined;
  idToken: string;
  /** The MCP server's authorization server (its issuer): the ID-JAG's audience. */
  issuer: string;
  tokenEndpoint: URL;
  credentials: ClientCredentials;
  resource: string;
  scope: string | undefined;
}

export async function crossAppAccessGrant(input: CrossAppAccessInput, ctx: HttpContext): Promise<OAuthTokens> {
  const headers: Record<string, string> = {};
  const idpAuth: Record<string, string | undefined> = {};
  if (input.idpClientSecret) {
    headers['authorization'] =
      `Basic ${Buffer.from(`${formEncode(input.idpClientId)}:${formEncode(input.idpClientSecret)}`).toString('base64')}`;
  } else {
    idpAuth['client_id'] = input.idpClientId;
  }
  const exchanged = await postTokenRequest(
    {
      what: 'token exchange at the IdP',
      endpoint: input.idpTokenEndpoint,
      params: {
        grant_type: TOKEN_EXCHANGE_GRANT,
        requested_token_type: ID_JAG_TYPE,
        audience: input.issuer,
        resource: input.resource,
        scope: input.scope,
        subject_token: input.idToken,
        subject_token_type: ID_TOKEN_TYPE,
        ...idpAuth,
      },
      headers,
    },
    // The IdP is not the server the token is for: no DPoP proof there.
    { ...ctx, dpop: undefined },
  );
  const grant = exchanged['access_token'];
  if (typeof grant !== 'string' || grant === '')
    throw new AuthorizationError('token exchange at the IdP: the answer has no access_token (ID-JAG)', {
      server: ctx.server,
    });
  const issuedType = exchanged['issued_token_type'];
  if (issuedType !== undefined && issuedType !== ID_JAG_TYPE) {
    throw new AuthorizationError(
      `token exchange at the IdP: issued_token_type is ${JSON.stringify(issuedType)}, expected ${ID_JAG_TYPE}`,
      { server: ctx.server },
    );
  }
  return requestTokens(
    {
      what: 'jwt-bearer grant',
      endpoint: input.tokenEndpoint,
      params: { grant_type: JWT_BEARER_GRANT, assertion: grant, scope: input.scope, resource: input.resource },
      credentials: input.credentials,
    },
    ctx,
  );
}
