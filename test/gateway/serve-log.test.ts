/**
 * What `serve --http` says on stderr (issue #43, item 5): one line per upstream transition and per
 * host-session event (opened, ended, expired), as JSON with `--log-format json` — and no secret in
 * any line: not the hosts' bearer token, not a session id, not the upstream's credential.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { text, TOKEN, v1Client } from './helpers.js';
import { startServe, type GatewayProcess } from './serve-process.js';

const UPSTREAM_SECRET = 'upstream-secret-4f1c9a';

let upstream: SdkExampleServer;
let dir: string;
let serve: GatewayProcess | undefined;

beforeAll(async () => {
  upstream = await startSdkExampleServer({ unknownSessionStatus: 404 });
  dir = mkdtempSync(join(tmpdir(), 'gateway-log-'));
});

afterAll(async () => {
  await serve?.kill('SIGKILL');
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Entry {
  time: string;
  level: string;
  msg: string;
  event: string;
  server?: string;
  session?: string;
}

it('--log-format json: every upstream transition and host-session event is one JSON line, with no secret in any', async () => {
  const config = join(dir, 'servers.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        example: { url: upstream.url, keepalive: false, headers: { authorization: `Bearer ${UPSTREAM_SECRET}` } },
      },
      gateway: { sessionIdleMs: 1500 },
    }),
  );
  serve = await startServe(
    ['--config', config, '--http', '127.0.0.1:0', '--store', join(dir, 'store.json'), '--log-format', 'json'],
    { MCP_SUPERVISOR_TOKEN: TOKEN },
  );
  const entries = () =>
    serve!
      .stderr()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Entry);
  const events = () => entries().map((entry) => entry.event);

  const client = await v1Client(serve.url);
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
  expect(text(await client.callTool({ name: 'example__echo', arguments: { text: 'a' } }))).toBe('a');
  await upstream.restart();
  expect(text(await client.callTool({ name: 'example__echo', arguments: { text: 'b' } }))).toBe('b');
  await (client.transport as StreamableHTTPClientTransport).terminateSession();
  await client.close();

  // A session with no GET stream, left alone: it expires (sessionIdleMs 1500).
  const headers = {
    authorization: `Bearer ${TOKEN}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = await fetch(serve.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  const rawId = init.headers.get('mcp-session-id')!;
  await init.text();
  const initialized = await fetch(serve.url, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': rawId, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await initialized.text();

  await expect.poll(events).toContain('host session expired');
  const all = entries();
  expect(all.filter((entry) => entry.event === 'host session opened')).toHaveLength(2);
  expect(all.filter((entry) => entry.event === 'host session ended')).toHaveLength(1);
  // The upstream's session lost on its restart, and each move of its connection, one line each.
  const moves = all.filter((entry) => entry.server === 'example' && entry.event !== 'upstream');
  expect(moves.map((entry) => entry.event)).toContain('session expired');
  expect(moves.length).toBeGreaterThanOrEqual(3);
  for (const entry of all) expect(entry).toMatchObject({ time: expect.any(String), level: expect.any(String) });
  expect(all.find((entry) => entry.event === 'listening')).toMatchObject({ url: serve.url });

  const log = serve.stderr();
  for (const secret of [TOKEN, UPSTREAM_SECRET, sessionId, rawId]) expect(log).not.toContain(secret);
});
