/**
 * Interoperability with servers built on the official SDK (McpServer + StreamableHTTPServerTransport),
 * stateful and stateless, answering with SSE or with JSON.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSdkServer, type SdkServerOptions } from '../../../servers/sdk-servers.js';
import { Cleanup, open } from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function sdkServer(options: SdkServerOptions) {
  return cleanup.add(await startSdkServer(options), (s) => s.close());
}

const modes = [
  { stateful: true, jsonResponse: false },
  { stateful: true, jsonResponse: true },
  { stateful: false, jsonResponse: false },
  { stateful: false, jsonResponse: true },
] as const;

describe.each(modes)(
  'SDK server (stateful: $stateful, JSON responses: $jsonResponse)',
  ({ stateful, jsonResponse }) => {
    it('connects, lists tools, calls echo and add, and closes', async () => {
      const server = await sdkServer({ stateful, jsonResponse });
      const { handle } = await open(cleanup, server.url);
      const status = handle.status();
      expect(status.state).toBe('ready');
      expect(status.transport).toBe('http');
      expect(status.serverInfo).toMatchObject({ name: 'sdk-fixture' });
      expect(status.protocolVersion).toBe('2025-11-25');
      expect(status.sessionId).toBe(stateful ? '[redacted]' : undefined);
      if (stateful) expect(server.sessionCount()).toBe(1);

      const tools = await handle.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(['add', 'countdown', 'echo']);
      expect(await handle.callTool('echo', { text: 'hello sdk' })).toMatchObject({
        content: [{ type: 'text', text: 'hello sdk' }],
      });
      expect(await handle.callTool('add', { a: 2, b: 40 })).toMatchObject({ content: [{ type: 'text', text: '42' }] });
      await expect(handle.request('ping')).resolves.toEqual({});
      await expect(handle.notify('notifications/roots/list_changed')).resolves.toBeUndefined();

      await handle.close();
      expect(server.sessionCount()).toBe(0);
    });

    it('reports a tool error as a result with isError, and bad arguments without breaking the connection', async () => {
      const server = await sdkServer({ stateful, jsonResponse });
      const { handle } = await open(cleanup, server.url);
      const bad = await handle.callTool('add', { a: 'two', b: 40 }).catch((error: unknown) => error);
      // the SDK answers invalid arguments either with isError or with a JSON-RPC error, depending on version
      if (bad instanceof Error) expect(bad.name).toBe('McpError');
      else expect(bad).toMatchObject({ isError: true });
      expect(await handle.callTool('add', { a: 1, b: 1 })).toMatchObject({ content: [{ text: '2' }] });
    });
  },
);

describe('SDK server sessions', () => {
  it('§41 a stateful SDK server that dropped the session (404) gets a new initialize and the call succeeds', async () => {
    const server = await sdkServer({ stateful: true });
    const { handle, transitions } = await open(cleanup, server.url);
    await server.terminateAllSessions();
    expect(server.sessionCount()).toBe(0);
    expect(await handle.callTool('echo', { text: 'again' })).toMatchObject({ content: [{ text: 'again' }] });
    expect(server.sessionCount()).toBe(1);
    expect(transitions.map((t) => t.to)).toEqual(['expired', 'reinitializing', 'ready']);
  });

  it('§40 a server that answers 400 naming the session for an unknown session id: one re-initialize, the call is answered', async () => {
    const server = await sdkServer({ stateful: true, unknownSessionStatus: 400 });
    const { handle, transitions } = await open(cleanup, server.url, { requestTimeoutMs: 30_000 });
    await server.terminateAllSessions();
    expect(await handle.callTool('echo', { text: 'x' })).toMatchObject({ content: [{ text: 'x' }] });
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual([
      'ready->expired',
      'expired->reinitializing',
      'reinitializing->ready',
    ]);
    expect(transitions[0]!.cause).toBe('session expired (HTTP 400 naming the session)');
    expect(server.sessionCount()).toBe(1);
  });

  it('§24 the stateless SDK server answers GET with 405: no listening stream, still ready', async () => {
    const server = await sdkServer({ stateful: false });
    const { handle, transitions } = await open(cleanup, server.url);
    expect(handle.status().state).toBe('ready');
    expect(transitions).toEqual([]);
    expect(await handle.callTool('echo', { text: 'stateless' })).toMatchObject({ content: [{ text: 'stateless' }] });
  });
});
