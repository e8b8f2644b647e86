/**
 * SEP-2352: credentials are bound to the authorization server that issued them. A PRM that names
 * a new server leads to discovery and registration there; nothing of the old server is sent to
 * the new one; and a token file of the previous format (one issuer, top-level tokens) still works.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CredentialBook } from '../../../src/auth/credential-book.js';
import { memoryTokenStore } from '../../../src/auth/index.js';
import { fileTokenStore } from '../../../src/auth/token-store.js';
import { startOAuthServer, type OAuthFixture } from '../../../servers/oauth-server.js';
import { callMcp, provider } from './helpers.js';

let fixture: OAuthFixture | undefined;
let dir: string | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('authorization server migration (SEP-2352)', () => {
  it('re-reads the PRM, discovers and registers at the new server, and never sends it the old client or refresh token', async () => {
    fixture = await startOAuthServer({ refreshTokens: true });
    const store = memoryTokenStore();
    const auth = provider(fixture, { store });
    expect(await callMcp(fixture, auth)).toEqual({ status: 200, authorizations: 1 });
    const oldClient = fixture.tokenRequests()[0]!.form!['client_id'];
    const oldIssuer = fixture.issuer;

    fixture.moveAuthorizationServer('/as2');
    const before = fixture.requests.length;
    expect(await callMcp(fixture, auth)).toEqual({ status: 200, authorizations: 1 });
    const after = fixture.requests.slice(before);
    expect(after.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /mcp',
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /.well-known/oauth-authorization-server/as2',
      'POST /as2/register',
      'GET /as2/authorize',
      'POST /as2/token',
      'POST /mcp',
    ]);
    const atNew = after.filter((r) => r.path.startsWith('/as2/'));
    expect(atNew.some((r) => r.query['client_id'] === oldClient || r.form?.['client_id'] === oldClient)).toBe(false);
    expect(atNew.some((r) => r.form?.['grant_type'] === 'refresh_token')).toBe(false);

    const stored = await store.load(fixture.mcpUrl);
    expect(stored?.issuer).toBe(fixture.issuer);
    expect(Object.keys(stored?.issuers ?? {}).sort()).toEqual([oldIssuer, fixture.issuer].sort());
    expect(stored!.issuers![oldIssuer]!.client!.client_id).toBe(oldClient);
    expect(stored!.issuers![fixture.issuer]!.client!.client_id).not.toBe(oldClient);
  });

  it('gives up after the attempt limit when nothing changes, so the re-read PRM is not a loop', async () => {
    fixture = await startOAuthServer({ alwaysInsufficient: true });
    const error = await callMcp(fixture, provider(fixture)).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/gave up after 3 authorization attempts/);
  });
});

describe('token store format', () => {
  it('reads a file written by the previous version (top-level tokens and client) without a new login, then writes the new shape', async () => {
    fixture = await startOAuthServer({ refreshTokens: true });
    dir = await mkdtemp(join(tmpdir(), 'mcp-supervisor-migrate-'));
    const file = join(dir, 'tokens.json');
    // A real login, its entry rewritten the way the previous version stored it.
    const first = provider(fixture, { store: fileTokenStore(file) });
    await callMcp(fixture, first);
    const current = JSON.parse(await readFile(file, 'utf8'))[fixture.mcpUrl];
    const credentials = current.issuers[current.issuer];
    const legacy = { issuer: current.issuer, tokens: credentials.tokens, client: credentials.client };
    await writeFile(file, JSON.stringify({ [fixture.mcpUrl]: legacy }), { mode: 0o600 });

    const again = provider(fixture, { store: fileTokenStore(file) });
    await again.ready();
    expect(again.authorization()).toBe(`Bearer ${legacy.tokens.access_token}`);
    expect(await callMcp(fixture, again)).toEqual({ status: 200, authorizations: 0 });
    // The stored refresh token and registration still work after the migration.
    fixture.expireAccessTokens();
    const registrations = fixture.requests.filter((r) => r.path === '/register').length;
    expect(await callMcp(fixture, again)).toEqual({ status: 200, authorizations: 1 });
    expect(fixture.tokenRequests().at(-1)!.form).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: legacy.tokens.refresh_token,
      client_id: legacy.client.client_id,
    });
    expect(fixture.requests.filter((r) => r.path === '/register')).toHaveLength(registrations);
    const rewritten = JSON.parse(await readFile(file, 'utf8'))[fixture.mcpUrl];
    expect(rewritten.tokens).toBeUndefined();
    expect(rewritten.issuers[fixture.issuer].client.client_id).toBe(legacy.client.client_id);
  });

  it('keeps the access token of an entry without an issuer, but never its refresh token or client', () => {
    const book = new CredentialBook();
    book.load({
      tokens: { access_token: 'a', token_type: 'Bearer', refresh_token: 'r' },
      client: { client_id: 'c' },
    });
    expect(book.tokens?.access_token).toBe('a');
    expect(book.useIssuer('https://as.example')).toBe(false);
    expect(book.tokens).toEqual({ access_token: 'a', token_type: 'Bearer', refresh_token: undefined });
    expect(book.client).toBeUndefined();
  });

  it('switching back to an earlier issuer brings back what it issued', () => {
    const book = new CredentialBook();
    book.useIssuer('https://one');
    book.client = { client_id: 'one' };
    expect(book.useIssuer('https://two')).toBe(true);
    expect(book.client).toBeUndefined();
    book.client = { client_id: 'two' };
    book.useIssuer('https://one');
    expect(book.client).toEqual({ client_id: 'one' });
    expect(book.toStored()).toEqual({
      issuer: 'https://one',
      issuers: { 'https://one': { client: { client_id: 'one' } }, 'https://two': { client: { client_id: 'two' } } },
    });
  });
});
