/**
 * `mcp-supervisor serve --config f` as a host runs it: a command on stdio (issue #32). The
 * official SDK v1 Client starts it like Claude Desktop would; the config file's `"gateway"`
 * block names the tools; stdout carries only the protocol (the server list goes to stderr).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { ROOT } from '../cli/helpers.js';
import { text } from './helpers.js';

let upstream: SdkExampleServer;
let dir: string;

beforeAll(async () => {
  upstream = await startSdkExampleServer(); // after a restart: 400 to the old session id, as the SDK examples answer
  dir = mkdtempSync(join(tmpdir(), 'gateway-'));
});

afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a host starts `serve` as its command: tools named by the gateway block, calls answered, an upstream restart unseen', async () => {
  const config = join(dir, 'mcp.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { example: { url: upstream.url, keepalive: false } },
      gateway: { separator: '_', servers: { example: { prefix: 'ex', deny: ['increment'] } } },
    }),
  );
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    // A store of the test's own, not the user's ~/.mcp-supervisor/store.json.
    args: ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', config, '--store', join(dir, 'store.json')],
    cwd: ROOT,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const client = new Client({ name: 'desktop-host', version: '1.0.0' });
  let closed = 0;
  client.onclose = () => void closed++;
  await client.connect(transport);
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['ex_echo', 'ex_lookup', 'ex_upsert']);
    expect(text(await client.callTool({ name: 'ex_echo', arguments: { text: 'over stdio' } }))).toBe('over stdio');
    // The upstream restarts (its sessions gone, 400 to the old id): the host's next call is answered.
    await upstream.restart();
    expect(text(await client.callTool({ name: 'ex_echo', arguments: { text: 'after restart' } }))).toBe(
      'after restart',
    );
    expect(closed).toBe(0);
    expect(stderr.join('')).toMatch(/serve: example: ready/);
  } finally {
    await client.close();
  }
});
