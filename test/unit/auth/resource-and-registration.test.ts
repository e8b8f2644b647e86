/** RFC 8707 `resource` as the PRM publishes it, and SEP-837 `application_type` in registration. */
import { afterEach, describe, expect, it } from 'vitest';
import { applicationType } from '../../../src/auth/registration.js';
import { startOAuthServer, type OAuthFixture } from '../../../servers/oauth-server.js';
import { callMcp, provider } from './helpers.js';

let fixture: OAuthFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe('resource parameter (RFC 8707 + RFC 9728)', () => {
  it('sends the PRM resource verbatim (a pathless origin), not the server URL, in authorize and token requests', async () => {
    fixture = await startOAuthServer({ prm: 'root', prmInHeader: false });
    const auth = provider(fixture);
    expect((await callMcp(fixture, auth)).status).toBe(200);
    expect(fixture.authorizeRequests()[0]!.query['resource']).toBe(fixture.origin);
    expect(fixture.tokenRequests().map((r) => r.form!['resource'])).toEqual([fixture.origin]);
    // The store key stays the server URL.
    expect(auth.resource).toBe(fixture.mcpUrl);
  });

  it('keeps a trailing slash the PRM publishes, and sends it on refresh too', async () => {
    fixture = await startWithSlashResource();
    const auth = provider(fixture);
    expect((await callMcp(fixture, auth)).status).toBe(200);
    fixture.expireAccessTokens();
    expect((await callMcp(fixture, auth)).status).toBe(200);
    const forms = fixture.tokenRequests().map((r) => r.form!);
    expect(forms.map((f) => f['grant_type'])).toEqual(['authorization_code', 'refresh_token']);
    expect(forms.map((f) => f['resource'])).toEqual([`${fixture.origin}/`, `${fixture.origin}/`]);
  });

  it('the fixture refuses any other resource, so the check can fail', async () => {
    fixture = await startOAuthServer({ prmResource: '{origin}/', clients: [{ id: 'x' }] });
    const { request } = await import('undici');
    const answer = await request(new URL('/token', fixture.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'x',
        resource: fixture.mcpUrl,
      }).toString(),
    });
    expect(answer.statusCode).toBe(400);
    expect(await answer.body.json()).toMatchObject({ error: 'invalid_target' });
  });
});

/** A fixture whose PRM names its origin with a trailing slash (the port is only known once listening). */
async function startWithSlashResource(): Promise<OAuthFixture> {
  return startOAuthServer({ refreshTokens: true, prmResource: '{origin}/' });
}

describe('application_type in dynamic client registration (SEP-837)', () => {
  it('native for loopback and private-use scheme redirects, web otherwise', () => {
    expect(applicationType('http://127.0.0.1:4000/callback')).toBe('native');
    expect(applicationType('http://localhost/cb')).toBe('native');
    expect(applicationType('http://[::1]:8080/cb')).toBe('native');
    expect(applicationType('com.example.app:/oauth')).toBe('native');
    expect(applicationType('https://app.example.com/callback')).toBe('web');
    expect(applicationType(undefined)).toBe('native');
  });

  it('is sent in the registration request', async () => {
    fixture = await startOAuthServer();
    expect((await callMcp(fixture, provider(fixture))).status).toBe(200);
    const registration = fixture.requests.find((r) => r.path === '/register')!;
    expect(registration.json).toMatchObject({ application_type: 'native' });
    await fixture.close();
    fixture = await startOAuthServer();
    expect((await callMcp(fixture, provider(fixture, { redirectUri: 'https://app.example.com/cb' }))).status).toBe(200);
    expect(fixture.requests.find((r) => r.path === '/register')!.json).toMatchObject({ application_type: 'web' });
  });
});
