/** SEP-1933 workload identity: an RFC 7523 jwt-bearer grant with the workload's own JWT, no registration. */
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthProvider, signJwt } from '../../../src/auth/index.js';
import { AuthorizationError, ConfigError } from '../../../src/core/errors.js';
import { startOAuthServer, type OAuthFixture } from '../../../servers/oauth-server.js';
import { callMcp } from './helpers.js';

let fixture: OAuthFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
/** What a platform (Kubernetes, a cloud) would issue to the workload. */
function workloadJwt(audience: string, lifetime = 300): string {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: 'https://idp.example', sub: 'workload-7', aud: audience, iat: now, exp: now + lifetime },
    privateKey,
    'ES256',
  );
}

function workload(f: OAuthFixture, assertion: string | (() => string), clientId?: string) {
  return createOAuthProvider(
    { grant: 'workload_identity', workloadAssertion: assertion, clientId },
    { resourceUrl: new URL(f.mcpUrl), server: 'docs' },
  );
}

describe('workload identity (SEP-1933)', () => {
  it('presents the workload JWT as a jwt-bearer assertion, without registration or a browser', async () => {
    fixture = await startOAuthServer({ workloadKey: publicKey, dcr: true });
    const assertion = workloadJwt(fixture.issuer);
    expect(await callMcp(fixture, workload(fixture, assertion))).toEqual({ status: 200, authorizations: 1 });
    const [token] = fixture.tokenRequests();
    expect(token!.form).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion,
      resource: fixture.mcpUrl,
    });
    expect(fixture.requests.filter((r) => r.path === '/register' || r.path === '/authorize')).toHaveLength(0);
  });

  it('sends a configured client id (public client) and calls an assertion function for each grant', async () => {
    fixture = await startOAuthServer({ workloadKey: publicKey, clients: [{ id: 'wif-client' }] });
    let calls = 0;
    const auth = workload(fixture, () => (calls++, workloadJwt(fixture!.issuer)), 'wif-client');
    expect((await callMcp(fixture, auth)).status).toBe(200);
    fixture.expireAccessTokens();
    expect((await callMcp(fixture, auth)).status).toBe(200);
    expect(calls).toBe(2);
    expect(fixture.tokenRequests().map((r) => r.form!['client_id'])).toEqual(['wif-client', 'wif-client']);
  });

  it('a refused static assertion is a fatal error after one request: no retry, no other grant', async () => {
    fixture = await startOAuthServer({ workloadKey: publicKey });
    const error = await callMcp(fixture, workload(fixture, workloadJwt('https://wrong.example'))).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error).toMatchObject({ oauthError: 'invalid_grant', fatal: true });
    expect(fixture.tokenRequests()).toHaveLength(1);
  });

  it('needs workloadAssertion, and refuses an assertion that is not a JWT', async () => {
    expect(() =>
      createOAuthProvider({ grant: 'workload_identity' }, { resourceUrl: new URL('http://h/mcp'), server: 's' }),
    ).toThrow(ConfigError);
    fixture = await startOAuthServer({ workloadKey: publicKey });
    const error = await callMcp(fixture, workload(fixture, 'not-a-jwt')).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/not a JWT/);
    expect(fixture.tokenRequests()).toHaveLength(0);
  });
});
