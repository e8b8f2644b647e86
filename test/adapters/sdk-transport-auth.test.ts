/**
 * Authorization through `supervisedTransport({ url, auth })`: the SDK's own `Client` (v1 and v2)
 * against a real OAuth 2.1 authorization server and protected MCP resource
 * (servers/oauth-server.ts). The connection authorizes on the first 401 and puts the token on
 * every request the Client makes; when the tokens expire mid-run, one refresh serves every call
 * and the Client sees answers, never the 401, never its `onclose` (its `onerror` is told, non-fatally).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { supervisedTransport } from '../../src/adapters/sdk/index.js';
import { startOAuthServer, type OAuthFixture } from '../../servers/oauth-server.js';
import { followRedirect, REDIRECT_URI } from '../unit/auth/helpers.js';
import { openClient, strayMessages, type TestClient } from './sdk-clients.js';

let fixture: OAuthFixture;
const opened: TestClient[] = [];

beforeAll(async () => {
  fixture = await startOAuthServer({ refreshTokens: true });
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((client) => client.close().catch(() => {})));
});

afterAll(async () => {
  await fixture?.close();
});

const config = () => ({
  url: fixture.mcpUrl,
  auth: { redirectUri: REDIRECT_URI, onRedirect: followRedirect },
  keepalive: false as const,
  protocolVersion: 'legacy' as const,
});

const grants = () => fixture.tokenRequests().map((request) => request.form?.grant_type);
const mcpPosts = () => fixture.requests.filter((request) => request.path === '/mcp' && request.method === 'POST');

describe.each(['v1', 'v2'] as const)('the SDK %s Client over supervisedTransport({ url, auth })', (version) => {
  it('authorizes on the first 401; every call the Client makes carries the token; a 401 mid-run refreshes unseen', async () => {
    const posts = mcpPosts().length;
    const tokens = grants().length;
    const client = await openClient(version, supervisedTransport(config()));
    opened.push(client);
    expect(grants().slice(tokens)).toEqual(['authorization_code']);
    const echo = async (text: string) => (await client.call('echo', { text })).content[0]?.text;
    expect(await echo(`${version} authorized`)).toBe(`${version} authorized`);
    const sent = mcpPosts().slice(posts);
    expect(sent[0]?.headers.authorization).toBeUndefined(); // the refused first try
    for (const request of sent.slice(1)) expect(request.headers.authorization).toMatch(/^Bearer /);

    fixture.expireAccessTokens();
    const texts = [0, 1, 2, 3].map((i) => `${version} after expiry ${i}`);
    expect(await Promise.all(texts.map(echo))).toEqual(texts);
    expect(grants().slice(tokens)).toEqual(['authorization_code', 'refresh_token']); // one refresh for four 401s
    expect(await client.toolNames()).toContain('echo');
    expect(client.closes).toBe(0);
    // Told as a non-fatal error (onerror), like every recoverable event; no token in it.
    expect(client.errors.map((error) => error.message)).toEqual([
      expect.stringMatching(/ready -> authorizing: authorization required \(.*HTTP 401 for 'tools\/call'/),
    ]);
    expect(client.errors.join(' ')).not.toMatch(/Bearer|access/);
    expect(strayMessages(client.seen)).toEqual([]);
    expect(client.transport.server!.status().auth).toMatchObject({ authorized: true });
  });
});
