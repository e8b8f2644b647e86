/**
 * Discovery: which authorization server protects the MCP server, and where its endpoints are.
 * Protected Resource Metadata first (RFC 9728: the challenge's `resource_metadata`, else the
 * path-based well-known URI, else the root one), then that server's metadata in the MCP spec's
 * priority order. Without any PRM the 2025-03-26 rules apply: metadata at the MCP server's
 * origin, or the default `/authorize`, `/token` and `/register` there.
 */
import { AuthorizationError } from '../core/errors.js';
import { describeUrl, httpCall, parseJsonObject, type HttpCall, type HttpContext } from './http.js';
import {
  authorizationServerMetadataSchema,
  protectedResourceMetadataSchema,
  validateDocument,
  type AuthorizationServerMetadata,
  type ProtectedResourceMetadata,
} from './metadata.js';
import { resourceCovers, resourceIndicator } from './resource.js';

export interface Discovery {
  /** The PRM document and where it was found; undefined on a 2025-03-26 server. */
  resourceMetadata?: { url: string; document: ProtectedResourceMetadata } | undefined;
  /** The authorization server's issuer identifier. */
  issuer: string;
  /** The RFC 8707 `resource` to send: the PRM's `resource` verbatim, else the canonical server URI. */
  resource: string;
  /** Undefined when the server publishes no metadata (2025-03-26 default endpoints). */
  metadata?: AuthorizationServerMetadata | undefined;
  authorizationEndpoint?: URL | undefined;
  tokenEndpoint: URL;
  registrationEndpoint?: URL | undefined;
}

/** The PRM URLs to try, in order: the header's, then path-based, then root (RFC 9728 §3.1). */
export function protectedResourceMetadataUrls(resourceUrl: URL, fromHeader: string | undefined): URL[] {
  const urls: URL[] = [];
  if (fromHeader && URL.canParse(fromHeader)) {
    const url = new URL(fromHeader);
    if (url.protocol === 'https:' || url.protocol === 'http:') urls.push(url);
  }
  const path = resourceUrl.pathname.replace(/\/$/, '');
  if (path !== '') urls.push(new URL(`/.well-known/oauth-protected-resource${path}`, resourceUrl.origin));
  urls.push(new URL('/.well-known/oauth-protected-resource', resourceUrl.origin));
  return dedupe(urls);
}

/** The metadata URLs to try for an issuer, in the MCP spec's priority order. */
export function authorizationServerMetadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/$/, '');
  if (path === '') {
    return [
      new URL('/.well-known/oauth-authorization-server', issuer.origin),
      new URL('/.well-known/openid-configuration', issuer.origin),
    ];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, issuer.origin),
    new URL(`/.well-known/openid-configuration${path}`, issuer.origin),
    new URL(`${path}/.well-known/openid-configuration`, issuer.origin),
  ];
}

/**
 * Runs discovery. The PRM is read every time (it is what names the authorization server, and that
 * may change: SEP-2352); the authorization server's metadata is reused from `previous` when the
 * PRM still names the same server. Of several servers, `preferredIssuer` wins when listed.
 */
export async function discover(
  resourceUrl: URL,
  resourceMetadataFromHeader: string | undefined,
  ctx: HttpContext,
  previous?: Discovery,
  preferredIssuer?: string,
): Promise<Discovery> {
  const prm = await fetchProtectedResourceMetadata(resourceUrl, resourceMetadataFromHeader, ctx);
  if (prm) {
    const servers = prm.document.authorization_servers;
    const issuer =
      servers.find((s) => preferredIssuer !== undefined && trimSlash(s) === trimSlash(preferredIssuer)) ?? servers[0]!;
    const resource = resourceIndicator(prm.document.resource, resourceUrl);
    if (previous?.resourceMetadata && previous.metadata && trimSlash(previous.issuer) === trimSlash(issuer))
      return { ...previous, resourceMetadata: prm, resource };
    const found = await fetchAuthorizationServerMetadata(new URL(issuer), ctx);
    if (!found) {
      throw new AuthorizationError(
        `authorization server metadata: none found for ${issuer} (tried ${authorizationServerMetadataUrls(new URL(issuer)).map(describeUrl).join(', ')})`,
        { server: ctx.server },
      );
    }
    if (trimSlash(found.document.issuer) !== trimSlash(issuer)) {
      throw new AuthorizationError(
        `authorization server metadata at ${found.url} names issuer ${found.document.issuer}, expected ${issuer}`,
        { server: ctx.server },
      );
    }
    return { resourceMetadata: prm, issuer: found.document.issuer, resource, ...endpointsOf(found.document) };
  }
  if (previous && !previous.resourceMetadata) return previous;
  // 2025-03-26: the authorization base URL is the MCP server URL without its path.
  const base = new URL(resourceUrl.origin);
  const resource = resourceIndicator(undefined, resourceUrl);
  const found = await fetchAuthorizationServerMetadata(base, ctx);
  if (found) return { issuer: found.document.issuer, resource, ...endpointsOf(found.document) };
  return {
    issuer: base.origin,
    resource,
    authorizationEndpoint: new URL('/authorize', base),
    tokenEndpoint: new URL('/token', base),
    registrationEndpoint: new URL('/register', base),
  };
}

async function fetchProtectedResourceMetadata(
  resourceUrl: URL,
  fromHeader: string | undefined,
  ctx: HttpContext,
): Promise<{ url: string; document: ProtectedResourceMetadata } | undefined> {
  for (const url of protectedResourceMetadataUrls(resourceUrl, fromHeader)) {
    const call: HttpCall = { what: 'protected resource metadata', method: 'GET', url };
    const answer = await httpCall(call, ctx);
    if (answer.status < 200 || answer.status >= 300) continue;
    const document = validateDocument(
      protectedResourceMetadataSchema,
      parseJsonObject(answer, call, ctx),
      `protected resource metadata at ${describeUrl(url)}`,
      ctx.server,
    );
    if (!resourceCovers(document.resource, resourceUrl)) {
      // A server must not send the client to authorize for some other resource (RFC 9728 §3.3).
      throw new AuthorizationError(
        `protected resource metadata at ${describeUrl(url)} is for resource ${JSON.stringify(document.resource)}, which does not match the server URL ${describeUrl(resourceUrl)}; refusing to authorize`,
        { server: ctx.server },
      );
    }
    return { url: url.href, document };
  }
  return undefined;
}

async function fetchAuthorizationServerMetadata(
  issuer: URL,
  ctx: HttpContext,
): Promise<{ url: string; document: AuthorizationServerMetadata } | undefined> {
  for (const url of authorizationServerMetadataUrls(issuer)) {
    const call: HttpCall = { what: 'authorization server metadata', method: 'GET', url };
    const answer = await httpCall(call, ctx);
    if (answer.status >= 500) {
      throw new AuthorizationError(
        `authorization server metadata: GET ${describeUrl(url)} answered HTTP ${answer.status}`,
        { server: ctx.server, fatal: false, retryable: true },
      );
    }
    if (answer.status < 200 || answer.status >= 300) continue;
    const document = validateDocument(
      authorizationServerMetadataSchema,
      parseJsonObject(answer, call, ctx),
      `authorization server metadata at ${describeUrl(url)}`,
      ctx.server,
    );
    return { url: describeUrl(url), document };
  }
  return undefined;
}

function endpointsOf(
  metadata: AuthorizationServerMetadata,
): Omit<Discovery, 'issuer' | 'resource' | 'resourceMetadata'> {
  return {
    metadata,
    authorizationEndpoint: metadata.authorization_endpoint ? new URL(metadata.authorization_endpoint) : undefined,
    tokenEndpoint: new URL(metadata.token_endpoint),
    registrationEndpoint: metadata.registration_endpoint ? new URL(metadata.registration_endpoint) : undefined,
  };
}

function trimSlash(value: string): string {
  return value.endsWith('/') ? value.slice(0, -1) : value;
}

function dedupe(urls: URL[]): URL[] {
  const seen = new Set<string>();
  return urls.filter((url) => !seen.has(url.href) && seen.add(url.href));
}
