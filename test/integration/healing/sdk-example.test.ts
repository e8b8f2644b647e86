/**
 * Healing against a server written like the official SDK's 2025 examples (servers/sdk-example-server.ts):
 * restarted (400 "No valid session ID provided" for the old session), down for a while, and a
 * connection that breaks after a tool ran. Counts are taken on the server: nothing lost, nothing
 * run twice that should not be.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  OutcomeUnknownError,
  RequestTimeoutError,
  type ServerHandle,
  type TransitionEvent,
} from '../../../src/index.js';
import { startSdkExampleServer, type SdkExampleServer } from '../../../servers/sdk-example-server.js';
import { nextTransition } from '../helpers.js';

let server: SdkExampleServer | undefined;
let handle: ServerHandle | undefined;
afterEach(async () => {
  await handle?.close().catch(() => {});
  await server?.close();
  handle = undefined;
  server = undefined;
});

/**
 * The client learns that the server closed its keep-alive sockets on its next turn of the event
 * loop. A call written in the same tick as the close goes out on a dead socket: its outcome is
 * unknown (the server may have read it before it died), which is a different test. A real restart
 * takes longer than a tick.
 */
function clientNoticesClose(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

const FAST_RESTART = { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } };

async function open(options: { keepalive?: false; jsonResponse?: boolean } = {}) {
  server = await startSdkExampleServer({ jsonResponse: options.jsonResponse });
  const transitions: TransitionEvent[] = [];
  handle = await connect(
    { url: server.url, restart: FAST_RESTART, keepalive: options.keepalive ?? false, requestTimeoutMs: 5_000 },
    { name: 'example' },
  );
  handle.on('transition', (e) => transitions.push(e));
  return { server, handle, transitions };
}

describe('a server restarted (400 "No valid session ID provided")', () => {
  it.each([
    ['SSE', false],
    ['JSON', true],
  ])(
    '%s answers: one re-initialize, the refused calls replayed once, every call answered',
    async (_mode, jsonResponse) => {
      const { server, handle, transitions } = await open({ jsonResponse });
      await handle.callTool('echo', { text: 'before' });
      await server.restart();
      await clientNoticesClose();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => handle.callTool('echo', { text: `after ${i}` })),
      );
      expect(results.map((r) => r.content[0]?.['text'])).toEqual(Array.from({ length: 10 }, (_, i) => `after ${i}`));
      expect(server.requests()['initialize']).toBe(2);
      expect(server.executions()['echo']).toBe(11); // each call ran once
      expect(transitions.map((t) => `${t.from}->${t.to}`)).toContain('ready->expired');
      expect(transitions.find((t) => t.to === 'expired')!.cause).toBe('session expired (HTTP 400 naming the session)');
    },
  );
});

describe('a server that is down', () => {
  it('status leaves ready at once; a call waits and is answered when the server is back, with one reconnect', async () => {
    const { server, handle } = await open();
    await server.stop();
    await clientNoticesClose();
    const down = nextTransition(handle, (t) => t.to === 'reconnecting');
    const calls = Array.from({ length: 5 }, (_, i) => handle.callTool('echo', { text: `while down ${i}` }));
    await down;
    expect(handle.status().state).not.toBe('ready');
    await server.start();
    const results = await Promise.all(calls);
    expect(results).toHaveLength(5);
    expect(server.executions()['echo']).toBe(5);
    expect(server.requests()['initialize']).toBe(2);
  });

  it('a call whose own timeout passes while the server is down fails with RequestTimeoutError', async () => {
    const { server, handle } = await open();
    await server.stop();
    await clientNoticesClose();
    const error = await handle.callTool('echo', { text: 'x' }, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    await server.start();
  });
});

describe('the connection breaks after the tool ran', () => {
  it('a read-only tool is replayed and answered once to the caller; a non-idempotent one rejects with OutcomeUnknownError and is not repeated', async () => {
    const { server, handle } = await open();
    await handle.listTools(); // the runtime learns the annotations
    server.resetNextResponse('lookup');
    expect((await handle.callTool('lookup', { key: 'a' })).content[0]).toMatchObject({ text: 'no a' });
    expect(server.executions()['lookup']).toBe(2);

    server.resetNextResponse('increment');
    const error = await handle.callTool('increment').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as OutcomeUnknownError).retryable).toBe(true);
    expect(server.executions()['increment']).toBe(1);

    server.resetNextResponse('increment');
    expect((await handle.callTool('increment', {}, { retry: 'always' })).content[0]).toMatchObject({ text: '3' });
    expect(server.executions()['increment']).toBe(3);

    server.resetNextResponse('upsert');
    await handle.callTool('upsert', { key: 'k', value: 'v' });
    expect(server.executions()['upsert']).toBe(2);

    server.resetNextResponse('lookup');
    const never = await handle.callTool('lookup', { key: 'k' }, { retry: 'never' }).catch((e: unknown) => e);
    expect(never).toBeInstanceOf(OutcomeUnknownError);
  });
});
