/**
 * Healing against the SDK's stateless example (a new server and transport per request, no session
 * id, GET answered 405): nothing to expire, so a restart costs nothing, an outage is one
 * reconnect, and a broken answer follows the same replay rules. Counts are the server's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OutcomeUnknownError } from '../../../src/index.js';
import { startSdkExampleServer } from '../../../servers/sdk-example-server.js';
import { Cleanup } from '../../transports/helpers.js';
import { nextTransition } from '../helpers.js';
import { clientNoticesClose, connectTo, outcomes, path } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function stateless(jsonResponse: boolean) {
  const server = cleanup.add(await startSdkExampleServer({ stateless: true, jsonResponse }), (s) => s.close());
  const { handle, transitions } = await connectTo(cleanup, server.url);
  expect(handle.status().sessionId).toBeUndefined();
  return { server, handle, transitions };
}

describe.each([
  ['SSE', false],
  ['JSON', true],
])('a stateless SDK-example server (%s answers)', (_mode, jsonResponse) => {
  it('restarted: calls go on with no new initialize (there was no session to lose), each run once', async () => {
    const { server, handle, transitions } = await stateless(jsonResponse);
    await handle.callTool('echo', { text: 'before' });
    await server.restart();
    await clientNoticesClose();
    const results = await outcomes(Array.from({ length: 10 }, (_, i) => handle.callTool('echo', { text: `${i}` })));
    expect(results).toEqual(Array.from({ length: 10 }, (_, i) => `${i}`));
    expect(server.executions()['echo']).toBe(11);
    expect(server.requests()['initialize']).toBe(1);
    expect(path(transitions)).toEqual([]);
  });

  it('down, then back: status leaves ready, 10 concurrent calls wait, one reconnect, each call run once', async () => {
    const { server, handle, transitions } = await stateless(jsonResponse);
    await server.stop();
    await clientNoticesClose();
    const down = nextTransition(handle, (t) => t.to === 'reconnecting');
    const settled = outcomes(Array.from({ length: 10 }, (_, i) => handle.callTool('echo', { text: `${i}` })));
    await down;
    expect(handle.status().state).not.toBe('ready');
    await server.start();
    expect(await settled).toEqual(Array.from({ length: 10 }, (_, i) => `${i}`));
    expect(server.executions()['echo']).toBe(10);
    expect(server.requests()['initialize']).toBe(2);
    expect(path(transitions).filter((p) => p === 'ready->reconnecting')).toHaveLength(1);
  });

  it('an answer lost mid-response: the read-only tool runs twice and answers; the increment runs once and says the outcome is unknown', async () => {
    const { server, handle } = await stateless(jsonResponse);
    await handle.listTools();
    server.resetNextResponse('lookup');
    expect(await outcomes([handle.callTool('lookup', { key: 'a' })])).toEqual(['no a']);
    expect(server.executions()['lookup']).toBe(2);

    server.resetNextResponse('increment');
    const error = await handle.callTool('increment').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as OutcomeUnknownError).retryable).toBe(true);
    expect(server.executions()['increment']).toBe(1);
    expect(await outcomes([handle.callTool('echo', { text: 'next' })])).toEqual(['next']);
  });
});
