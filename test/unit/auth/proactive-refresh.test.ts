/** Proactive refresh: a token within the margin of its expiry is refreshed before it is sent. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startOAuthServer, type OAuthFixture } from '../../../servers/oauth-server.js';
import { callMcp, provider } from './helpers.js';

let fixture: OAuthFixture | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await fixture?.close();
  fixture = undefined;
});

const mcpPosts = (f: OAuthFixture) => f.requests.filter((r) => r.path === '/mcp').length;
const grants = (f: OAuthFixture) => f.tokenRequests().map((r) => r.form!['grant_type']);

/** Only the clock moves (no timers are faked): the token's expires_at comes near. */
function advanceClock(ms: number): void {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + ms });
}

describe('proactive refresh', () => {
  it('refreshes a token inside the margin before sending it: no 401 collected', async () => {
    fixture = await startOAuthServer({ refreshTokens: true, expiresIn: 3600 });
    const auth = provider(fixture);
    await callMcp(fixture, auth);
    const first = auth.authorization();
    const posts = mcpPosts(fixture);
    advanceClock(3600_000 - 59_000); // 59 s left: inside the default 60 s margin
    expect(await callMcp(fixture, auth)).toEqual({ status: 200, authorizations: 0 });
    expect(mcpPosts(fixture)).toBe(posts + 1);
    expect(grants(fixture)).toEqual(['authorization_code', 'refresh_token']);
    expect(auth.authorization()).not.toBe(first);
  });

  it('is one refresh for any number of concurrent requests (single flight)', async () => {
    fixture = await startOAuthServer({ refreshTokens: true, expiresIn: 3600 });
    const auth = provider(fixture);
    await callMcp(fixture, auth);
    advanceClock(3600_000);
    const waits = [auth.prepare(), auth.prepare(), auth.prepare()];
    expect(waits[0]).toBeInstanceOf(Promise);
    expect(waits[1]).toBe(waits[0]);
    await waits[0];
    expect(grants(fixture)).toEqual(['authorization_code', 'refresh_token']);
    expect(auth.prepare()).toBeUndefined();
  });

  it('leaves tokens outside the margin alone; the margin is configurable, and 0 turns it off', async () => {
    fixture = await startOAuthServer({ refreshTokens: true, expiresIn: 3600 });
    const auth = provider(fixture, { refreshMarginMs: 120_000 });
    const off = provider(fixture, { refreshMarginMs: 0 });
    await callMcp(fixture, auth);
    await callMcp(fixture, off);
    advanceClock(3600_000 - 121_000);
    expect(auth.prepare()).toBeUndefined();
    advanceClock(2_000);
    expect(auth.prepare()).toBeInstanceOf(Promise);
    expect(off.prepare()).toBeUndefined();
  });

  it('a proactive refresh that fails is not an error: the request goes out, and a 401 takes the usual path', async () => {
    fixture = await startOAuthServer({ refreshTokens: true, expiresIn: 3600 });
    const auth = provider(fixture);
    await callMcp(fixture, auth);
    await fixture.close();
    fixture = undefined;
    advanceClock(3600_000);
    await expect(auth.prepare()).resolves.toBeUndefined();
  });
});
