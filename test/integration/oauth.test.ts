/**
 * The built-in OAuth 2.1 client through `connect()` / `createSupervisor()` against a real
 * authorization server and protected MCP resource (servers/oauth-server.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuthorizationError,
  connect,
  createSupervisor,
  fileTokenStore,
  memoryTokenStore,
  type ServerHandle,
  type Supervisor,
} from '../../src/index.js';
import { startOAuthServer, type OAuthFixture } from '../../servers/oauth-server.js';
import { followRedirect, REDIRECT_URI } from '../unit/auth/helpers.js';
import { recordTransitions } from './helpers.js';

let fixture: OAuthFixture | undefined;
let handle: ServerHandle | undefined;
let supervisor: Supervisor | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await supervisor?.stop().catch(() => {});
  await fixture?.close();
  handle = supervisor = fixture = undefined;
});

const browser = { redirectUri: REDIRECT_URI, onRedirect: followRedirect };

describe('OAuth through the supervisor', () => {
  it('authorizes on the first 401 (discovery, DCR, PKCE, token), then serves calls with the token', async () => {
    fixture = await startOAuthServer();
    supervisor = createSupervisor({ servers: { docs: { url: fixture.mcpUrl, auth: browser, keepalive: false } } });
    const transitions = recordTransitions(supervisor);
    await supervisor.start();
    const result = await supervisor.server('docs').callTool('echo', { text: 'authorized' });

    expect(result.content[0]?.text).toBe('authorized');
    const auth = supervisor.server('docs').status().auth;
    expect(auth).toEqual({ authorized: true, scope: undefined, expiresAt: expect.any(Number) });
    expect(auth!.expiresAt! - Date.now()).toBeGreaterThan(3_000_000); // the fixture's expires_in is 3600 s
    expect(transitions.map((t) => t.to)).toEqual([
      'connecting',
      'initializing',
      'authorizing',
      'connecting',
      'initializing',
      'ready',
    ]);
    expect(fixture.authorizeRequests()).toHaveLength(1);
    expect(fixture.tokenRequests().map((r) => r.form?.grant_type)).toEqual(['authorization_code']);
    const mcp = fixture.requests.filter((r) => r.path === '/mcp' && r.method === 'POST');
    expect(mcp[0]?.headers.authorization).toBeUndefined();
    expect(
      mcp
        .slice(1)
        .every((r) => typeof r.headers.authorization === 'string' && r.headers.authorization.startsWith('Bearer ')),
    ).toBe(true);
  });

  it('expired access tokens: concurrent 401s cause exactly one refresh, no new authorization, every call resolves', async () => {
    fixture = await startOAuthServer({ refreshTokens: true });
    handle = await connect({ url: fixture.mcpUrl, auth: browser, keepalive: false }, { name: 'docs' });
    const transitions = recordTransitions(handle);
    fixture.expireAccessTokens();

    const texts = Array.from({ length: 8 }, (_, i) => `after-expiry-${i}`);
    const results = await Promise.all(texts.map((text) => handle!.callTool('echo', { text })));

    expect(results.map((r) => r.content[0]?.text)).toEqual(texts);
    expect(fixture.tokenRequests().map((r) => r.form?.grant_type)).toEqual(['authorization_code', 'refresh_token']);
    expect(fixture.authorizeRequests()).toHaveLength(1);
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual(['ready->authorizing', 'authorizing->ready']);
  });

  it('a step-up on 403 insufficient_scope asks for the union of scopes, then the call succeeds', async () => {
    fixture = await startOAuthServer({ challengeScope: 'mcp:basic', callScopes: ['mcp:basic', 'mcp:write'] });
    handle = await connect({ url: fixture.mcpUrl, auth: browser, keepalive: false }, { name: 'docs' });
    const result = await handle.callTool('echo', { text: 'write' });
    expect(result.content[0]?.text).toBe('write');
    const scopes = fixture.authorizeRequests().map((r) => r.query.scope?.split(' ').sort().join(' '));
    expect(scopes).toEqual(['mcp:basic', 'mcp:basic mcp:write']);
  });

  it('a server whose step-up never succeeds ends after 3 authorizations: the call rejects, the server is failed', async () => {
    fixture = await startOAuthServer({ alwaysInsufficient: true, challengeScope: 'mcp:admin' });
    supervisor = createSupervisor({ servers: { docs: { url: fixture.mcpUrl, auth: browser, keepalive: false } } });
    const transitions = recordTransitions(supervisor);
    await supervisor.start();
    expect(supervisor.server('docs').status().state).toBe('failed');
    expect(supervisor.lastFailureOf('docs')).toBeInstanceOf(AuthorizationError);
    expect(fixture.authorizeRequests()).toHaveLength(3);
    expect(transitions.at(-1)).toMatchObject({
      from: 'reconnecting',
      to: 'failed',
      cause: 'a restart cannot fix it',
      error: expect.stringContaining('gave up after 3 authorization attempts'),
    });
    expect(supervisor.server('docs').status().restarts).toBe(0);
  });

  it('a stored token is used before any 401; tokens never reach status, transitions, logs or inspection events', async () => {
    fixture = await startOAuthServer({ refreshTokens: true });
    const store = memoryTokenStore();
    const first = await connect(
      { url: fixture.mcpUrl, auth: { ...browser, store }, keepalive: false },
      { name: 'docs' },
    );
    await first.close();
    const tokensOf = async () => {
      const entry = await store.load(new URL(fixture!.mcpUrl).href);
      return entry?.issuers?.[entry.issuer ?? '']?.tokens;
    };
    const issued = (await tokensOf())?.access_token;
    expect(issued).toEqual(expect.any(String));

    const inspected: InspectionEvent[] = [];
    const logged: unknown[] = [];
    const log = (fields: Record<string, unknown>, message?: string) => void logged.push([fields, message]);
    const logger = { debug: log, info: log, warn: log, error: log };
    const requestsBefore = fixture.requests.length;
    fixture.expireAccessTokens(); // a refresh on the way, so new tokens pass through too
    supervisor = createSupervisor({
      servers: { docs: { url: fixture.mcpUrl, auth: { ...browser, store }, keepalive: false } },
      inspect: (event) => void inspected.push(event),
      logger,
    });
    const transitions = recordTransitions(supervisor);
    await supervisor.start();
    await supervisor.server('docs').callTool('echo', { text: 'stored' });

    const later = fixture.requests.slice(requestsBefore).filter((r) => r.path === '/mcp');
    expect(later[0]?.headers.authorization).toBe(`Bearer ${issued}`);
    expect(fixture.authorizeRequests()).toHaveLength(1); // only the first run's: the second refreshed
    const current = await tokensOf();
    expect(current?.access_token).not.toBe(issued);
    expect(logged.length).toBeGreaterThan(0);
    const visible = JSON.stringify([
      supervisor.status(),
      transitions,
      logged,
      inspected.map((e) => ({ ...e, actorRef: undefined, sourceRef: undefined })),
    ]);
    for (const secret of [issued, current?.access_token, current?.refresh_token]) {
      expect(secret).toEqual(expect.any(String));
      expect(visible).not.toContain(secret);
    }
  });

  it('a corrupt token file fails the server with an error naming the file, instead of signing in over it', async () => {
    fixture = await startOAuthServer();
    const file = join(mkdtempSync(join(tmpdir(), 'mcp-sup-tokens-')), 'tokens.json');
    writeFileSync(file, '{ "half": ', { mode: 0o600 });
    supervisor = createSupervisor({
      servers: { docs: { url: fixture.mcpUrl, auth: { ...browser, store: fileTokenStore(file) }, keepalive: false } },
    });
    await supervisor.start();
    expect(supervisor.server('docs').status().state).toBe('failed');
    expect(supervisor.lastFailureOf('docs')).toBeInstanceOf(AuthorizationError);
    expect(supervisor.server('docs').status().lastError).toContain(file);
    expect(supervisor.server('docs').status().auth).toMatchObject({ authorized: false });
    expect(fixture.authorizeRequests()).toHaveLength(0);
  });
});
