import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthorizationError } from '../../../src/core/errors.js';
import { memoryTokenStore } from '../../../src/auth/index.js';
import { startOAuthServer, type OAuthFixture, type OAuthFixtureOptions } from '../../../servers/oauth-server.js';
import { callMcp, followRedirect, provider, REDIRECT_URI } from './helpers.js';

let fixture: OAuthFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});
async function start(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  fixture = await startOAuthServer(options);
  return fixture;
}

describe('authorization code grant', () => {
  it('sends PKCE S256, state, resource and redirect_uri; the verifier matches; DCR asks for refresh_token', async () => {
    const f = await start();
    const auth = provider(f);
    expect(auth.authorization()).toBeUndefined();
    expect(await callMcp(f, auth)).toEqual({ status: 200, authorizations: 1 });
    expect(auth.authorization()).toMatch(/^Bearer at-\d+$/);
    expect(auth.generation).toBe(1);

    const registration = f.requests.find((r) => r.path === '/register')!;
    expect(registration.json).toMatchObject({
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      client_name: 'mcp-supervisor',
    });
    const query = f.authorizeRequests()[0]!.query;
    expect(query).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: REDIRECT_URI,
      resource: f.mcpUrl,
      client_id: expect.any(String),
    });
    expect(query['state']!.length).toBeGreaterThanOrEqual(32);
    expect(query['scope']).toBeUndefined();
    const [token] = f.tokenRequests();
    expect(token!.form).toMatchObject({
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT_URI,
      resource: f.mcpUrl,
      client_id: query['client_id'],
    });
    expect(createHash('sha256').update(token!.form!['code_verifier']!).digest('base64url')).toBe(
      query['code_challenge'],
    );
  });

  it('pre-registration: Basic credentials, form-encoded, no registration', async () => {
    const f = await start({
      dcr: false,
      authMethods: ['client_secret_basic'],
      clients: [{ id: 'pre registered', secret: 's3cr:t&x' }],
    });
    expect((await callMcp(f, provider(f, { clientId: 'pre registered', clientSecret: 's3cr:t&x' }))).status).toBe(200);
    const token = f.tokenRequests()[0]!;
    expect(token.headers.authorization).toBe(`Basic ${Buffer.from('pre+registered:s3cr%3At%26x').toString('base64')}`);
    expect(token.form!['client_secret']).toBeUndefined();
    expect(f.requests.some((r) => r.path === '/register')).toBe(false);
  });

  for (const method of ['client_secret_basic', 'client_secret_post', 'none'] as const) {
    it(`token-endpoint-auth: uses ${method} when it is the only method the server supports`, async () => {
      const f = await start({ authMethods: [method] });
      expect((await callMcp(f, provider(f))).status).toBe(200);
      const token = f.tokenRequests()[0]!;
      expect(String(token.headers.authorization ?? '').startsWith('Basic ')).toBe(method === 'client_secret_basic');
      expect(token.form!['client_secret'] !== undefined).toBe(method === 'client_secret_post');
      expect(token.form!['resource']).toBe(f.mcpUrl);
    });
  }

  it('basic-cimd: uses the metadata document URL as client_id and does not register', async () => {
    const f = await start({ cimd: true });
    const url = 'https://client.example.com/client-metadata.json';
    expect((await callMcp(f, provider(f, { clientMetadataUrl: url }))).status).toBe(200);
    expect(f.authorizeRequests()[0]!.query['client_id']).toBe(url);
    expect(f.requests.some((r) => r.path === '/register')).toBe(false);
  });

  it('CIMD URL is ignored (DCR instead) when the server does not advertise support', async () => {
    const f = await start();
    expect((await callMcp(f, provider(f, { clientMetadataUrl: 'https://client.example.com/c.json' }))).status).toBe(
      200,
    );
    expect(f.requests.some((r) => r.path === '/register')).toBe(true);
  });
});

describe('scope selection', () => {
  it('the challenge scope first', async () => {
    const f = await start({ challengeScope: 'mcp:basic', prmScopes: ['mcp:basic', 'mcp:read'] });
    await callMcp(f, provider(f));
    expect(f.authorizeRequests()[0]!.query['scope']).toBe('mcp:basic');
  });

  it('else all of the PRM scopes_supported', async () => {
    const f = await start({ prmScopes: ['mcp:basic', 'mcp:read', 'mcp:write'] });
    await callMcp(f, provider(f));
    expect(f.authorizeRequests()[0]!.query['scope']).toBe('mcp:basic mcp:read mcp:write');
  });

  it('else no scope parameter at all', async () => {
    const f = await start();
    await callMcp(f, provider(f));
    expect('scope' in f.authorizeRequests()[0]!.query).toBe(false);
  });

  it('adds offline_access only when the authorization server lists it', async () => {
    const f = await start({ prmScopes: ['mcp:basic'], asScopes: ['mcp:basic', 'offline_access'] });
    await callMcp(f, provider(f));
    expect(f.authorizeRequests()[0]!.query['scope']).toBe('mcp:basic offline_access');
    await f.close();
    const g = await start({ prmScopes: ['mcp:basic', 'mcp:read'], asScopes: ['mcp:basic', 'mcp:read'] });
    await callMcp(g, provider(g));
    expect(g.authorizeRequests()[0]!.query['scope']).toBe('mcp:basic mcp:read');
  });

  it('scope-step-up: a 403 insufficient_scope re-authorizes for the union of scopes', async () => {
    const f = await start({
      challengeScope: 'mcp:basic',
      prmScopes: ['mcp:basic'],
      requiredScopes: ['mcp:basic'],
      callScopes: ['mcp:write'],
    });
    const auth = provider(f);
    expect((await callMcp(f, auth, 'tools/list')).status).toBe(200);
    expect((await callMcp(f, auth, 'tools/call')).status).toBe(200);
    expect(f.authorizeRequests().map((r) => r.query['scope'])).toEqual(['mcp:basic', 'mcp:basic mcp:write']);
    expect(auth.generation).toBe(2);
  });

  it('scope-retry-limit: at most 3 authorizations without a successful request, then a fatal error', async () => {
    const f = await start({ challengeScope: 'mcp:admin', alwaysInsufficient: true });
    const error = await callMcp(f, provider(f)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as AuthorizationError).fatal).toBe(true);
    expect((error as Error).message).toMatch(/gave up after 3 authorization attempts/);
    expect(f.authorizeRequests()).toHaveLength(3);
  });

  it('confirmed() resets the attempt count', async () => {
    const f = await start({ refreshTokens: true });
    const auth = provider(f, { maxAttempts: 1 });
    for (let i = 0; i < 3; i++) {
      expect((await callMcp(f, auth)).status).toBe(200);
      f.expireAccessTokens();
    }
  });
});

describe('refresh and the store', () => {
  it('refreshes (rotating refresh tokens) before running a new grant', async () => {
    const f = await start({ refreshTokens: true });
    const auth = provider(f);
    await callMcp(f, auth);
    f.expireAccessTokens();
    await callMcp(f, auth);
    f.expireAccessTokens();
    await callMcp(f, auth);
    expect(f.authorizeRequests()).toHaveLength(1);
    const tokens = f.tokenRequests();
    expect(tokens.map((t) => t.form!['grant_type'])).toEqual(['authorization_code', 'refresh_token', 'refresh_token']);
    // each refresh used the token the previous answer rotated in
    expect(tokens[1]!.form!['refresh_token']).not.toBe(tokens[2]!.form!['refresh_token']);
    expect(tokens[1]!.form!['resource']).toBe(f.mcpUrl);
    expect(auth.generation).toBe(3);
  });

  it('falls back to a full grant when the refresh token is refused', async () => {
    const f = await start({ refreshTokens: true });
    const store = memoryTokenStore();
    const first = provider(f, { store });
    await callMcp(f, first);
    const saved = await store.load(first.resource);
    f.expireAccessTokens();
    await callMcp(f, first); // rotates: the saved refresh token is now spent
    await store.save(first.resource, saved!);
    const second = provider(f, { store });
    await second.ready();
    f.expireAccessTokens();
    expect((await callMcp(f, second)).status).toBe(200);
    expect(f.tokenRequests().map((t) => t.form!['grant_type'])).toEqual([
      'authorization_code',
      'refresh_token',
      'refresh_token',
      'authorization_code',
    ]);
  });

  it('uses a stored token before any 401, and persists the registration', async () => {
    const f = await start();
    const store = memoryTokenStore();
    await callMcp(f, provider(f, { store }));
    const stored = await store.load(f.mcpUrl);
    expect(stored).toMatchObject({
      issuer: f.issuer,
      issuers: {
        [f.issuer]: { client: { client_id: expect.any(String) }, tokens: { access_token: expect.any(String) } },
      },
    });
    const again = provider(f, { store });
    await again.ready();
    expect(again.authorization()).toBe(`Bearer ${stored!.issuers![f.issuer]!.tokens!.access_token}`);
    expect(await callMcp(f, again)).toEqual({ status: 200, authorizations: 0 });
    await again.clear();
    expect(again.authorization()).toBeUndefined();
    expect(await store.load(f.mcpUrl)).toBeUndefined();
  });
});

describe('refusals', () => {
  it('rejects a redirect whose state does not match', async () => {
    const f = await start({ wrongState: true });
    const error = await callMcp(f, provider(f)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as Error).message).toMatch(/state that does not match/);
    expect(f.tokenRequests()).toHaveLength(0);
  });

  it('RFC 9207: accepts the advertised iss, and rejects a redirect without iss when the server advertises it', async () => {
    const ok = await start({ iss: 'advertised' });
    expect((await callMcp(ok, provider(ok))).status).toBe(200);
    await ok.close();
    const f = await start({ iss: 'advertised-missing' });
    const error = await callMcp(f, provider(f)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as Error).message).toMatch(/carries no iss.*authorization_response_iss_parameter_supported/);
    expect(f.tokenRequests()).toHaveLength(0);
  });

  it('surfaces an error redirect with its OAuth code', async () => {
    const f = await start({ authorizeError: 'access_denied' });
    const error = (await callMcp(f, provider(f)).catch((e: unknown) => e)) as AuthorizationError;
    expect(error.oauthError).toBe('access_denied');
    expect(error.fatal).toBe(true);
  });

  it('token errors carry the OAuth code and never the secret, code or verifier', async () => {
    const f = await start({
      clients: [{ id: 'c1', secret: 'super-secret-value' }],
      authMethods: ['client_secret_post'],
      tokenError: 'invalid_grant',
    });
    const error = (await callMcp(f, provider(f, { clientId: 'c1', clientSecret: 'super-secret-value' })).catch(
      (e: unknown) => e,
    )) as AuthorizationError;
    expect(error.oauthError).toBe('invalid_grant');
    const form = f.tokenRequests()[0]!.form!;
    for (const secret of ['super-secret-value', form['code']!, form['code_verifier']!])
      expect(error.message).not.toContain(secret);
    expect(error.message).toContain('[redacted]');
  });

  it('an aborted signal stops the flow', async () => {
    const f = await start();
    const auth = provider(f, {
      onRedirect: (_url, signal) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
    });
    const controller = new AbortController();
    const pending = auth.authorize(
      { status: 401, wwwAuthenticate: undefined, resourceUrl: new URL(f.mcpUrl) },
      controller.signal,
    );
    await new Promise((resolve) => setImmediate(resolve));
    while (f.authorizeRequests().length === 0 && !f.requests.some((r) => r.path === '/register'))
      await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('closed'));
    await expect(pending).rejects.toThrow('closed');
  });

  it('followRedirect helper sanity: the fixture redirects to redirect_uri', async () => {
    const f = await start();
    await expect(followRedirect(new URL(`${f.origin}/authorize?client_id=nope`))).rejects.toThrow();
  });
});
