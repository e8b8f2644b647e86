import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthProvider, signJwt } from '../../../src/auth/index.js';
import { ConfigError } from '../../../src/core/errors.js';
import { startOAuthServer, type OAuthFixture } from '../../../servers/oauth-server.js';
import { callMcp } from './helpers.js';

let fixture: OAuthFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function pem(type: 'ec' | 'rsa') {
  const { privateKey, publicKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey };
}

describe('client credentials grant', () => {
  it('client-credentials-basic: Basic auth, grant_type and resource, no browser', async () => {
    fixture = await startOAuthServer({
      grantTypes: ['client_credentials'],
      authMethods: ['client_secret_basic'],
      clients: [{ id: 'svc', secret: 'svc-secret' }],
    });
    const auth = createOAuthProvider(
      { grant: 'client_credentials', clientId: 'svc', clientSecret: 'svc-secret' },
      { resourceUrl: new URL(fixture.mcpUrl), server: 'docs' },
    );
    expect(await callMcp(fixture, auth)).toEqual({ status: 200, authorizations: 1 });
    const [token] = fixture.tokenRequests();
    expect(token!.form).toMatchObject({ grant_type: 'client_credentials', resource: fixture.mcpUrl });
    expect(token!.headers.authorization).toBe(`Basic ${Buffer.from('svc:svc-secret').toString('base64')}`);
    expect(fixture.authorizeRequests()).toHaveLength(0);
  });

  for (const type of ['ec', 'rsa'] as const) {
    it(`client-credentials-jwt: private_key_jwt with a ${type === 'ec' ? 'ES256' : 'RS256'} assertion (iss = sub = client_id, aud = issuer)`, async () => {
      const key = pem(type);
      fixture = await startOAuthServer({
        grantTypes: ['client_credentials'],
        authMethods: ['private_key_jwt'],
        clients: [{ id: 'jwt-client', publicKey: key.publicKey }],
      });
      const auth = createOAuthProvider(
        { grant: 'client_credentials', clientId: 'jwt-client', privateKeyPem: key.privateKeyPem, keyId: 'k1' },
        { resourceUrl: new URL(fixture.mcpUrl), server: 'docs' },
      );
      expect((await callMcp(fixture, auth)).status).toBe(200);
      const form = fixture.tokenRequests()[0]!.form!;
      expect(form['client_assertion_type']).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      const [header, claims] = form['client_assertion']!.split('.')
        .slice(0, 2)
        .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
      expect(header).toEqual({ alg: type === 'ec' ? 'ES256' : 'RS256', typ: 'JWT', kid: 'k1' });
      expect(claims).toMatchObject({ iss: 'jwt-client', sub: 'jwt-client', aud: fixture.issuer });
      expect(claims.exp - claims.iat).toBe(300);
      expect(typeof claims.jti).toBe('string');
    });
  }

  it('a server that rejects the assertion gives invalid_client, fatal', async () => {
    const key = pem('ec');
    const other = pem('ec');
    fixture = await startOAuthServer({
      grantTypes: ['client_credentials'],
      authMethods: ['private_key_jwt'],
      clients: [{ id: 'jwt-client', publicKey: other.publicKey }],
    });
    const auth = createOAuthProvider(
      { grant: 'client_credentials', clientId: 'jwt-client', privateKeyPem: key.privateKeyPem },
      { resourceUrl: new URL(fixture.mcpUrl), server: 'docs' },
    );
    await expect(callMcp(fixture, auth)).rejects.toMatchObject({ oauthError: 'invalid_client', fatal: true });
  });
});

describe('cross-app access (SEP-990)', () => {
  it('exchanges the ID token for an ID-JAG at the IdP, then uses the jwt-bearer grant with Basic auth', async () => {
    fixture = await startOAuthServer({
      grantTypes: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
      authMethods: ['client_secret_basic'],
      clients: [{ id: 'xaa-client', secret: 'xaa-secret' }],
    });
    const f = fixture;
    let calls = 0;
    const auth = createOAuthProvider(
      {
        grant: 'cross_app_access',
        clientId: 'xaa-client',
        clientSecret: 'xaa-secret',
        idpTokenEndpoint: `${f.origin}/idp/token`,
        idpClientId: 'idp-client',
        idpIdToken: () => `id-token-${++calls}`,
      },
      { resourceUrl: new URL(f.mcpUrl), server: 'docs' },
    );
    expect((await callMcp(f, auth)).status).toBe(200);
    const exchange = f.requests.find((r) => r.path === '/idp/token')!;
    expect(exchange.form).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      audience: f.issuer,
      resource: f.mcpUrl,
      subject_token: 'id-token-1',
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      client_id: 'idp-client',
    });
    const [bearer] = f.tokenRequests();
    expect(bearer!.form).toMatchObject({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: expect.stringMatching(/^jag-/),
      resource: f.mcpUrl,
    });
    expect(bearer!.headers.authorization).toBe(`Basic ${Buffer.from('xaa-client:xaa-secret').toString('base64')}`);
  });
});

describe('JWT signing', () => {
  it('ES256 signatures are raw r||s (64 bytes) and verify', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwt = signJwt({ a: 1 }, privateKey, 'ES256');
    const [h, p, s] = jwt.split('.');
    expect(Buffer.from(s!, 'base64url')).toHaveLength(64);
    expect(
      verify(
        'sha256',
        Buffer.from(`${h}.${p}`),
        { key: publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(s!, 'base64url'),
      ),
    ).toBe(true);
  });

  it('PS256 and EdDSA verify', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ps = signJwt({}, rsa.privateKey, 'PS256').split('.');
    expect(
      verify(
        'sha256',
        Buffer.from(`${ps[0]}.${ps[1]}`),
        { key: createPublicKey(rsa.privateKey), padding: 6, saltLength: 32 },
        Buffer.from(ps[2]!, 'base64url'),
      ),
    ).toBe(true);
    const ed = generateKeyPairSync('ed25519');
    const eds = signJwt({}, ed.privateKey, 'EdDSA').split('.');
    expect(verify(null, Buffer.from(`${eds[0]}.${eds[1]}`), ed.publicKey, Buffer.from(eds[2]!, 'base64url'))).toBe(
      true,
    );
  });
});

describe('options', () => {
  it('names the field that is wrong', () => {
    const make = (options: object) => () =>
      createOAuthProvider(options, { resourceUrl: new URL('http://127.0.0.1/mcp'), server: 'docs' });
    expect(make({ onRedirect: async () => '' })).toThrow('auth.redirectUri: required for the authorization_code grant');
    expect(make({ redirectUri: 'http://127.0.0.1/cb' })).toThrow('auth.onRedirect: required');
    expect(make({ grant: 'client_credentials', clientId: 'x' })).toThrow(
      'auth.clientSecret: the client_credentials grant needs clientSecret or privateKeyPem',
    );
    expect(make({ grant: 'cross_app_access', clientId: 'x' })).toThrow(
      /auth\.idpTokenEndpoint: required.*auth\.idpIdToken: required.*auth\.idpClientId: required/,
    );
    expect(
      make({
        grant: 'client_credentials',
        clientId: 'x',
        privateKeyPem: '-----BEGIN PRIVATE KEY-----\nsecretstuff\n-----END PRIVATE KEY-----',
      }),
    ).toThrow(/^auth\.privateKeyPem: is not a readable PEM private key$/);
    expect(
      make({
        grant: 'client_credentials',
        clientId: 'x',
        privateKeyPem: pem('ec').privateKeyPem,
        signingAlgorithm: 'RS256',
      }),
    ).toThrow('auth.signingAlgorithm: RS256 needs an RSA key, not ec');
    expect(
      make({ redirectUri: 'http://x/cb', onRedirect: async () => '', clientMetadataUrl: 'http://insecure/c.json' }),
    ).toThrow('auth.clientMetadataUrl: must be an https URL with a path');
    expect(make({ redirectUri: 'http://x/cb', onRedirect: async () => '', maxAttempts: 0 })).toThrow(
      /auth\.maxAttempts/,
    );
    expect(make({ redirectUri: 'http://x/cb', onRedirect: async () => '', bogus: 1 })).toThrow(/bogus/);
  });

  it('parseOAuthOptions reports issues with the caller’s path', async () => {
    const { parseOAuthOptions } = await import('../../../src/auth/index.js');
    try {
      parseOAuthOptions({ grant: 'client_credentials' }, 'servers.docs.auth');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues).toEqual([
        {
          path: 'servers.docs.auth.clientId',
          message: 'required for the client_credentials grant (it needs a pre-registered client)',
        },
        {
          path: 'servers.docs.auth.clientSecret',
          message: 'the client_credentials grant needs clientSecret or privateKeyPem',
        },
      ]);
    }
  });

  it('the authorization_code grant needs redirectUri and onRedirect when the provider is built (a config file may leave them to the CLI)', async () => {
    const { parseOAuthOptions, createOAuthProvider } = await import('../../../src/auth/index.js');
    expect(parseOAuthOptions({}, 'servers.docs.auth')).toEqual({});
    const build = (options: object) => () =>
      createOAuthProvider(options, {
        resourceUrl: new URL('http://127.0.0.1/mcp'),
        server: 'docs',
        configPath: 'servers.docs.auth',
      });
    expect(build({})).toThrow('servers.docs.auth.redirectUri: required for the authorization_code grant');
    expect(build({ redirectUri: 'http://127.0.0.1:1/cb' })).toThrow(
      'servers.docs.auth.onRedirect: required for the authorization_code grant',
    );
  });
});
