/**
 * Per-principal OAuth (docs/principals.md#the-sign-in-hand-off), against the test authorization
 * server: each principal signs in for itself, its call fails with AuthorizationRequiredError
 * carrying its own authorization URL, the host completes it with the redirect, and the tokens are
 * kept per (server, principal) in the store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AuthorizationRequiredError, createSupervisor, memoryStore, type Supervisor } from '../../src/index.js';
import { startOAuthServer, type OAuthFixture } from '../../servers/oauth-server.js';
import { followRedirect, REDIRECT_URI } from '../unit/auth/helpers.js';

let fixture: OAuthFixture | undefined;
let sup: Supervisor | undefined;

afterEach(async () => {
  await sup?.stop();
  await fixture?.close();
  sup = fixture = undefined;
});

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe('per-principal sign-in', () => {
  it("fails each principal's call with its own URL, completes with the host's redirect, keeps tokens apart", async () => {
    fixture = await startOAuthServer();
    const asked: { principal: string; server: string; url: string }[] = [];
    const store = memoryStore();
    sup = createSupervisor({
      servers: {
        docs: {
          url: fixture.mcpUrl,
          perPrincipal: true,
          auth: { redirectUri: REDIRECT_URI },
          keepalive: false,
          protocolVersion: 'legacy',
        },
      },
      store,
      onAuthorizationRequired: ({ principal, server, url }) => asked.push({ principal: principal.id, server, url }),
    });
    await sup.start();

    const refused = await sup
      .as('alice')
      .server('docs')
      .callTool('echo', { text: 'a' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthorizationRequiredError);
    const url = (refused as AuthorizationRequiredError).authorizationUrl!;
    expect(new URL(url).searchParams.get('response_type')).toBe('code');
    expect(asked).toEqual([{ principal: 'alice', server: 'docs', url }]);

    await sup.as('alice').completeAuthorization('docs', await followRedirect(new URL(url)));
    expect(text(await sup.as('alice').server('docs').callTool('echo', { text: 'a' }))).toBe('a');

    // Bob is not signed in by Alice's grant: his own URL, his own sign-in.
    const bob = await sup
      .as('bob')
      .server('docs')
      .callTool('echo', { text: 'b' })
      .catch((error: unknown) => error);
    expect(bob).toBeInstanceOf(AuthorizationRequiredError);
    expect((bob as AuthorizationRequiredError).authorizationUrl).not.toBe(url);
    expect(asked.map((entry) => entry.principal)).toEqual(['alice', 'bob']);
    expect(fixture.tokenRequests()).toHaveLength(1);
    await expect(sup.as('carol').completeAuthorization('docs', REDIRECT_URI)).rejects.toThrow(/no sign-in/);
  });
});
