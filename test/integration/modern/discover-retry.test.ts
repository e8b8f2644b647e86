/**
 * SEP-2575: a -32022 on `server/discover` is answered by retrying with a version from the
 * error's `supported` list — our own version again when the server lists it (the conformance
 * scenario `request-metadata` refuses the first request once, listing the version it refused).
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type ServerHandle } from '../../../src/index.js';
import { listenOnLoopback, readBody, type Listening } from '../../../servers/listen.js';

let handle: ServerHandle | undefined;
let listening: Listening | undefined;
afterEach(async () => {
  await handle?.close().catch(() => {});
  await listening?.close();
  handle = listening = undefined;
});

interface Seen {
  method: string;
  header: string | undefined;
  meta: unknown;
}

/** A modern server that refuses its first `refusals` requests with -32022 listing 2026-07-28. */
async function refusingServer(refusals: number): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const http = createServer((req, res) => {
    void readBody(req).then((text) => {
      const message = JSON.parse(text) as { id: number; method: string; params: { _meta: Record<string, unknown> } };
      const header = req.headers['mcp-protocol-version'] as string | undefined;
      seen.push({
        method: message.method,
        header,
        meta: message.params._meta['io.modelcontextprotocol/protocolVersion'],
      });
      const reply = (status: number, body: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...body }));
      };
      if (seen.length <= refusals)
        return reply(400, {
          error: {
            code: -32022,
            message: 'Unsupported protocol version',
            data: { supported: ['2026-07-28'], requested: header },
          },
        });
      if (message.method === 'server/discover')
        return reply(200, {
          result: { resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} } },
        });
      return reply(200, { result: { resultType: 'complete', tools: [] } });
    });
  });
  listening = await listenOnLoopback(http);
  return { url: `${listening.origin}/mcp`, seen };
}

describe('a -32022 on server/discover that lists the version we sent', () => {
  it('is retried once with that version (header and _meta agree), then the server is ready', async () => {
    const { url, seen } = await refusingServer(1);
    handle = await connect({ url, keepalive: false, restart: { maxRestarts: 0 } });
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'modern', protocolVersion: '2026-07-28' });
    await handle.listTools();
    expect(seen).toEqual([
      { method: 'server/discover', header: '2026-07-28', meta: '2026-07-28' },
      { method: 'server/discover', header: '2026-07-28', meta: '2026-07-28' },
      { method: 'tools/list', header: '2026-07-28', meta: '2026-07-28' },
    ]);
  });

  it('is retried only once: a second refusal fails the connection, naming the versions', async () => {
    const { url, seen } = await refusingServer(Infinity);
    await expect(connect({ url, keepalive: false, restart: { maxRestarts: 0 }, revive: false })).rejects.toThrow(
      /2026-07-28/,
    );
    expect(seen.map((s) => s.method)).toEqual(['server/discover', 'server/discover']);
  });
});
