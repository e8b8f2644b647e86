/**
 * A slow server slows its own requests, never the next ones (issue #21): a request that times
 * out or is aborted releases its HTTP exchange at once, so a server that trickles its answers
 * cannot hold the origin's 128 message sockets, and a new handshake never queues behind them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RequestAbortedError, RequestTimeoutError } from '../../../src/index.js';
import { Cleanup, fixture, handshake, open, rejection, transportTo, until } from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** More than the 128 connections of an origin's message pool (src/transports/pool.ts). */
const MORE_THAN_THE_POOL = 140;

describe.each(['json', 'sse'] as const)('a server that trickles its answers (%s)', (responseMode) => {
  it('times out each trickling call, frees every socket at once, then answers a normal call in time', async () => {
    const f = await fixture(cleanup, { responseMode });
    const { handle } = await open(cleanup, f.url);
    const slow = Array.from({ length: MORE_THAN_THE_POOL }, () =>
      rejection(handle.callTool('trickle', { everyMs: 50 }, { timeoutMs: 4_000 })),
    );
    // The server holds at most the pool's 128 at a time; the rest wait in undici's queue. (The
    // deadline leaves a busy machine time to open all 128 before the first call times out.)
    await until(() => f.trickling() === 128, 4_000);
    for (const error of await Promise.all(slow)) expect(error).toBeInstanceOf(RequestTimeoutError);
    // Released at the deadline, not when the server gives up: nothing trickles any more.
    await until(() => f.trickling() === 0);
    const answer = await handle.callTool('echo', { text: 'in time' }, { timeoutMs: 2_000 });
    expect(answer.content[0]!.text).toBe('in time');
    expect(handle.status().state).toBe('ready');
  });

  it('releases the exchange of a call its caller aborts', async () => {
    const f = await fixture(cleanup, { responseMode });
    const { handle } = await open(cleanup, f.url);
    const controller = new AbortController();
    const call = rejection(
      handle.callTool('trickle', { everyMs: 50 }, { timeoutMs: 60_000, signal: controller.signal }),
    );
    await until(() => f.trickling() === 1);
    controller.abort();
    expect(await call).toBeInstanceOf(RequestAbortedError);
    await until(() => f.trickling() === 0);
  });
});

describe('a new handshake', () => {
  it('does not queue behind exchanges still in flight on the message pool', async () => {
    const f = await fixture(cleanup);
    const { transport, sink } = transportTo(cleanup, f.url, { requestTimeoutMs: 60_000 });
    await handshake(transport, sink);
    // Every message socket of the origin held by an answer that never completes.
    const stuck = Array.from({ length: MORE_THAN_THE_POOL }, (_, i) =>
      transport
        .send({ jsonrpc: '2.0', id: 90_000 + i, method: 'tools/call', params: { name: 'trickle', arguments: {} } })
        .catch(() => {}),
    );
    await until(() => f.trickling() === 128);
    // A reconnect's handshake on the same transport and origin. The stuck answers never end (they
    // outlive the test), so a handshake queued behind them would never resolve.
    await expect(handshake(transport, sink)).resolves.toBe('2025-11-25');
    expect(f.trickling()).toBe(128);
    await transport.close();
    await Promise.all(stuck);
  });
});
