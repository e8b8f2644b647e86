/**
 * The client's identity at an authorization server, in the MCP spec's priority order:
 * pre-registered, a stored registration, a Client ID Metadata Document URL (when the server
 * supports it), Dynamic Client Registration (RFC 7591), else a fatal error on how to pre-register.
 */
import { AuthorizationError } from '../core/errors.js';
import { excerpt } from '../core/excerpt.js';
import { registrationAuthMethod } from './client-auth.js';
import type { Discovery } from './discovery.js';
import { describeUrl, httpCall, parseJsonObject, type HttpCall, type HttpContext } from './http.js';
import type { OAuthClientOptions } from './options.js';
import type { OAuthClientInformation, TokenEndpointAuthMethod } from './types.js';

const AUTH_METHODS: readonly string[] = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'];

export interface ResolvedClient {
  client: OAuthClientInformation;
  /** How it was obtained; 'registered' ones are worth persisting. */
  source: 'pre-registered' | 'stored' | 'metadata-document' | 'registered';
}

export async function resolveClient(
  options: OAuthClientOptions,
  discovery: Discovery,
  stored: OAuthClientInformation | undefined,
  ctx: HttpContext,
): Promise<ResolvedClient> {
  if (options.clientId) {
    return {
      source: 'pre-registered',
      client: {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        token_endpoint_auth_method: options.tokenEndpointAuthMethod,
      },
    };
  }
  if (stored && !secretExpired(stored)) return { source: 'stored', client: stored };
  if (options.clientMetadataUrl && discovery.metadata?.client_id_metadata_document_supported === true) {
    return {
      source: 'metadata-document',
      client: {
        client_id: options.clientMetadataUrl,
        token_endpoint_auth_method: options.privateKeyPem ? 'private_key_jwt' : 'none',
      },
    };
  }
  if (discovery.registrationEndpoint)
    return { source: 'registered', client: await register(discovery.registrationEndpoint, options, discovery, ctx) };
  throw new AuthorizationError(
    `authorization server ${discovery.issuer} offers no dynamic client registration` +
      (discovery.metadata?.client_id_metadata_document_supported
        ? ' (it accepts Client ID Metadata Documents: set auth.clientMetadataUrl)'
        : '') +
      `; register a client with it and set auth.clientId (and auth.clientSecret for a confidential client)`,
    { server: ctx.server },
  );
}

async function register(
  endpoint: URL,
  options: OAuthClientOptions,
  discovery: Discovery,
  ctx: HttpContext,
): Promise<OAuthClientInformation> {
  const method: TokenEndpointAuthMethod =
    options.tokenEndpointAuthMethod ??
    registrationAuthMethod(discovery.metadata?.token_endpoint_auth_methods_supported);
  // SEP-2207: list refresh_token so the server may issue refresh tokens to this client.
  const body = {
    // SEP-837 (OpenID DCR §2): a loopback or custom-scheme redirect means an app on the user's device.
    application_type: applicationType(options.redirectUri),
    client_name: options.clientName ?? 'mcp-supervisor',
    redirect_uris: options.redirectUri ? [options.redirectUri] : [],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: method,
  };
  const call: HttpCall = {
    what: 'dynamic client registration',
    method: 'POST',
    url: endpoint,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
  const answer = await httpCall(call, ctx);
  if (answer.status < 200 || answer.status >= 300) {
    let detail = '';
    try {
      const error = parseJsonObject(answer, call, ctx);
      if (typeof error['error'] === 'string')
        detail = `: ${error['error']}${typeof error['error_description'] === 'string' ? ` (${excerpt(error['error_description'], 200)})` : ''}`;
    } catch {
      // no OAuth error body
    }
    const transient = answer.status >= 500 || answer.status === 429;
    throw new AuthorizationError(
      `dynamic client registration: POST ${describeUrl(endpoint)} answered HTTP ${answer.status}${detail}`,
      { server: ctx.server, fatal: !transient },
    );
  }
  const info = parseJsonObject(answer, call, ctx);
  if (typeof info['client_id'] !== 'string' || info['client_id'] === '') {
    throw new AuthorizationError(
      `dynamic client registration: the answer from ${describeUrl(endpoint)} has no client_id`,
      { server: ctx.server },
    );
  }
  const returnedMethod =
    typeof info['token_endpoint_auth_method'] === 'string' && AUTH_METHODS.includes(info['token_endpoint_auth_method'])
      ? (info['token_endpoint_auth_method'] as TokenEndpointAuthMethod)
      : undefined;
  const secret =
    typeof info['client_secret'] === 'string' && info['client_secret'] !== '' ? info['client_secret'] : undefined;
  return {
    client_id: info['client_id'],
    client_secret: secret,
    client_secret_expires_at:
      typeof info['client_secret_expires_at'] === 'number' ? info['client_secret_expires_at'] : undefined,
    // What the server settled on wins; without an answer, a secret implies what we asked for.
    token_endpoint_auth_method:
      returnedMethod ?? (secret ? (method === 'none' ? 'client_secret_basic' : method) : 'none'),
  };
}

/** `native` for loopback (RFC 8252 §7.3) and private-use scheme redirects, else `web`. */
export function applicationType(redirectUri: string | undefined): 'native' | 'web' {
  if (!redirectUri || !URL.canParse(redirectUri)) return 'native';
  const url = new URL(redirectUri);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'native';
  return LOOPBACK_HOSTS.has(url.hostname) ? 'native' : 'web';
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function secretExpired(client: OAuthClientInformation): boolean {
  const expiresAt = client.client_secret_expires_at;
  return !!client.client_secret && expiresAt !== undefined && expiresAt !== 0 && expiresAt * 1000 <= Date.now();
}
