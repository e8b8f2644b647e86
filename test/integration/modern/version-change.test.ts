/**
 * A modern server that changes the versions it speaks while the client runs (an upgrade behind
 * the same URL): a -32022 on an ordinary request sends the connection back to `discovering`.
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, McpError, type Supervisor } from '../../../src/index.js';
import { listenOnLoopback, readBody, type Listening } from '../../../servers/listen.js';
import { nextTransition } from '../helpers.js';

let supervisor: Supervisor | undefined;
let listening: Listening | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await listening?.close();
  supervisor = listening = undefined;
});

/** A modern server speaking `supported` (mutable); it refuses any other version with -32022. */
async function modernServer(supported: string[], refuseCallsListing?: string[]) {
  const methods: string[] = [];
  const http = createServer((req, res) => {
    void readBody(req).then((text) => {
      const message = JSON.parse(text) as { id: number; method: string; params: { _meta: Record<string, unknown> } };
      methods.push(message.method);
      const version = message.params._meta['io.modelcontextprotocol/protocolVersion'];
      const reply = (status: number, body: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...body }));
      };
      if (!supported.includes(String(version)))
        return reply(400, {
          error: { code: -32022, message: 'Unsupported protocol version', data: { supported, requested: version } },
        });
      if (refuseCallsListing && message.method === 'tools/call')
        return reply(400, {
          error: {
            code: -32022,
            message: 'Unsupported protocol version',
            data: { supported: refuseCallsListing, requested: version },
          },
        });
      if (message.method === 'server/discover')
        return reply(200, {
          result: { resultType: 'complete', supportedVersions: supported, capabilities: { tools: {} } },
        });
      return reply(200, { result: { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] } });
    });
  });
  listening = await listenOnLoopback(http);
  supervisor = createSupervisor({
    servers: { up: { url: `${listening.origin}/mcp`, keepalive: false, restart: { maxRestarts: 0 }, revive: false } },
  });
  await supervisor.start();
  return { handle: supervisor.server('up'), methods };
}

describe('a modern server that changes its versions', () => {
  it('a -32022 on a call sends the connection back to discovering; no shared version left: failed, naming the versions', async () => {
    const supported = ['2026-07-28'];
    const { handle, methods } = await modernServer(supported);
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'modern' });
    supported.splice(0, 1, '2099-01-01');
    const rediscovering = nextTransition(handle, (t) => t.to === 'discovering');
    const call = handle.callTool('echo', {});
    expect((await rediscovering).cause).toMatch(/protocol version no longer supported \(-32022\)/);
    await expect(call).rejects.toThrow(/2099-01-01/);
    expect(handle.status().state).toBe('failed');
    expect(methods).toEqual(['server/discover', 'tools/call', 'server/discover']);
  });

  it('a -32022 that still lists our version is the call’s own error (McpError): no rediscovery loop', async () => {
    const { handle, methods } = await modernServer(['2026-07-28'], ['2026-07-28']);
    const error = await handle.callTool('echo', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).rpcCode).toBe(-32022);
    expect(handle.status().state).toBe('ready');
    expect(methods).toEqual(['server/discover', 'tools/call']);
  });
});
