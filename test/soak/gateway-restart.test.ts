/**
 * The HTTP gateway SIGKILLed and started again while 2025-era hosts call it every 100 ms (issue
 * #43, item 1): the official Python SDK's `ClientSession` (with its HTTP transport's connect
 * retries on, as docs/gateway.md tells Python hosts to set) and the official TypeScript SDK v1
 * `Client`. The CLI keeps their sessions in its file store (`--store`): after the restart both
 * carry on with the same session id, and no call started after the gateway is back fails.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { freePort } from '../cli/helpers.js';
import { text, TOKEN, v1Client } from '../gateway/helpers.js';
import { startServe, type GatewayProcess } from '../gateway/serve-process.js';
import { pythonWithMcp, startPythonHost } from './python-host.js';

let upstream: SdkExampleServer;
let dir: string;
let args: string[];
let gateway: GatewayProcess | undefined;
const env = { MCP_SUPERVISOR_TOKEN: TOKEN };

beforeAll(async () => {
  pythonWithMcp();
  upstream = await startSdkExampleServer({ unknownSessionStatus: 404 });
  dir = mkdtempSync(join(tmpdir(), 'gateway-restart-'));
  const config = join(dir, 'servers.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { example: { url: upstream.url, keepalive: false } } }));
  const port = await freePort();
  args = ['--config', config, '--http', `127.0.0.1:${port}`, '--store', join(dir, 'store.json')];
}, 180_000);

afterAll(async () => {
  await gateway?.kill('SIGKILL');
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the HTTP gateway killed and restarted', () => {
  it('a Python host and the SDK v1 Client calling every 100 ms: 0 errors after the restart, the same session throughout', async () => {
    gateway = await startServe(args, env);
    const python = startPythonHost(gateway.url, { token: TOKEN, retries: 8 });
    await python.until((line) => line.event === 'ready');

    const client = await v1Client(gateway.url);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId;
    let closes = 0;
    client.onclose = () => void closes++;
    const v1: { at: number; ok: boolean; error?: string }[] = [];
    let calling = true;
    const loop = (async () => {
      for (let i = 0; calling; i++) {
        const at = Date.now();
        try {
          const result = await client.callTool({ name: 'example__echo', arguments: { text: `v1 ${i}` } });
          v1.push({ at, ok: text(result) === `v1 ${i}` });
        } catch (error) {
          v1.push({ at, ok: false, error: String(error) });
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    try {
      await python.until((line) => line.i === 10);
      await gateway.kill('SIGKILL');
      gateway = await startServe(args, env);
      const back = Date.now();
      python.say('mark');
      await python.until((line) => line.event === 'mark');
      const marked = python.lines.length;
      // Calls go on for a while after the restart.
      await python.until((line) => line.i !== undefined && python.lines.indexOf(line) >= marked + 30);
      await expect.poll(() => v1.filter((call) => call.at >= back).length).toBeGreaterThanOrEqual(30);
      calling = false;
      await loop;
      const done = await python.stop();

      const after = python.lines.slice(marked).filter((line) => line.i !== undefined);
      expect(after.filter((line) => !line.ok)).toEqual([]);
      expect(python.lines.filter((line) => line.event === 'died')).toEqual([]);
      expect(done.session_ids).toBe(1);
      expect(v1.filter((call) => call.at >= back && !call.ok)).toEqual([]);
      expect((client.transport as StreamableHTTPClientTransport).sessionId).toBe(sessionId);
      expect(closes).toBe(0);
      // The new process took both sessions up from the store: restored, not adopted.
      expect(gateway.stderr().match(/host session \S+ restored/g)).toHaveLength(2);
      expect(gateway.stderr()).not.toMatch(/adopted/);
    } finally {
      calling = false;
      await loop;
      await client.close().catch(() => {});
      if (python.child.exitCode === null) python.child.kill('SIGKILL');
    }
  });
});
