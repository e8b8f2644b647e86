/** Drives an OAuthProvider the way a transport does: send, on 401/403 authorize and resend. */
import { request } from 'undici';
import { createOAuthProvider, type OAuthClientOptions, type OAuthProvider } from '../../../src/auth/index.js';
import { approveAtOnce, type OAuthFixture } from '../../../servers/oauth-server.js';

/** A headless browser: fetch the authorization URL without following, return its Location. */
export const followRedirect = approveAtOnce;

export const REDIRECT_URI = 'http://127.0.0.1:1/callback';

export function provider(fixture: OAuthFixture, options: Partial<OAuthClientOptions> = {}): OAuthProvider {
  return createOAuthProvider(
    { redirectUri: REDIRECT_URI, onRedirect: followRedirect, ...options },
    { resourceUrl: new URL(fixture.mcpUrl), server: 'docs' },
  );
}

/** POSTs one JSON-RPC request to the fixture's MCP endpoint, authorizing as needed. */
export async function callMcp(
  fixture: OAuthFixture,
  auth: OAuthProvider,
  method = 'tools/list',
  maxRounds = 8,
): Promise<{ status: number; authorizations: number }> {
  let authorizations = 0;
  for (let round = 0; round < maxRounds; round++) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    await auth.prepare();
    const value = auth.authorization();
    if (value) headers['authorization'] = value;
    const response = await request(fixture.mcpUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: round, method }),
    });
    await response.body.dump();
    if (response.statusCode === 200) {
      auth.confirmed();
      return { status: 200, authorizations };
    }
    if (response.statusCode !== 401 && response.statusCode !== 403)
      return { status: response.statusCode, authorizations };
    const header = response.headers['www-authenticate'];
    authorizations++;
    await auth.authorize(
      {
        status: response.statusCode,
        wwwAuthenticate: typeof header === 'string' ? header : undefined,
        resourceUrl: new URL(fixture.mcpUrl),
      },
      AbortSignal.timeout(10_000),
    );
  }
  throw new Error('too many rounds');
}
