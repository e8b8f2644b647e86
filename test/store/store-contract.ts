/**
 * What every `Store` must do, run against each of them (memory here; the file and Redis stores
 * run the same list against their real backends): versions and compare-and-swap, deletes, TTLs,
 * copies in and out, typed errors for bad input, and the lease lock with its fencing token, which
 * writes carry (`fence`) so that a holder whose lease was taken over is refused.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import type { Store } from '../../src/store/index.js';
import { StoreFencedError } from '../../src/store/errors.js';

export function describeStoreContract(
  name: string,
  open: () => Promise<Store>,
  close?: (store: Store) => Promise<void>,
) {
  describe(`${name}: the Store contract`, () => {
    const withStore = (test: (store: Store) => Promise<void>) => async () => {
      const store = await open();
      try {
        await test(store);
      } finally {
        await (close ? close(store) : store.close?.());
      }
    };
    const key = (suffix: string) => `contract:${suffix}:${Math.random().toString(36).slice(2)}`;

    it(
      'writes grow the version; compare-and-swap wins only at the current version',
      withStore(async (store) => {
        const k = key('cas');
        expect(await store.get(k)).toBeUndefined();
        const first = await store.set(k, { n: 1 }, { ifVersion: 0 });
        expect(first).toEqual({ ok: true, version: expect.any(Number) });
        const v1 = (first as { version: number }).version;
        expect(await store.set(k, { n: 9 }, { ifVersion: 0 })).toEqual({
          ok: false,
          current: { value: { n: 1 }, version: v1 },
        });
        const second = await store.set(k, { n: 2 }, { ifVersion: v1 });
        expect(second.ok).toBe(true);
        const v2 = (second as { version: number }).version;
        expect(v2).toBeGreaterThan(v1);
        expect(await store.set(k, { n: 3 }, { ifVersion: v1 })).toMatchObject({
          ok: false,
          current: { value: { n: 2 } },
        });
        expect(await store.get(k)).toEqual({ value: { n: 2 }, version: v2 });
        expect((await store.set(k, { n: 4 })).ok).toBe(true); // no ifVersion: last writer wins
      }),
    );

    it(
      'values are copied in and out',
      withStore(async (store) => {
        const k = key('copy');
        const value = { list: [1, 2], nested: { a: 'b' } };
        await store.set(k, value);
        value.list.push(3);
        const read = await store.get<typeof value>(k);
        expect(read?.value).toEqual({ list: [1, 2], nested: { a: 'b' } });
        read!.value.nested.a = 'changed';
        expect((await store.get<typeof value>(k))?.value.nested.a).toBe('b');
      }),
    );

    it(
      'delete removes, at a version when given; a deleted key starts again at a new version',
      withStore(async (store) => {
        const k = key('delete');
        const written = (await store.set(k, 'x')) as { version: number };
        expect(await store.delete(k, { ifVersion: written.version + 1000 })).toBe(false);
        expect(await store.get(k)).toBeDefined();
        expect(await store.delete(k, { ifVersion: written.version })).toBe(true);
        expect(await store.delete(k)).toBe(false);
        const again = (await store.set(k, 'y', { ifVersion: 0 })) as { ok: true; version: number };
        expect(again.ok).toBe(true);
        expect(again.version).not.toBe(written.version);
      }),
    );

    it(
      'an entry written with ttlMs is gone after it',
      withStore(async (store) => {
        const k = key('ttl');
        // Long enough for a loaded machine to read it back (a file store's get takes its lock).
        await store.set(k, 1, { ttlMs: 250 });
        expect(await store.get(k)).toBeDefined();
        await expect.poll(() => store.get(k), { interval: 25 }).toBeUndefined();
      }),
    );

    it(
      'bad input is a ConfigError naming what was wrong',
      withStore(async (store) => {
        await expect(store.get('')).rejects.toThrow(ConfigError);
        await expect(store.set(key('bad'), 10n)).rejects.toThrow(/not JSON/);
        await expect(store.set(key('bad'), undefined)).rejects.toThrow(/not JSON/);
        await expect(store.lock(key('bad'), { leaseMs: 0 })).rejects.toThrow(/leaseMs/);
        await expect(store.lock(key('bad'), { leaseMs: 100, waitMs: -1 })).rejects.toThrow(/waitMs/);
      }),
    );

    it(
      'one holder at a time; the token grows; a waiter gets the lease when it is released',
      withStore(async (store) => {
        const name = key('lock');
        const first = await store.lock(name, { leaseMs: 5_000 });
        expect(first).toBeDefined();
        expect(await store.lock(name, { leaseMs: 5_000 })).toBeUndefined();
        const waiting = store.lock(name, { leaseMs: 5_000, waitMs: 5_000 });
        await first!.release();
        const second = await waiting;
        expect(second!.token).toBeGreaterThan(first!.token);
        expect(await first!.renew()).toBe(false);
        expect(await second!.renew()).toBe(true);
        await second!.release();
      }),
    );

    it(
      'a holder that stops renewing is taken over after its lease, and learns it lost it',
      withStore(async (store) => {
        const name = key('lease');
        const dead = await store.lock(name, { leaseMs: 100 });
        const next = await store.lock(name, { leaseMs: 5_000, waitMs: 5_000 });
        expect(next!.token).toBeGreaterThan(dead!.token);
        expect(await dead!.renew()).toBe(false);
        await dead!.release(); // a no-op: it does not free the new holder's lease
        expect(await store.lock(name, { leaseMs: 100 })).toBeUndefined();
        await next!.release();
      }),
    );

    it(
      'a write fenced by a lease that was taken over is refused (StoreFencedError), nothing written; the new holder writes',
      withStore(async (store) => {
        const name = key('fenced');
        const k = key('fenced-value');
        const stale = await store.lock(name, { leaseMs: 100 });
        const written = await store.set(k, 'by the first holder', { fence: { lock: name, token: stale!.token } });
        expect(written.ok).toBe(true);
        const version = written.ok ? written.version : 0;
        // The first holder stalls past its lease; another takes the lock and writes.
        const next = await store.lock(name, { leaseMs: 5_000, waitMs: 5_000 });
        const late = store.set(k, 'stale', { ifVersion: version, fence: { lock: name, token: stale!.token } });
        await expect(late).rejects.toBeInstanceOf(StoreFencedError);
        await expect(late).rejects.toMatchObject({
          code: 'STORE_FENCED',
          token: stale!.token,
          newest: next!.token,
        });
        expect(await store.get(k)).toEqual({ value: 'by the first holder', version });
        const current = await store.set(k, 'by the new holder', {
          ifVersion: version,
          fence: { lock: name, token: next!.token },
        });
        expect(current.ok).toBe(true);
        // The new holder's lease ended without a successor: its token is still the newest.
        await next!.release();
        expect((await store.set(k, 'after release', { fence: { lock: name, token: next!.token } })).ok).toBe(true);
        // A lock never granted fences nothing; a bad fence is a typed error.
        expect((await store.set(k, 'unlocked', { fence: { lock: key('never'), token: 0 } })).ok).toBe(true);
        await expect(store.set(k, 'x', { fence: { lock: name, token: -1 } })).rejects.toThrow(ConfigError);
        await expect(store.set(k, 'x', { fence: { lock: '', token: 1 } })).rejects.toThrow(ConfigError);
        expect((await store.get(k))?.value).toBe('unlocked');
      }),
    );
  });
}
