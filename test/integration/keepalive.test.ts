/**
 * The keepalive child against a real server: probes while idle, skips while requests are in
 * flight, falls back to a list request for servers without ping, and declares a silent server
 * dead after maxMissed probes so the supervisor reconnects it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type ServerHandle } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { nextTransition, quickRestart, rpcPosts } from './helpers.js';

let fixture: HttpFixture | undefined;
let handle: ServerHandle | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await fixture?.close();
  handle = undefined;
  fixture = undefined;
});

const fast = { intervalMs: 40, timeoutMs: 200, maxMissed: 2 };

/** Resolves once `predicate` holds, checked on each turn of the event loop. */
function until(predicate: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const check = () => {
      if (predicate()) resolve();
      else if (Date.now() > deadline) reject(new Error('condition never held'));
      else setImmediate(check);
    };
    check();
  });
}

/** Resolves once the fixture has seen `count` requests of `rpcMethod`. */
function seen(f: HttpFixture, rpcMethod: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const check = () => {
      if (rpcPosts(f, rpcMethod).length >= count) resolve();
      else if (Date.now() > deadline) reject(new Error(`fewer than ${count} ${rpcMethod} requests`));
      else setImmediate(check);
    };
    check();
  });
}

describe('keepalive', () => {
  it('pings an idle server every intervalMs and reports the round trip in status()', async () => {
    fixture = await startHttpFixture();
    handle = await connect({ url: fixture.url, keepalive: fast }, { name: 'ka' });
    await seen(fixture, 'ping', 2);
    expect(handle.status().keepalive.missed).toBe(0);
    expect(handle.status().keepalive.lastRttMs).toEqual(expect.any(Number));
    expect(handle.status().state).toBe('ready');
  });

  it('sends no ping while a request is in flight, and pings again once it settled', async () => {
    const server = (fixture = await startHttpFixture());
    const client = (handle = await connect({ url: server.url, keepalive: fast }, { name: 'ka' }));
    await seen(server, 'ping', 1);
    // No probe of ours is on its way now (probes count as in flight): every ping the server sees
    // after the call arrived was sent while the call was in flight.
    await until(() => client.status().requests.inFlight === 0);
    const call = client.callTool('slow', { ms: 400 }); // ten keepalive intervals
    expect(client.status().requests.inFlight).toBe(1);
    await call;
    const posts = rpcPosts(server);
    const callArrived = posts.findIndex((r) => r.rpcMethod === 'tools/call');
    expect(posts.slice(callArrived + 1).filter((r) => r.rpcMethod === 'ping')).toEqual([]);
    // Not a keepalive that stopped altogether: the probes resume.
    await seen(server, 'ping', rpcPosts(server, 'ping').length + 1);
  });

  it('probes a server that answers ping with -32601 with a list request instead', async () => {
    fixture = await startHttpFixture();
    fixture.faults.pingUnsupported = true;
    handle = await connect({ url: fixture.url, keepalive: fast }, { name: 'ka' });
    await seen(fixture, 'tools/list', 2);
    expect(rpcPosts(fixture, 'ping')).toHaveLength(1);
    expect(handle.status().keepalive.missed).toBe(0);
    expect(handle.status().state).toBe('ready');
  });

  it('declares a server that stops answering dead after maxMissed probes; the supervisor reconnects it', async () => {
    fixture = await startHttpFixture();
    handle = await connect({ url: fixture.url, keepalive: fast, restart: quickRestart(5) }, { name: 'ka' });
    fixture.faults.silentPings = true;
    const lost = await nextTransition(handle, (t) => t.to === 'reconnecting');
    expect(lost.cause).toBe('connection lost');
    expect(lost.error).toMatch(/2 keepalive probes in a row got no answer/);
    fixture.faults.silentPings = false;
    await nextTransition(handle, (t) => t.to === 'ready');
    expect((await handle.callTool('echo', { text: 'back' })).content[0]?.text).toBe('back');
    expect(handle.status().restarts).toBe(1);
  });
});
