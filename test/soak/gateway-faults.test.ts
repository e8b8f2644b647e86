/**
 * Faults behind `mcp-supervisor serve` (issue #32): the official SDK v1 and v2 Clients (both
 * eras) keep one session with the gateway while its upstream servers restart (400 to the old
 * session id, as the SDK examples answer), go away for a while (calls held, then answered), and
 * crash (a stdio server killed: restarted) — every call answered, no client ever reconnects.
 * Then the CLI as hosts run it: `serve` over stdio for the v2 Client, `serve --http` with the
 * token from the environment. Soak: child processes and seconds of wall time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_ENTRY } from '../../servers/everything-server.js';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { ROOT } from '../cli/helpers.js';
import { startGateway, text, TOKEN, v1Client, v2Client, type RunningGateway } from '../gateway/helpers.js';

let upstream: SdkExampleServer;
let gw: RunningGateway;
let dir: string;

beforeAll(async () => {
  upstream = await startSdkExampleServer();
  gw = await startGateway({
    servers: {
      example: { url: upstream.url, keepalive: false },
      everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] },
    },
    holdMs: 20_000,
  });
  dir = mkdtempSync(join(tmpdir(), 'gateway-soak-'));
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Host {
  name: string;
  call(tool: string, args: Record<string, unknown>): Promise<unknown>;
  closes(): number;
  close(): Promise<void>;
}

async function hosts(): Promise<Host[]> {
  const v1 = await v1Client(gw.http.url);
  let v1Closes = 0;
  v1.onclose = () => void v1Closes++;
  const made: Host[] = [
    {
      name: 'v1',
      call: (tool, args) => v1.callTool({ name: tool, arguments: args }),
      closes: () => v1Closes,
      close: () => v1.close(),
    },
  ];
  for (const modern of [false, true]) {
    const v2 = await v2Client(gw.http.url, modern);
    let closes = 0;
    v2.onclose = () => void closes++;
    made.push({
      name: modern ? 'v2 2026-07-28' : 'v2 2025',
      call: (tool, args) => v2.callTool({ name: tool, arguments: args }),
      closes: () => closes,
      close: () => v2.close(),
    });
  }
  return made;
}

describe('faults behind the gateway', () => {
  it('an upstream restart (400 to the old session), an outage and a stdio crash: every host call answered, no host reconnects', async () => {
    const clients = await hosts();
    try {
      const everyone = (tool: string, args: Record<string, unknown>) =>
        Promise.all(clients.map(async (host) => [host.name, text(await host.call(tool, args))]));
      expect(await everyone('example__echo', { text: 'a' })).toEqual(clients.map((h) => [h.name, 'a']));

      await upstream.restart();
      expect(await everyone('example__echo', { text: 'after restart' })).toEqual(
        clients.map((h) => [h.name, 'after restart']),
      );

      await upstream.stop();
      const held = everyone('example__echo', { text: 'held' });
      await new Promise((resolve) => setTimeout(resolve, 500)); // the outage lasts a while
      await upstream.start();
      expect(await held).toEqual(clients.map((h) => [h.name, 'held']));

      const pid = gw.gateway.supervisor.status().everything!.pid!;
      process.kill(pid, 'SIGKILL');
      expect(await everyone('everything__echo', { message: 'after crash' })).toEqual(
        clients.map((h) => [h.name, 'Echo: after crash']),
      );
      expect(gw.gateway.supervisor.status().everything!.pid).not.toBe(pid);
      expect(clients.map((h) => h.closes())).toEqual(clients.map(() => 0));
    } finally {
      await Promise.all(clients.map((host) => host.close()));
    }
  });
});

describe('the CLI as hosts run it', () => {
  it('serve over stdio for the v2 Client (modern negotiation)', async () => {
    const config = join(dir, 'stdio.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { example: { url: upstream.url, keepalive: false } } }));
    const client = new ClientV2({ name: 'host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new StdioV2({
        command: process.execPath,
        args: ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', config],
        cwd: ROOT,
        stderr: 'ignore',
      }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(text(await client.callTool({ name: 'example__echo', arguments: { text: 'stdio v2' } }))).toBe('stdio v2');
    } finally {
      await client.close();
    }
  });

  it('serve --http: the token from the environment is required, the URL printed on stderr', async () => {
    const config = join(dir, 'http.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { example: { url: upstream.url, keepalive: false } } }));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', config, '--http', '127.0.0.1:0'],
      {
        cwd: ROOT,
        // A store of the test's own, not the user's ~/.mcp-supervisor/store.json.
        env: { ...process.env, MCP_SUPERVISOR_TOKEN: TOKEN, MCP_SUPERVISOR_STORE: join(dir, 'store.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let stderr = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          const found = /listening on (\S+)/.exec(stderr)?.[1];
          if (found) resolve(found);
        });
        child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(stderr).not.toContain(TOKEN);
      const refused = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(401);
      const client = await v1Client(url);
      expect(text(await client.callTool({ name: 'example__echo', arguments: { text: 'http cli' } }))).toBe('http cli');
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
  });
});
