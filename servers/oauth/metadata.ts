// Discovery: the protected resource metadata (RFC 9728) and the authorization server metadata
// (RFC 8414 / OpenID), each where the options put it.
import type { ServerResponse } from 'node:http';
import { issuerOf, json, type OAuthContext } from './context.js';

export interface Metadata {
  /** Where the PRM is served, or undefined (2025-03-26: none). */
  readonly prmPath: string | undefined;
  /** The `resource` the PRM publishes (RFC 8707 requests must name exactly this). */
  publishedResource(): string;
  /** Serve a GET of a metadata document; false when `path` is none. */
  serve(path: string, res: ServerResponse): boolean;
}

export function createMetadata(ctx: OAuthContext): Metadata {
  const { o } = ctx;
  const prmPath =
    o.prm === 'path'
      ? '/.well-known/oauth-protected-resource/mcp'
      : o.prm === 'root'
        ? '/.well-known/oauth-protected-resource'
        : o.prm === 'custom'
          ? '/custom/metadata/location.json'
          : undefined;
  const asMetadataPath = () =>
    o.asMetadata === 'oauth'
      ? `/.well-known/oauth-authorization-server${ctx.issuerPath}`
      : o.asMetadata === 'openid'
        ? `/.well-known/openid-configuration${ctx.issuerPath}`
        : o.asMetadata === 'openid-suffix'
          ? `${ctx.issuerPath}/.well-known/openid-configuration`
          : undefined;
  const publishedResource = () =>
    o.prmResource?.replace('{origin}', ctx.origin) ?? (o.prm === 'root' ? ctx.origin : `${ctx.origin}/mcp`);

  return {
    prmPath,
    publishedResource,
    serve(path, res) {
      if (prmPath && path === prmPath) {
        json(res, 200, {
          resource: publishedResource(),
          authorization_servers: [issuerOf(ctx)],
          ...(o.prmScopes ? { scopes_supported: o.prmScopes } : {}),
        });
        return true;
      }
      if (asMetadataPath() && path === asMetadataPath()) {
        const issuer = issuerOf(ctx);
        json(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          ...(o.dcr ? { registration_endpoint: `${issuer}/register` } : {}),
          response_types_supported: ['code'],
          grant_types_supported: o.grantTypes ?? ['authorization_code', 'refresh_token'],
          ...(o.codeChallengeMethods ? { code_challenge_methods_supported: o.codeChallengeMethods } : {}),
          token_endpoint_auth_methods_supported: o.authMethods,
          ...(o.asScopes ? { scopes_supported: o.asScopes } : {}),
          ...(o.cimd ? { client_id_metadata_document_supported: true } : {}),
          ...(o.iss ? { authorization_response_iss_parameter_supported: true } : {}),
          ...(o.revocation ? { revocation_endpoint: `${issuer}/revoke` } : {}),
        });
        return true;
      }
      return false;
    },
  };
}
