/**
 * Client authentication at a token endpoint (RFC 6749 §2.3, RFC 7523 §2.2): choosing the method
 * from what the client holds and the server supports, and applying it to a request.
 */
import type { KeyObject } from 'node:crypto';
import { AuthorizationError } from '../core/errors.js';
import { formEncode } from './http.js';
import { clientAssertion, type SigningAlgorithm } from './jwt.js';
import type { OAuthClientInformation, TokenEndpointAuthMethod } from './types.js';

export interface SigningKey {
  key: KeyObject;
  algorithm: SigningAlgorithm;
  keyId?: string | undefined;
}

export interface ClientCredentials {
  client: OAuthClientInformation;
  method: TokenEndpointAuthMethod;
  signingKey?: SigningKey | undefined;
  /** The `aud` of client assertions: the authorization server's issuer. */
  audience: string;
}

/**
 * The method to use: an explicit choice, else what registration said, else derived from what the
 * client has. RFC 8414: servers that list nothing support `client_secret_basic`.
 */
export function chooseAuthMethod(
  client: OAuthClientInformation,
  supported: readonly string[] | undefined,
  configured: TokenEndpointAuthMethod | undefined,
  hasSigningKey: boolean,
): TokenEndpointAuthMethod {
  if (configured) return configured;
  if (client.token_endpoint_auth_method) return client.token_endpoint_auth_method;
  if (hasSigningKey && (!supported || supported.includes('private_key_jwt'))) return 'private_key_jwt';
  if (!client.client_secret) return 'none';
  const list = supported ?? ['client_secret_basic'];
  if (list.includes('client_secret_basic')) return 'client_secret_basic';
  if (list.includes('client_secret_post')) return 'client_secret_post';
  return 'client_secret_basic';
}

/** The method to ask for in dynamic registration, from the server's list. */
export function registrationAuthMethod(supported: readonly string[] | undefined): TokenEndpointAuthMethod {
  const list = supported ?? ['client_secret_basic'];
  if (list.includes('client_secret_basic')) return 'client_secret_basic';
  if (list.includes('client_secret_post')) return 'client_secret_post';
  return 'none';
}

/** Adds the client's authentication to a token request's form and headers. */
export function applyClientAuth(
  credentials: ClientCredentials,
  form: URLSearchParams,
  headers: Record<string, string>,
  server: string,
): void {
  const { client, method } = credentials;
  switch (method) {
    case 'client_secret_basic': {
      const secret = requireSecret(client, method, server);
      // RFC 6749 §2.3.1: both parts form-encoded before base64
      headers['authorization'] =
        `Basic ${Buffer.from(`${formEncode(client.client_id)}:${formEncode(secret)}`).toString('base64')}`;
      return;
    }
    case 'client_secret_post':
      form.set('client_id', client.client_id);
      form.set('client_secret', requireSecret(client, method, server));
      return;
    case 'private_key_jwt': {
      if (!credentials.signingKey)
        throw new AuthorizationError('private_key_jwt client authentication needs privateKeyPem', { server });
      const { key, algorithm, keyId } = credentials.signingKey;
      form.set('client_id', client.client_id);
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', clientAssertion(client.client_id, credentials.audience, key, algorithm, keyId));
      return;
    }
    case 'none':
      form.set('client_id', client.client_id);
      return;
  }
}

function requireSecret(client: OAuthClientInformation, method: TokenEndpointAuthMethod, server: string): string {
  if (!client.client_secret)
    throw new AuthorizationError(
      `${method} client authentication needs a client secret, and client ${client.client_id} has none`,
      { server },
    );
  return client.client_secret;
}
