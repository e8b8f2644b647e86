/**
 * One keep-alive undici Pool per origin, shared by every transport to that origin and closed
 * when the last one lets go (DESIGN §4).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { acquirePool, releasePool } from '../../src/transports/pool.js';
import { call, Cleanup, fixture, handshake, open, transportTo } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('connection pools', () => {
  it('two transports to the same origin share one Pool; another origin gets its own', async () => {
    const f = await fixture(cleanup);
    const other = await fixture(cleanup);
    const a = transportTo(cleanup, f.url);
    const b = transportTo(cleanup, f.url.replace('/mcp', '/mcp?tenant=b'));
    const c = transportTo(cleanup, other.url);
    expect(a.transport.pool).toBe(b.transport.pool);
    expect(c.transport.pool).not.toBe(a.transport.pool);
  });

  it('the shared Pool stays open while one transport still uses it, and a new one is made after the last lets go', async () => {
    const f = await fixture(cleanup);
    const a = transportTo(new Cleanup(), f.url);
    const b = transportTo(cleanup, f.url);
    const shared = a.transport.pool;
    await a.transport.close();
    expect(shared.destroyed).toBe(false);
    await handshake(b.transport, b.sink);
    expect(await call(b.transport, b.sink, 'ping')).toMatchObject({ result: {} });
    await b.transport.close();
    expect(shared.destroyed).toBe(true);
    const fresh = acquirePool(new URL(f.url).origin);
    expect(fresh).not.toBe(shared);
    await releasePool(new URL(f.url).origin);
  });

  it('closing a transport twice releases its share of the Pool only once', async () => {
    const f = await fixture(cleanup);
    const a = transportTo(new Cleanup(), f.url);
    const b = transportTo(cleanup, f.url);
    await a.transport.close();
    await a.transport.close();
    expect(b.transport.pool.destroyed).toBe(false);
    await handshake(b.transport, b.sink);
    expect(await call(b.transport, b.sink, 'ping')).toMatchObject({ result: {} });
  });

  it('closing one of two connections to the same server leaves the other working', async () => {
    const f = await fixture(cleanup);
    const first = await open(cleanup, f.url, {}, { name: 'first' });
    const second = await open(cleanup, f.url, {}, { name: 'second' });
    await first.handle.close();
    expect((await second.handle.callTool('echo', { text: 'alive' })).content[0]!.text).toBe('alive');
    expect(f.sessions.size).toBe(1);
  });
});
