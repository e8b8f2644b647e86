/**
 * Tool catalogs in the store (issue #26): a restarted process (a second supervisor on the same
 * memoryStore) serves a list the server marked shareable (`cacheScope: 'public'`) while its
 * `ttlMs` lasts, and lists again after. Time moves with a faked `Date` only.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSupervisor, memoryStore, type Store, type Supervisor } from '../../src/index.js';
import { startModernFixture, type ModernFixture } from '../../servers/modern-fixture.js';
import { startV2Server } from '../integration/modern/v2-server.js';

let fixture: ModernFixture;
beforeAll(async () => {
  fixture = await startModernFixture([{ name: 'echo', inputSchema: { type: 'object' } }]);
});
afterAll(() => fixture.close());

const running: Supervisor[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(running.splice(0).map((sup) => sup.stop().catch(() => {})));
  fixture.ttlMs = fixture.cacheScope = undefined;
  fixture.tools = [{ name: 'echo', inputSchema: { type: 'object' } }];
  fixture.seen.length = 0;
});

async function supervise(store: Store): Promise<Supervisor> {
  const sup = createSupervisor({ servers: { s: { url: fixture.url, keepalive: false } }, store });
  running.push(sup);
  await sup.start();
  return sup;
}

const lists = () => fixture.posts('tools/list').length;

describe('a tool catalog in the store', () => {
  it('is served by the restarted process within its ttlMs, and listed again after it', async () => {
    fixture.ttlMs = 60_000;
    fixture.cacheScope = 'public';
    const store = memoryStore();
    const first = await supervise(store);
    expect((await first.tools()).tools.map((tool) => tool.originalName)).toEqual(['echo']);
    expect(lists()).toBe(1);
    await first.stop();

    vi.useFakeTimers({ toFake: ['Date'] });
    const sup = await supervise(store);
    expect((await sup.tools()).tools.map((tool) => tool.originalName)).toEqual(['echo']);
    expect(lists()).toBe(1); // from the store
    expect((await sup.tools()).tools).toHaveLength(1);
    expect(lists()).toBe(1); // fresh in this process too
    vi.setSystemTime(Date.now() + 61_000);
    expect((await sup.tools()).tools).toHaveLength(1);
    expect(lists()).toBe(2);
  });

  it('a restarted process after the ttlMs lists again', async () => {
    fixture.ttlMs = 60_000;
    fixture.cacheScope = 'public';
    const store = memoryStore();
    await (await supervise(store)).tools();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    await (await supervise(store)).tools();
    expect(lists()).toBe(2);
  });

  it.each([
    ['private', 60_000],
    [undefined, 60_000],
    ['public', undefined],
    ['public', 0],
  ] as const)('cacheScope %s, ttlMs %s: not shared, every process lists', async (scope, ttlMs) => {
    fixture.ttlMs = ttlMs;
    fixture.cacheScope = scope;
    const store = memoryStore();
    await (await supervise(store)).tools();
    await (await supervise(store)).tools();
    expect(lists()).toBe(2);
  });

  it('a list_changed replaces the stored list: the next process never serves the old one (official v2 server, ttlMs 60 s, public)', async () => {
    const v2 = await startV2Server('modern');
    try {
      const store = memoryStore();
      const names = async (sup: Supervisor) => (await sup.tools()).tools.map((tool) => tool.originalName).sort();
      const a = createSupervisor({ servers: { s: { url: v2.url, keepalive: false } }, store });
      running.push(a);
      await a.start();
      expect(await names(a)).not.toContain('later');
      v2.addTool('later');
      await expect.poll(() => names(a)).toContain('later');
      const b = createSupervisor({ servers: { s: { url: v2.url, keepalive: false } }, store });
      running.push(b);
      await b.start();
      expect(await names(b)).toContain('later');
    } finally {
      await Promise.all(running.splice(0).map((sup) => sup.stop().catch(() => {})));
      await v2.close();
    }
  });
});

describe('a private list (cacheScope private, or none) is kept per principal', () => {
  /** A process acting for `principal` through the built-in OAuth client (the fixture asks for no token). */
  async function as(store: Store, principal: string | undefined): Promise<string[]> {
    const auth = { grant: 'client_credentials' as const, clientId: 'fleet', clientSecret: 'secret', principal };
    const sup = createSupervisor({ servers: { s: { url: fixture.url, keepalive: false, auth } }, store });
    running.push(sup);
    await sup.start();
    return (await sup.tools()).tools.map((tool) => tool.originalName);
  }

  it.each(['private', undefined] as const)(
    'cacheScope %s: served again to its principal only; another principal lists (and gets its own)',
    async (scope) => {
      fixture.ttlMs = 60_000;
      fixture.cacheScope = scope;
      const store = memoryStore();
      fixture.tools = [{ name: 'alice_mail', inputSchema: { type: 'object' } }];
      expect(await as(store, 'alice')).toEqual(['alice_mail']);
      expect(lists()).toBe(1);
      expect(await as(store, 'alice')).toEqual(['alice_mail']);
      expect(lists()).toBe(1); // alice's, from the store
      fixture.tools = [{ name: 'bob_mail', inputSchema: { type: 'object' } }];
      expect(await as(store, 'bob')).toEqual(['bob_mail']); // never alice's
      expect(lists()).toBe(2);
      expect(await as(store, 'bob')).toEqual(['bob_mail']);
      expect(await as(store, 'alice')).toEqual(['alice_mail']);
      expect(lists()).toBe(2);
      // No principal is a context of its own (the fleet's one credential), not alice's nor bob's.
      fixture.tools = [{ name: 'fleet_mail', inputSchema: { type: 'object' } }];
      expect(await as(store, undefined)).toEqual(['fleet_mail']);
      expect(lists()).toBe(3);
    },
  );

  it('a public list is shared across principals', async () => {
    fixture.ttlMs = 60_000;
    fixture.cacheScope = 'public';
    const store = memoryStore();
    expect(await as(store, 'alice')).toEqual(['echo']);
    expect(await as(store, 'bob')).toEqual(['echo']);
    expect(await as(store, undefined)).toEqual(['echo']);
    expect(lists()).toBe(1);
  });
});
