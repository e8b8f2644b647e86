import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { redisStore } from '../../src/store/redis/index.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { describeStoreContract } from './store-contract.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(() => redis?.stop());

describeStoreContract('redisStore()', async () => redisStore({ url: redis.url, prefix: `t${Math.random()}:` }));

describe('redisStore(): faults', () => {
  it('bad options are a ConfigError', () => {
    expect(() => redisStore({} as never)).toThrow(ConfigError);
    expect(() => redisStore({ url: 'not a url' })).toThrow(/redis:\/\//);
  });

  it('Redis away: operations reject at once with StoreUnavailableError; they work again when it is back', async () => {
    const store = redisStore({ url: redis.url, prefix: 'faults:', timeoutMs: 500 });
    try {
      await store.set('k', 1);
      await redis.stop();
      const started = Date.now();
      await expect(store.get('k')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.lock('k', { leaseMs: 100 })).rejects.toThrow(/unavailable/);
      expect(Date.now() - started).toBeLessThan(3_000);
      await redis.start();
      // Redis came back empty (no persistence): the store works again.
      await expect
        .poll(() =>
          store.get('k').then(
            (entry) => entry ?? 'empty',
            () => 'down',
          ),
        )
        .toBe('empty');
      expect((await store.set('k', 2, { ifVersion: 0 })).ok).toBe(true);
    } finally {
      await store.close?.();
    }
  });

  it('connects as soon as it is made: the first operation does not pay for loading the client and connecting', async () => {
    const { createClient } = await import('redis');
    const watcher = createClient({ url: redis.url });
    watcher.on('error', () => undefined);
    await watcher.connect();
    const clients = async () => (await watcher.clientList()).length;
    const before = await clients();
    const store = redisStore({ url: redis.url, prefix: 'eager:' });
    try {
      // No operation yet: its connection is there (or on its way) all the same.
      await expect.poll(clients, { timeout: 15_000 }).toBe(before + 1);
    } finally {
      await store.close?.();
      await watcher.close();
    }
  });

  it('a given client is used and left open by close()', async () => {
    const { createClient } = await import('redis');
    const client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
    const store = redisStore({ client: client, prefix: 'given:' });
    await store.set('k', { a: 1 });
    expect(await client.hGet('given:entry:k', 'v')).toBe('{"a":1}');
    await store.close?.();
    expect(client.isOpen).toBe(true);
    await client.close();
  });
});
