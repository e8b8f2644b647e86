/**
 * The refresh protocol between providers that share one store (each provider stands for a
 * process; test/soak/ runs the same with real separate processes): adopt the winner's token,
 * re-read before a refusal counts, keep the credential on a transient failure, carry the refresh
 * token forward, one sign-in for all, the token file of an earlier version, one warning per outage.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { credentialKey } from '../../../src/auth/credential-slot.js';
import { createOAuthProvider, type OAuthClientOptions, type OAuthProvider } from '../../../src/auth/index.js';
import { fileTokenStore } from '../../../src/auth/token-store.js';
import type { StoredAuthorization } from '../../../src/auth/types.js';
import { StoreCorruptError, StoreUnavailableError } from '../../../src/store/errors.js';
import { fileStore, memoryStore, type Store } from '../../../src/store/index.js';
import { redisStore } from '../../../src/store/redis/index.js';
import { startOAuthServer, type OAuthFixture, type OAuthFixtureOptions } from '../../../servers/oauth-server.js';
import { callMcp, followRedirect, REDIRECT_URI } from './helpers.js';

let fixture: OAuthFixture | undefined;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await fixture?.close();
  fixture = undefined;
});

const ROTATING: OAuthFixtureOptions = { refreshTokens: true, revokeOnReuse: true };

function sharing(
  store: Store,
  options: Partial<OAuthClientOptions> = {},
  warnings: Error[] = [],
  coordination = { unavailableWaitMs: 300 },
): OAuthProvider {
  return createOAuthProvider(
    { redirectUri: REDIRECT_URI, onRedirect: followRedirect, refreshMarginMs: 0, ...options },
    { resourceUrl: new URL(fixture!.mcpUrl), server: 'docs', store, onWarning: (e) => warnings.push(e), coordination },
  );
}

const stored = async (store: Store, auth: OAuthProvider) =>
  (await store.get<StoredAuthorization>(credentialKey(auth.resource, undefined, undefined)))?.value;
const refreshTokenIn = (value: StoredAuthorization | undefined) =>
  value?.issuers && Object.values(value.issuers)[0]?.tokens?.refresh_token;

describe('credentials shared through a store', () => {
  it('a first sign-in started by several processes at once runs once; the others adopt it', async () => {
    fixture = await startOAuthServer(ROTATING);
    const store = memoryStore();
    const providers = [sharing(store), sharing(store), sharing(store)];
    const results = await Promise.all(providers.map((auth) => callMcp(fixture!, auth)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(fixture.counts.signIns).toBe(1);
    expect(fixture.requests.filter((r) => r.path.endsWith('/register'))).toHaveLength(1);
    expect(new Set(providers.map((auth) => auth.authorization())).size).toBe(1);
  });

  it('the loser of a race adopts the winner’s token: one refresh, no reuse', async () => {
    fixture = await startOAuthServer(ROTATING);
    const store = memoryStore();
    const [a, b] = [sharing(store), sharing(store)];
    await callMcp(fixture, a);
    await callMcp(fixture, b); // read from the store at start: no second sign-in
    fixture.expireAccessTokens();
    await callMcp(fixture, a); // a refreshes
    const winner = a.authorization();
    expect(await callMcp(fixture, b)).toEqual({ status: 200, authorizations: 1 }); // b's 401 adopts it
    expect(b.authorization()).toBe(winner);
    expect(fixture.counts).toMatchObject({ refreshes: 1, reuses: 0, signIns: 1 });
    fixture.expireAccessTokens();
    await Promise.all([callMcp(fixture, a), callMcp(fixture, b)]);
    expect(fixture.counts).toMatchObject({ refreshes: 2, reuses: 0, signIns: 1 });
  });

  it('invalid_grant is re-read first: the token another writer stored meanwhile is adopted', async () => {
    fixture = await startOAuthServer({ refreshTokens: true, refreshDelayMs: 200 });
    const store = memoryStore();
    const auth = sharing(store);
    await callMcp(fixture, auth);
    const before = await stored(store, auth);
    // A writer outside the protocol (an earlier version of this library) spends the refresh token
    // and stores what it got while this provider's refresh with the spent token is on its way.
    const spent = refreshTokenIn(before)!;
    const client = Object.values(before!.issuers!)[0]!.client!.client_id;
    const outsider = request(`${fixture.origin}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: spent,
        client_id: client,
        resource: fixture.mcpUrl,
      }).toString(),
    }).then((r) => r.body.json() as Promise<{ access_token: string; refresh_token: string }>);
    fixture.expireAccessTokens();
    const call = callMcp(fixture, auth);
    const theirs = await outsider;
    await expect.poll(() => fixture!.tokenRequests().length).toBe(3);
    const entry = (await store.get<StoredAuthorization>(credentialKey(auth.resource, undefined, undefined)))!;
    const issuer = Object.keys(entry.value.issuers!)[0]!;
    const next: StoredAuthorization = structuredClone(entry.value);
    next.issuers![issuer]!.tokens = {
      access_token: theirs.access_token,
      token_type: 'Bearer',
      refresh_token: theirs.refresh_token,
    };
    const key = credentialKey(auth.resource, undefined, undefined);
    expect((await store.set(key, next, { ifVersion: entry.version })).ok).toBe(true);
    expect(await call).toEqual({ status: 200, authorizations: 1 });
    expect(auth.authorization()).toBe(`Bearer ${theirs.access_token}`);
    expect(fixture.counts.signIns).toBe(1);
  });

  it('invalid_grant after the re-read is a revocation: the refresh token goes, the registration stays, one new sign-in', async () => {
    fixture = await startOAuthServer(ROTATING);
    const store = memoryStore();
    const auth = sharing(store);
    await callMcp(fixture, auth);
    fixture.moveAuthorizationServer(''); // every token forgotten at the server, same issuer
    expect(await callMcp(fixture, auth)).toMatchObject({ status: 200 });
    expect(fixture.counts.signIns).toBe(2);
    expect(fixture.requests.filter((r) => r.path.endsWith('/register'))).toHaveLength(1);
    expect(refreshTokenIn(await stored(store, auth))).toBeDefined();
  });

  it('a transient failure (503) keeps the stored credential; the next refresh uses it', async () => {
    fixture = await startOAuthServer(ROTATING);
    const store = memoryStore();
    const auth = sharing(store);
    await callMcp(fixture, auth);
    const before = await stored(store, auth);
    fixture.expireAccessTokens();
    fixture.failRefreshes(1, 503);
    await expect(callMcp(fixture, auth)).rejects.toMatchObject({ retryable: true, fatal: false });
    expect(await stored(store, auth)).toEqual(before);
    expect(await callMcp(fixture, auth)).toMatchObject({ status: 200 });
    expect(fixture.counts).toMatchObject({ refreshes: 1, reuses: 0, signIns: 1 });
  });

  it('a refresh token the server omits is carried forward', async () => {
    fixture = await startOAuthServer({ refreshTokens: true, omitRefreshToken: true });
    const store = memoryStore();
    const auth = sharing(store);
    await callMcp(fixture, auth);
    const first = refreshTokenIn(await stored(store, auth));
    for (let i = 0; i < 2; i++) {
      fixture.expireAccessTokens();
      await callMcp(fixture, auth);
    }
    expect(refreshTokenIn(await stored(store, auth))).toBe(first);
    expect(fixture.counts).toMatchObject({ refreshes: 2, signIns: 1 });
  });

  it('a lock holder that stopped renewing is taken over after its lease', async () => {
    fixture = await startOAuthServer(ROTATING);
    const store = memoryStore();
    const auth = sharing(store);
    await callMcp(fixture, auth);
    const dead = await store.lock(credentialKey(auth.resource, undefined, undefined), { leaseMs: 300 });
    expect(dead).toBeDefined();
    fixture.expireAccessTokens();
    expect(await callMcp(fixture, auth)).toMatchObject({ status: 200 });
    expect(await dead!.renew()).toBe(false);
    expect(fixture.counts).toMatchObject({ refreshes: 1, signIns: 1 });
  });

  it('a token file of an earlier version is read from auth.store without a new login, then lives in the store', async () => {
    fixture = await startOAuthServer(ROTATING);
    const dir = await mkdtemp(join(tmpdir(), 'legacy-tokens-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'tokens.json');
    const old = createOAuthProvider(
      { redirectUri: REDIRECT_URI, onRedirect: followRedirect, store: fileTokenStore(file) },
      { resourceUrl: new URL(fixture.mcpUrl), server: 'docs' },
    );
    await callMcp(fixture, old);
    // The previous format: one issuer, tokens and client at the top level.
    const current = JSON.parse(await readFile(file, 'utf8'));
    const entry = current[old.resource];
    const only = Object.values(entry.issuers)[0] as StoredAuthorization;
    await writeFile(
      file,
      JSON.stringify({ [old.resource]: { issuer: entry.issuer, tokens: only.tokens, client: only.client } }),
    );
    const store = memoryStore();
    const auth = sharing(store, { store: fileTokenStore(file) });
    await auth.ready(); // as the runtime does before it connects
    // Moved into the store at once: another process on the store has the login without the file.
    expect(refreshTokenIn(await stored(store, auth))).toBe(only.tokens?.refresh_token);
    expect(await callMcp(fixture, auth)).toEqual({ status: 200, authorizations: 0 });
    fixture.expireAccessTokens();
    await callMcp(fixture, auth);
    expect(fixture.counts).toMatchObject({ signIns: 1, refreshes: 1, reuses: 0 });
    expect(refreshTokenIn(await stored(store, auth))).toBeDefined();
  });

  it('a corrupt store file is a StoreCorruptError naming it at start-up, never a new login over it', async () => {
    fixture = await startOAuthServer(ROTATING);
    const dir = await mkdtemp(join(tmpdir(), 'corrupt-store-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'store.json');
    await writeFile(file, '{"version": 3, "entries": {"k": ');
    const auth = sharing(fileStore(file));
    await expect(auth.ready()).rejects.toBeInstanceOf(StoreCorruptError);
    await expect(auth.ready()).rejects.toThrow(file);
    expect(await readFile(file, 'utf8')).toBe('{"version": 3, "entries": {"k": ');
    expect(fixture.counts.signIns).toBe(0);
  });

  it('a store that cannot be reached: one warning, the credentials in hand go on working', async () => {
    fixture = await startOAuthServer(ROTATING);
    const down = redisStore({ url: 'redis://127.0.0.1:1', timeoutMs: 100 });
    cleanups.push(async () => down.close?.());
    const warnings: Error[] = [];
    const auth = sharing(down, {}, warnings);
    expect(await callMcp(fixture, auth)).toMatchObject({ status: 200 });
    for (let i = 0; i < 2; i++) {
      fixture.expireAccessTokens();
      expect(await callMcp(fixture, auth)).toMatchObject({ status: 200 });
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toBeInstanceOf(StoreUnavailableError);
    expect(fixture.counts).toMatchObject({ signIns: 1, refreshes: 2, reuses: 0 });
  });
});
