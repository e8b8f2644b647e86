/**
 * Fencing on credential writes (issue #26): a process that holds the credential's lock stalls past
 * its lease (its event loop blocked: no renewal), another takes the lock over and stores its
 * token; the stalled holder's write, when its refresh finally returns, is refused by the store
 * (StoreFencedError) and it adopts the new holder's token instead of overwriting it. On the
 * memory, file and Redis stores (a real redis-server).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { credentialKey } from '../../src/auth/credential-slot.js';
import { createOAuthProvider } from '../../src/auth/index.js';
import type { StoredAuthorization } from '../../src/auth/types.js';
import { fileStore, memoryStore, type Store } from '../../src/store/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import { startOAuthServer, type OAuthFixture } from '../../servers/oauth-server.js';
import { callMcp, followRedirect, REDIRECT_URI } from '../unit/auth/helpers.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

const LEASE_MS = 300;

let fixture: OAuthFixture;
let redis: RedisServer;
let dir: string;
beforeAll(async () => {
  [fixture, redis, dir] = await Promise.all([
    startOAuthServer({ refreshTokens: true, revokeOnReuse: true }),
    startRedisServer(),
    mkdtemp(join(tmpdir(), 'fenced-credentials-')),
  ]);
});
afterAll(async () => {
  await Promise.all([fixture.close(), redis.stop(), rm(dir, { recursive: true, force: true })]);
});
const opened: Store[] = [];
afterEach(async () => {
  fixture.delayRefreshes(0);
  for (const store of opened.splice(0)) await store.close?.();
});

/** Blocks this process's event loop: no timer (the lease's renewal) runs meanwhile. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: a paused or overloaded process
  }
}

describe.each([
  ['memory', () => memoryStore()],
  ['file', () => fileStore(join(dir, `${Math.random().toString(36).slice(2)}.json`))],
  ['redis', () => redisStore({ url: redis.url, prefix: `fenced-${Math.random().toString(36).slice(2)}:` })],
])('%s store', (_name, open) => {
  it('a holder whose lease was taken over cannot overwrite the new holder: its write is refused, it adopts the stored token', async () => {
    const store = open();
    opened.push(store);
    const auth = createOAuthProvider(
      { redirectUri: REDIRECT_URI, onRedirect: followRedirect, refreshMarginMs: 0 },
      {
        resourceUrl: new URL(fixture.mcpUrl),
        server: 'docs',
        store,
        coordination: { leaseMs: LEASE_MS, unavailableWaitMs: 300 },
      },
    );
    await callMcp(fixture, auth);
    const key = credentialKey(auth.resource, undefined, undefined);

    // The holder's refresh is held at the authorization server while its process stalls.
    fixture.delayRefreshes(1_500);
    const held = fixture.counts.held;
    fixture.expireAccessTokens();
    // What a transport does on a 401: one authorize(), here a refresh under the credential's lock.
    const stalled = auth.authorize(
      { status: 401, wwwAuthenticate: undefined, resourceUrl: new URL(fixture.mcpUrl) },
      AbortSignal.timeout(10_000),
    );
    await expect.poll(() => fixture.counts.held).toBe(held + 1);
    stall(LEASE_MS + 150);

    // Another process takes the lock over (the lease ran out unrenewed) and stores its token.
    const next = await store.lock(key, { leaseMs: 5_000 });
    expect(next).toBeDefined();
    const entry = (await store.get<StoredAuthorization>(key))!;
    const value = structuredClone(entry.value);
    const issuer = Object.values(value.issuers!)[0]!;
    issuer.tokens = { ...issuer.tokens!, access_token: 'from-the-new-holder', expires_at: Date.now() + 3_600_000 };
    const written = await store.set(key, value, { ifVersion: entry.version, fence: { lock: key, token: next!.token } });
    expect(written.ok).toBe(true);
    await next!.release();

    // The stalled holder's refresh returns: its write is fenced out, and it takes the new holder's token.
    await stalled;
    const stored = (await store.get<StoredAuthorization>(key))!;
    expect(stored.version).toBe(written.ok ? written.version : -1);
    expect(Object.values(stored.value.issuers!)[0]!.tokens!.access_token).toBe('from-the-new-holder');
    expect(auth.authorization()).toBe('Bearer from-the-new-holder');
  });
});
