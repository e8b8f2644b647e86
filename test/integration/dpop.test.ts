/**
 * DPoP (RFC 9449, SEP-1932) through `connect()`: a real authorization server and MCP resource that
 * require proofs and nonces (servers/dpop-server.ts), a file token store across restarts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthorizationError, connect, fileTokenStore, memoryTokenStore, type ServerHandle } from '../../src/index.js';
import { startDpopServer, type DpopFixture } from '../../servers/dpop-server.js';
import { followRedirect, REDIRECT_URI } from '../unit/auth/helpers.js';

let fixture: DpopFixture | undefined;
let handle: ServerHandle | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await fixture?.close();
  handle = fixture = undefined;
});

const browser = { redirectUri: REDIRECT_URI, onRedirect: followRedirect };
const common = { keepalive: false as const, protocolVersion: 'legacy' as const };

describe('DPoP through connect()', () => {
  it('binds the token to its key and proves possession on every request, with both servers’ nonces', async () => {
    fixture = await startDpopServer({ asNonce: true, rsNonce: true });
    handle = await connect({ url: fixture.mcpUrl, auth: browser, ...common });
    const result = await handle.callTool('echo', { text: 'proved' });
    await handle.listTools();

    expect(result.content[0]?.text).toBe('proved');
    expect(fixture.refusals).toEqual([]);
    // One nonce challenge from each server, answered at once; later proofs carry the nonce.
    expect(fixture.nonceChallenges).toEqual({ as: 1, rs: 1 });
    expect(fixture.tokenRequests).toBe(2);
    const token = fixture.proofs.filter((p) => p.path === '/token');
    expect(token.map((p) => p.claims['nonce'])).toEqual([undefined, 'as-nonce-1']);
    expect(token.every((p) => p.claims['ath'] === undefined)).toBe(true);
    const mcp = fixture.proofs.filter((p) => p.path === '/mcp');
    expect(mcp.length).toBeGreaterThanOrEqual(4);
    expect(new Set(mcp.map((p) => p.scheme))).toEqual(new Set(['DPoP']));
    expect(mcp.slice(1).every((p) => p.claims['nonce'] === 'rs-nonce-1')).toBe(true);
    expect(new Set(fixture.proofs.map((p) => p.jkt)).size).toBe(1);
    expect(handle.status().auth).toEqual({ authorized: true, scope: undefined, expiresAt: expect.any(Number) });
  });

  it('answers a rotated resource-server nonce with one retry, not a new authorization', async () => {
    fixture = await startDpopServer({ rsNonce: true });
    handle = await connect({ url: fixture.mcpUrl, auth: browser, ...common });
    await handle.listTools();
    const tokens = fixture.tokenRequests;
    fixture.rotateNonces();
    await handle.listTools();

    expect(fixture.tokenRequests).toBe(tokens);
    expect(fixture.nonceChallenges.rs).toBe(2);
    expect(fixture.refusals).toEqual([]);
  });

  it('a resource server that never settles on a nonce ends at the attempt limit, without new tokens', async () => {
    fixture = await startDpopServer({ rsNonceNeverSettles: true });
    const error = await connect({ url: fixture.mcpUrl, auth: { ...browser, maxAttempts: 2 }, ...common }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error?.message).toMatch(/gave up after 2 authorization attempts/);
    expect(fixture.tokenRequests).toBe(1);
    // Each refused request was sent once more with the new nonce; the limit bounds the rest.
    expect(fixture.nonceChallenges.rs).toBe(4);
  });

  it('keeps the key with the tokens in a file store: a restart proves with the same key, no new login', async () => {
    fixture = await startDpopServer({ refreshTokens: true });
    const file = join(mkdtempSync(join(tmpdir(), 'dpop-')), 'tokens.json');
    handle = await connect({ url: fixture.mcpUrl, auth: { ...browser, store: fileTokenStore(file) }, ...common });
    await handle.listTools();
    await handle.close();
    const stored = JSON.parse(readFileSync(file, 'utf8'))[fixture.mcpUrl];
    const key = stored.issuers[fixture.origin].dpopKey;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String) });
    expect(stored.issuers[fixture.origin].tokens.token_type).toBe('DPoP');

    const before = fixture.tokenRequests;
    handle = await connect({ url: fixture.mcpUrl, auth: { ...browser, store: fileTokenStore(file) }, ...common });
    await handle.listTools();
    expect(fixture.tokenRequests).toBe(before);

    // The refresh token is bound to the key too: refreshing after the access token expired works.
    fixture.expireAccessTokens();
    await handle.listTools();
    expect(fixture.tokenRequests).toBe(before + 1);
    expect(fixture.refusals).toEqual(['POST /mcp: token not bound to the proof']);
    expect(new Set(fixture.proofs.map((p) => p.jkt)).size).toBe(1);
  });

  it('uses DPoP when the resource metadata requires it, even under a Bearer challenge', async () => {
    fixture = await startDpopServer({ requiredInPrm: true });
    handle = await connect({ url: fixture.mcpUrl, auth: browser, ...common });
    await handle.listTools();
    expect(fixture.refusals).toEqual([]);
    expect(fixture.proofs.some((p) => p.path === '/mcp' && p.scheme === 'DPoP')).toBe(true);
  });

  it('does not use DPoP when turned off, and the server says why it refuses', async () => {
    fixture = await startDpopServer();
    const store = memoryTokenStore();
    await expect(
      connect({ url: fixture.mcpUrl, auth: { ...browser, dpop: false, store, maxAttempts: 1 }, ...common }),
    ).rejects.toThrow();
    expect(fixture.proofs).toEqual([]);
    expect(fixture.refusals[0]).toMatch(/POST \/token: not exactly one DPoP header/);
  });
});
