/**
 * One keep-alive undici Pool per origin, shared by every transport to that origin and closed
 * when the last one lets go (DESIGN §4).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { acquirePool, hasRoom, releasePool } from '../../src/transports/pool.js';
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

  it("lets go of the clients whose sockets closed idle (a start's burst), and makes a new one when needed", async () => {
    const held: ServerResponse[] = [];
    // Answers the first six together, so that they hold six sockets at once; later requests at once.
    let first = 6;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/one' || first === 0) return void res.end('ok');
      held.push(res);
      if (--first === 0) for (const waiting of held.splice(0)) waiting.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.add(server, (s) => new Promise<void>((resolve) => s.close(() => resolve())));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const pool = acquirePool(origin);
    cleanup.add(origin, releasePool);
    // undici's own list of the pool's clients.
    const { kClients } = createRequire(import.meta.url)('undici/lib/dispatcher/pool-base.js') as { kClients: symbol };
    const clients = () => (pool as unknown as Record<symbol, unknown[]>)[kClients]!.length;

    // Six requests at once: six clients, each with its socket.
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => pool.request({ path: '/', method: 'GET' }).then((r) => r.body.text())),
    );
    expect(answers).toEqual(Array(6).fill('ok'));
    expect(clients()).toBeGreaterThanOrEqual(6);

    // Their sockets close idle (here the server closes them): the clients go with them (undici may
    // have made one more that never connected, and so never disconnects: it is the next one used).
    server.closeIdleConnections();
    await expect.poll(clients).toBeLessThanOrEqual(1);
    expect(hasRoom(pool), 'the pool is not left marked busy').toBe(true);
    const { body } = await pool.request({ path: '/one', method: 'GET' });
    expect(await body.text()).toBe('ok');
    expect(clients()).toBeLessThanOrEqual(2);
  });
});
