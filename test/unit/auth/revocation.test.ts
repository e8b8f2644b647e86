/** RFC 7009 revocation: `provider.revoke()` / `forget()`, and the CLI's `logout`. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryTokenStore } from '../../../src/auth/index.js';
import { fileTokenStore } from '../../../src/auth/token-store.js';
import { startOAuthServer, type OAuthFixture } from '../../../servers/oauth-server.js';
import { runCli } from '../../cli/helpers.js';
import { callMcp, provider } from './helpers.js';

let fixture: OAuthFixture | undefined;
let dir: string | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('revoke and forget', () => {
  it('revokes the refresh and access token at the advertised endpoint, with client auth, then forgets them', async () => {
    fixture = await startOAuthServer({ revocation: true, refreshTokens: true });
    const store = memoryTokenStore();
    const auth = provider(fixture, { store });
    await callMcp(fixture, auth);
    const [issued] = fixture.tokenRequests();
    const clientId = issued!.form!['client_id'];
    const access = auth.authorization()!.slice('Bearer '.length);

    expect(await auth.revoke()).toEqual({ revoked: true });
    const revocations = fixture.requests.filter((r) => r.path === '/revoke').map((r) => r.form);
    expect(revocations).toEqual([
      { token: expect.stringMatching(/^rt-/), token_type_hint: 'refresh_token', client_id: clientId },
      { token: access, token_type_hint: 'access_token', client_id: clientId },
    ]);
    expect(auth.authorization()).toBeUndefined();
    expect(await store.load(auth.resource)).toBeUndefined();
    // The server really revoked it: the old token is refused.
    const { request } = await import('undici');
    const answer = await request(fixture.mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    await answer.body.dump();
    expect(answer.statusCode).toBe(401);
  });

  it('without a revocation endpoint: nothing is sent, the local entry is still removed', async () => {
    fixture = await startOAuthServer();
    const store = memoryTokenStore();
    const auth = provider(fixture, { store });
    await callMcp(fixture, auth);
    expect(await auth.revoke()).toEqual({ revoked: false });
    expect(fixture.requests.some((r) => r.path === '/revoke')).toBe(false);
    expect(await store.load(auth.resource)).toBeUndefined();
  });

  it('a failing revocation is reported, and the entry is removed anyway; forget() never calls the server', async () => {
    fixture = await startOAuthServer({ revocation: true });
    const store = memoryTokenStore();
    const auth = provider(fixture, { store });
    await callMcp(fixture, auth);
    await fixture.close();
    const result = await auth.revoke();
    expect(result.revoked).toBe(false);
    expect(result.error?.message).toMatch(/protected resource metadata|token revocation/);
    expect(await store.load(auth.resource)).toBeUndefined();
    fixture = await startOAuthServer({ revocation: true });
    const other = provider(fixture, { store });
    await callMcp(fixture, other);
    await other.forget();
    expect(fixture.requests.some((r) => r.path === '/revoke')).toBe(false);
    expect(other.authorization()).toBeUndefined();
  });
});

describe('mcp-supervisor logout', () => {
  it('revokes and removes the server entry from the token file', async () => {
    fixture = await startOAuthServer({ revocation: true, refreshTokens: true });
    dir = await mkdtemp(join(tmpdir(), 'mcp-supervisor-logout-'));
    const file = join(dir, 'tokens.json');
    await callMcp(fixture, provider(fixture, { store: fileTokenStore(file) }));
    expect(Object.keys(JSON.parse(await readFile(file, 'utf8')))).toEqual([fixture.mcpUrl]);

    const result = await runCli(['logout', '--url', fixture.mcpUrl, '--name', 'docs', '--oauth', '--token-file', file]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ server: 'docs', revoked: true, forgotten: true });
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({});
    expect(fixture.requests.filter((r) => r.path === '/revoke')).toHaveLength(2);
    expect(result.stderr).not.toMatch(/at-\d|rt-\d/);
  });
});
