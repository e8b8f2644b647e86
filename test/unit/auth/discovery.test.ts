import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthorizationError } from '../../../src/core/errors.js';
import { authorizationServerMetadataUrls, protectedResourceMetadataUrls } from '../../../src/auth/discovery.js';
import { canonicalResource, resourceCovers } from '../../../src/auth/resource.js';
import { startOAuthServer, type OAuthFixture } from '../../../servers/oauth-server.js';
import { listenOnLoopback } from '../../../servers/listen.js';
import { callMcp, provider } from './helpers.js';

let fixture: OAuthFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('well-known URL order', () => {
  it('PRM: header URL, then path-based, then root', () => {
    expect(protectedResourceMetadataUrls(new URL('https://h/mcp'), 'https://h/custom.json').map(String)).toEqual([
      'https://h/custom.json',
      'https://h/.well-known/oauth-protected-resource/mcp',
      'https://h/.well-known/oauth-protected-resource',
    ]);
    expect(protectedResourceMetadataUrls(new URL('https://h/'), undefined).map(String)).toEqual([
      'https://h/.well-known/oauth-protected-resource',
    ]);
  });

  it('AS metadata: path insertion first for an issuer with a path', () => {
    expect(authorizationServerMetadataUrls(new URL('https://as/tenant1')).map(String)).toEqual([
      'https://as/.well-known/oauth-authorization-server/tenant1',
      'https://as/.well-known/openid-configuration/tenant1',
      'https://as/tenant1/.well-known/openid-configuration',
    ]);
    expect(authorizationServerMetadataUrls(new URL('https://as')).map(String)).toEqual([
      'https://as/.well-known/oauth-authorization-server',
      'https://as/.well-known/openid-configuration',
    ]);
  });

  it('canonical resource and PRM resource coverage', () => {
    expect(canonicalResource(new URL('HTTPS://Example.COM/mcp#frag'))).toBe('https://example.com/mcp');
    expect(canonicalResource(new URL('https://example.com/'))).toBe('https://example.com');
    expect(resourceCovers('https://example.com', new URL('https://example.com/mcp'))).toBe(true);
    expect(resourceCovers('https://example.com/mcp', new URL('https://example.com/mcp'))).toBe(true);
    expect(resourceCovers('https://example.com/mc', new URL('https://example.com/mcp'))).toBe(false);
    expect(resourceCovers('https://evil.example.com/mcp', new URL('https://example.com/mcp'))).toBe(false);
    expect(resourceCovers('not a url', new URL('https://example.com/mcp'))).toBe(false);
  });
});

describe('discovery against a live server (conformance metadata variants)', () => {
  it('metadata-default: PRM from the header, never the root PRM; AS at oauth-authorization-server', async () => {
    fixture = await startOAuthServer();
    expect(await callMcp(fixture, provider(fixture))).toEqual({ status: 200, authorizations: 1 });
    expect(fixture.gets()).toEqual([
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/authorize',
    ]);
  });

  it('metadata-var1: PRM path-based without header; AS via openid-configuration', async () => {
    fixture = await startOAuthServer({ prmInHeader: false, asMetadata: 'openid' });
    expect((await callMcp(fixture, provider(fixture))).status).toBe(200);
    expect(fixture.gets()).toEqual([
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
      '/authorize',
    ]);
  });

  it('metadata-var2: root PRM (resource = origin) after the path-based miss; tenant issuer by path insertion', async () => {
    fixture = await startOAuthServer({ prm: 'root', prmInHeader: false, issuerPath: '/tenant1' });
    expect((await callMcp(fixture, provider(fixture))).status).toBe(200);
    expect(fixture.gets()).toEqual([
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server/tenant1',
      '/tenant1/authorize',
    ]);
  });

  it('metadata-var3: custom PRM URL from the header; <issuer>/.well-known/openid-configuration last', async () => {
    fixture = await startOAuthServer({ prm: 'custom', issuerPath: '/tenant1', asMetadata: 'openid-suffix' });
    expect((await callMcp(fixture, provider(fixture))).status).toBe(200);
    expect(fixture.gets()).toEqual([
      '/custom/metadata/location.json',
      '/.well-known/oauth-authorization-server/tenant1',
      '/.well-known/openid-configuration/tenant1',
      '/tenant1/.well-known/openid-configuration',
      '/tenant1/authorize',
    ]);
  });

  it('2025-03-26 metadata backcompat: no PRM, AS metadata at the MCP origin', async () => {
    fixture = await startOAuthServer({ prm: 'none' });
    expect((await callMcp(fixture, provider(fixture))).status).toBe(200);
    expect(fixture.gets()).toEqual([
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server',
      '/authorize',
    ]);
    expect(fixture.requests.some((r) => r.path === '/register')).toBe(true);
  });

  it('2025-03-26 endpoint fallback: no metadata at all, default /authorize /token /register, S256 still sent', async () => {
    // without metadata RFC 8414's default method applies: client_secret_basic with the registered secret
    fixture = await startOAuthServer({ prm: 'none', asMetadata: 'none', authMethods: ['client_secret_basic'] });
    expect((await callMcp(fixture, provider(fixture))).status).toBe(200);
    const paths = fixture.requests.map((r) => `${r.method} ${r.path}`).filter((p) => p !== 'POST /mcp');
    expect(paths).toEqual([
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-authorization-server',
      'GET /.well-known/openid-configuration',
      'POST /register',
      'GET /authorize',
      'POST /token',
    ]);
    expect(fixture.authorizeRequests()[0]!.query['code_challenge_method']).toBe('S256');
  });

  it('resource-mismatch: refuses (fatal) before any authorization request', async () => {
    fixture = await startOAuthServer({ prmResource: 'https://evil.example.com/mcp' });
    const error = await callMcp(fixture, provider(fixture)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as AuthorizationError).fatal).toBe(true);
    expect((error as Error).message).toMatch(/evil\.example\.com.*does not match/);
    expect(fixture.authorizeRequests()).toHaveLength(0);
    expect(fixture.requests.some((r) => r.path === '/register')).toBe(false);
  });

  it('refuses an authorization server without code_challenge_methods_supported, or without S256', async () => {
    for (const codeChallengeMethods of [null, ['plain']]) {
      fixture = await startOAuthServer({ codeChallengeMethods });
      const error = await callMcp(fixture, provider(fixture)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthorizationError);
      expect((error as AuthorizationError).fatal).toBe(true);
      expect((error as Error).message).toMatch(/S256|code_challenge_methods_supported/);
      expect(fixture.authorizeRequests()).toHaveLength(0);
      await fixture.close();
      fixture = undefined;
    }
  });

  it('says how to pre-register when the server offers no registration', async () => {
    fixture = await startOAuthServer({ dcr: false });
    const error = await callMcp(fixture, provider(fixture)).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/no dynamic client registration.*auth\.clientId/);
  });

  it('a step that fails names its URL', async () => {
    fixture = await startOAuthServer();
    const origin = fixture.origin;
    await fixture.close();
    fixture = undefined;
    const auth = provider({ mcpUrl: `${origin}/mcp` } as OAuthFixture);
    const error = await auth
      .authorize(
        { status: 401, wwwAuthenticate: undefined, resourceUrl: new URL(`${origin}/mcp`) },
        AbortSignal.timeout(5000),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as AuthorizationError).fatal).toBe(false);
    expect((error as Error).message).toContain(
      `protected resource metadata: GET ${origin}/.well-known/oauth-protected-resource/mcp failed`,
    );
  });

  it('never follows a redirect: a 302 to another origin is a miss, and that origin sees nothing', async () => {
    const elsewhere: string[] = [];
    const other = await listenOnLoopback(createServer((req, res) => (elsewhere.push(req.url ?? ''), res.end('{}'))));
    const redirecting = await listenOnLoopback(
      createServer((req, res) => {
        res.writeHead(req.url?.startsWith('/.well-known/') ? 302 : 401, { location: `${other.origin}/steal` });
        res.end();
      }),
    );
    try {
      const auth = provider({ mcpUrl: `${redirecting.origin}/mcp` } as OAuthFixture);
      const error = await auth
        .authorize(
          { status: 401, wwwAuthenticate: undefined, resourceUrl: new URL(`${redirecting.origin}/mcp`) },
          AbortSignal.timeout(5000),
        )
        .catch((e: unknown) => e);
      // every metadata URL answered 302, so this is a 2025-03-26 server with default endpoints;
      // the flow then stops at the (unreachable) registration, never at the other origin
      expect(error).toBeInstanceOf(AuthorizationError);
      expect(elsewhere).toEqual([]);
    } finally {
      await other.close();
      await redirecting.close();
    }
  });
});
