/**
 * The supervisor and the request gate against real servers: requests held before ready, fail
 * fast once failed or closed, restarts under the restart policy, isolation between servers.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  ConnectionClosedError,
  createSupervisor,
  QueueFullError,
  RequestTimeoutError,
  TransportError,
  type Supervisor,
} from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { nextTransition, quickRestart, recordTransitions, refusingUrl, rpcPosts } from './helpers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

async function fixture(options?: Parameters<typeof startHttpFixture>[0]): Promise<HttpFixture> {
  const f = await startHttpFixture(options);
  cleanups.push(() => f.close());
  return f;
}

function supervise(servers: Parameters<typeof createSupervisor>[0]['servers']): Supervisor {
  const sup = createSupervisor({ servers, random: () => 0.5 });
  cleanups.push(() => sup.stop());
  return sup;
}

describe('requests before ready', () => {
  it('are held and sent once the server is ready', async () => {
    const f = await fixture();
    const sup = supervise({ a: { url: f.url } });
    const early = sup.server('a').callTool('echo', { text: 'early' });
    expect(sup.server('a').status().requests.waiting).toBe(1);
    await sup.start();
    expect((await early).content[0]?.text).toBe('early');
    // It went out after the handshake, never before.
    const order = rpcPosts(f).map((r) => r.rpcMethod);
    expect(order.indexOf('tools/call')).toBeGreaterThan(order.indexOf('notifications/initialized'));
  });

  it('wait in a bounded queue: past maxQueuedRequests they fail with QueueFullError', async () => {
    const f = await fixture();
    const sup = supervise({ a: { url: f.url, maxQueuedRequests: 2 } });
    const held = [sup.server('a').callTool('echo', { text: '1' }), sup.server('a').callTool('echo', { text: '2' })];
    await expect(sup.server('a').callTool('echo', { text: '3' })).rejects.toBeInstanceOf(QueueFullError);
    await sup.start();
    expect((await Promise.all(held)).map((r) => r.content[0]?.text)).toEqual(['1', '2']);
  });

  it('time out while held with RequestTimeoutError, and nothing goes on the wire for them', async () => {
    const url = await refusingUrl();
    const sup = supervise({ a: { url, restart: quickRestart(50) } });
    const start = sup.start();
    await expect(sup.server('a').callTool('echo', { text: 'x' }, { timeoutMs: 30 })).rejects.toBeInstanceOf(
      RequestTimeoutError,
    );
    await start;
  });
});

describe('failed and closed servers fail fast', () => {
  it('with revive: false, a server whose restart budget is spent ends in failed for good; requests then reject at once with the reason', async () => {
    const url = await refusingUrl();
    const sup = supervise({ down: { url, restart: quickRestart(2), revive: false } });
    const transitions = recordTransitions(sup);
    const failed = nextTransition(sup, (t) => t.to === 'failed');
    await sup.start();
    const event = await failed;
    expect(event.cause).toBe('restart budget spent');
    expect(event.error).toMatch(/ECONNREFUSED/);
    expect(sup.status().down).toMatchObject({ state: 'failed', restarts: 2 });
    expect(transitions.filter((t) => t.to === 'connecting')).toHaveLength(3);
    const error = await sup
      .server('down')
      .callTool('echo', {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as Error).message).toMatch(/failed: .*ECONNREFUSED/);
  });

  it('after close, requests reject with ConnectionClosedError and the session was deleted', async () => {
    const f = await fixture();
    const handle = await connect({ url: f.url }, { name: 'a' });
    const slow = handle.callTool('slow', { ms: 2_000 }).catch((e: unknown) => e);
    await handle.close();
    expect(await slow).toBeInstanceOf(ConnectionClosedError);
    await expect(handle.callTool('echo', { text: 'x' })).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(f.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
    expect(f.sessions.size).toBe(0);
    expect(handle.status().state).toBe('closed');
  });
});

describe('connect()', () => {
  it('rejects with the typed error of the first attempt and leaves nothing running', async () => {
    const url = await refusingUrl();
    const error = await connect({ url }, { name: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBeUndefined();
    expect((error as TransportError).retryable).toBe(true);
  });

  it('reports every lifecycle change as { server, from, to, cause }', async () => {
    const f = await fixture();
    const sup = supervise({ a: { url: f.url, protocolVersion: 'legacy' } });
    const transitions = recordTransitions(sup);
    await sup.start();
    expect(transitions.map((t) => [t.server, t.from, t.to, t.cause])).toEqual([
      ['a', null, 'connecting', 'start'],
      ['a', 'connecting', 'initializing', 'transport ready'],
      ['a', 'initializing', 'ready', 'initialized'],
    ]);
  });
});

describe('restarts', () => {
  it('a server that is down at start is restarted with backoff and becomes ready when it comes up', async () => {
    const url = await refusingUrl();
    const port = Number(new URL(url).port);
    const sup = supervise({ late: { url, restart: quickRestart(1_000) } });
    await sup.start();
    expect(sup.status().late?.state).not.toBe('ready');

    // Bring a server up on that very port.
    const f = await startHttpFixture();
    cleanups.push(() => f.close());
    const proxy: Server = createHttpServer((req, res) => {
      const target = new URL(f.url);
      const forward = fetch(new URL(req.url ?? '/', target), {
        method: req.method,
        headers: req.headers as Record<string, string>,
        body: req.method === 'POST' ? req : undefined,
        duplex: 'half',
      });
      forward
        .then(async (upstream) => {
          res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
          if (upstream.body) for await (const chunk of upstream.body) res.write(chunk);
          res.end();
        })
        .catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise((resolve) => {
          proxy.closeAllConnections();
          proxy.close(resolve);
        }),
    );

    await nextTransition(sup, (t) => t.to === 'ready');
    expect((await sup.server('late').callTool('echo', { text: 'up' })).content[0]?.text).toBe('up');
    expect(sup.status().late?.restarts).toBeGreaterThanOrEqual(1);
  });

  it('one server failing never touches another', async () => {
    const f = await fixture();
    const url = await refusingUrl();
    // revive: false keeps `bad` in failed (revival would try it again after 1 s, and a busy machine
    // can take that long to reach the last line).
    const sup = supervise({ good: { url: f.url }, bad: { url, restart: quickRestart(1), revive: false } });
    // Before start: `bad` may reach failed while `good` is still starting, before start() resolves.
    const badFailed = nextTransition(sup, (t) => t.server === 'bad' && t.to === 'failed');
    await sup.start();
    await badFailed;
    expect(sup.status().good).toMatchObject({ state: 'ready', restarts: 0, lastError: undefined });
    expect((await sup.server('good').callTool('echo', { text: 'fine' })).content[0]?.text).toBe('fine');
    expect(sup.status().bad?.state).toBe('failed');
  });

  it('a connection actor that throws (a bug, here in an inspector) fails its server only, and stop() still ends', async () => {
    const f = await fixture();
    const errors: string[] = [];
    const sup = createSupervisor({
      servers: { good: { url: f.url }, bad: { url: f.url } },
      inspect: (event) => {
        const handshake = event.type === '@xstate.microstep' && event.event.type === 'xstate.done.actor.handshake';
        if (handshake && (event.actorRef as { id?: string }).id === 'bad') throw new Error('inspector bug');
      },
    });
    cleanups.push(() => sup.stop());
    sup.on('transition', (t) => {
      if (t.server === 'bad') errors.push(`${t.to}: ${t.cause}`);
    });
    await sup.start();
    expect(sup.status().bad).toMatchObject({ state: 'failed' });
    expect(sup.status().bad?.lastError).toContain('inspector bug');
    expect(errors.at(-1)).toBe('failed: crashed');
    await expect(sup.server('bad').callTool('echo', { text: 'x' })).rejects.toThrow(/inspector bug/);
    expect(sup.status().good).toMatchObject({ state: 'ready', restarts: 0 });
    expect((await sup.server('good').callTool('echo', { text: 'fine' })).content[0]?.text).toBe('fine');
    await sup.stop();
    expect(sup.status().good?.state).toBe('closed');
  });

  it('a connection actor that throws while ready (its listening stream handed over) fails the server, closes the stream, and the reconnect() that met the crash settles', async () => {
    const f = await fixture();
    let armed = false;
    const sup = createSupervisor({
      servers: { bad: { url: f.url } },
      inspect: (event) => {
        if (armed && event.type === '@xstate.microstep' && event.event.type === 'RECONNECT')
          throw new Error('inspector bug');
      },
    });
    cleanups.push(() => sup.stop());
    await sup.start();
    // The listener hands its open stream over to the connection and is stopped.
    await expect.poll(() => f.getStreamCount()).toBe(1);
    armed = true;
    // It waited for the attempt's outcome: the crash is one (it hung before).
    await sup
      .server('bad')
      .reconnect()
      .catch(() => {});
    await expect.poll(() => sup.status().bad?.state).toBe('failed');
    expect(sup.status().bad?.lastError).toContain('inspector bug');
    await expect.poll(() => f.getStreamCount()).toBe(0);
  });

  it('stop() closes every server: DELETE for live sessions, all handles closed', async () => {
    const f1 = await fixture();
    const f2 = await fixture();
    const sup = createSupervisor({ servers: { one: { url: f1.url }, two: { url: f2.url } } });
    await sup.start();
    await sup.server('one').close();
    await sup.stop();
    expect(Object.values(sup.status()).map((s) => s.state)).toEqual(['closed', 'closed']);
    expect(f1.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
    expect(f2.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
  });

  it('stop() of all: each server moves to closing then closed with the usual causes, what is in flight or waiting fails typed, no socket is left', async () => {
    const sockets = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;
    const before = sockets();
    const f = await startHttpFixture();
    const down = await refusingUrl();
    const sup = createSupervisor({ servers: { a: { url: f.url }, b: { url: down, restart: quickRestart(1_000) } } });
    // Closed by the test itself (the sockets are counted after); these only clean up a failure.
    cleanups.push(
      () => f.close(),
      () => sup.stop(),
    );
    await sup.start();
    await expect.poll(() => f.getStreamCount()).toBe(1);
    const seen = recordTransitions(sup);
    const inFlight = sup
      .server('a')
      .callTool('slow', { ms: 5_000 })
      .catch((e: unknown) => e);
    await expect.poll(() => f.concurrency.now).toBe(1);
    // b is down: its call waits in the gate for a reconnection that stop() ends.
    const waiting = sup
      .server('b')
      .callTool('echo', { text: 'y' })
      .catch((e: unknown) => e);
    await sup.stop();
    expect(await inFlight).toBeInstanceOf(ConnectionClosedError);
    expect(await waiting).toBeInstanceOf(ConnectionClosedError);
    const moves = (server: string) =>
      seen.filter((e) => e.server === server).map((e) => `${e.to}: ${e.cause}${e.error ? ' ' + e.error : ''}`);
    expect(moves('a')).toEqual(['closing: close requested', 'closed: closed']);
    expect(moves('b').slice(-2)).toEqual(['closing: close requested', 'closed: closed']);
    expect(sup.status()).toMatchObject({ a: { state: 'closed' }, b: { state: 'closed' } });
    expect(f.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
    await expect(sup.server('a').callTool('echo', { text: 'x' })).rejects.toBeInstanceOf(ConnectionClosedError);
    await f.close();
    await expect.poll(sockets).toBe(before);
  });
});

describe('status() of all', () => {
  it('is the same frozen object while nothing changed, and a new one at once after any change', async () => {
    const f = await fixture();
    const sup = supervise({ a: { url: f.url }, b: { url: f.url, disabled: true } });
    // Read while a move is told: the status says the state moved to, never the one before (a
    // server being disabled has left status() already).
    const seen: string[] = [];
    sup.on('transition', (event) => {
      const state = sup.status()[event.server]?.state;
      if (state !== 'disabled' && state !== undefined) seen.push(`${event.to}:${state}`);
    });
    await sup.start();
    const first = sup.status();
    expect(sup.status()).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.a) && Object.isFrozen(first.a?.requests)).toBe(true);
    expect(first.b?.state).toBe('disabled');
    // A handle's own status is a copy the caller may change.
    expect(Object.isFrozen(sup.server('a').status())).toBe(false);

    sup.enable('b');
    const enabled = sup.status();
    expect(enabled).not.toBe(first);
    expect(enabled.b?.state).not.toBe('disabled');
    expect(enabled.a).toBe(first.a);

    await sup.server('a').close();
    expect(sup.status().a?.state).toBe('closed');
    await sup.disable('b');
    expect(sup.status()).toMatchObject({ a: { state: 'closed' }, b: { state: 'disabled' } });
    expect(seen.length).toBeGreaterThan(3);
    for (const entry of seen) expect(entry.split(':')[0]).toBe(entry.split(':')[1]);
  });

  it('follows the machine children too: a keepalive round trip shows without any other change', async () => {
    const f = await fixture();
    const sup = supervise({ a: { url: f.url, keepalive: { intervalMs: 30, timeoutMs: 500, maxMissed: 2 } } });
    await sup.start();
    const before = sup.status().a?.keepalive.lastRttMs;
    await expect.poll(() => sup.status().a?.keepalive.lastRttMs !== before).toBe(true);
  });
});

describe('a start of more servers than start() takes at once (256)', () => {
  it('each serves once start() resolves; the listening streams open after the last handshake, all of them', async () => {
    const f = await fixture();
    const n = 260;
    const sup = supervise(Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, { url: f.url }])));
    await sup.start();
    expect(Object.values(sup.status()).filter((s) => s.state !== 'ready')).toEqual([]);
    expect((await sup.server('s0').callTool('echo', { text: 'served' })).content[0]?.text).toBe('served');
    await expect.poll(() => f.getStreamCount(), { timeout: 10_000 }).toBe(n);
    // No listening GET went out while a handshake was still to be made (src/listen-turn.ts).
    const methods = f.requests.map((r) => r.rpcMethod ?? r.method);
    expect(methods.filter((m) => m === 'GET')).toHaveLength(n);
    expect(methods.indexOf('GET')).toBeGreaterThan(methods.lastIndexOf('notifications/initialized'));
  });
});
