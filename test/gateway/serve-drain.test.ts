/**
 * Drain and health of `serve --http` (issue #43, item 4): `GET /healthz` and `GET /readyz` (JSON,
 * no token, Host still checked), `GET /metrics` in Prometheus text with `--metrics`; SIGTERM with
 * 20 calls in flight: every one answered, then exit 0.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_ENTRY } from '../../servers/everything-server.js';
import { text, TOKEN, v1Client } from './helpers.js';
import { startServe, type GatewayProcess } from './serve-process.js';

let dir: string;
let serve: GatewayProcess | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-drain-'));
  writeFileSync(
    join(dir, 'servers.json'),
    JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] } } }),
  );
});

afterAll(async () => {
  await serve?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const start = (extra: string[] = []) =>
  startServe(
    ['--config', join(dir, 'servers.json'), '--http', '127.0.0.1:0', '--store', join(dir, 'store.json'), ...extra],
    { MCP_SUPERVISOR_TOKEN: TOKEN },
  );

describe('serve --http: health, readiness, metrics and drain', () => {
  it('answers /healthz and /readyz without the token (JSON), checks Host, and /metrics with --metrics', async () => {
    serve = await start(['--metrics']);
    const base = serve.url.replace(/\/mcp$/, '');
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      ready: true,
      draining: false,
      store: { reachable: true },
      servers: { total: 1, ready: 1 },
    });
    // A name that is not the loopback's (DNS rebinding) is refused here too.
    const { request } = await import('node:http');
    const foreign = await new Promise<number>((resolve, reject) =>
      request(`${base}/readyz`, { headers: { host: 'evil.example:80' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
        .on('error', reject)
        .end(),
    );
    expect(foreign).toBe(403);

    const client = await v1Client(serve.url);
    expect(text(await client.callTool({ name: 'everything__echo', arguments: { message: 'm' } }))).toBe('Echo: m');
    const scraped = await (await fetch(`${base}/metrics`)).text();
    expect(scraped).toMatch(/^mcp_supervisor_gateway_host_sessions(\{[^}]*\})? 1$/m);
    expect(scraped).toMatch(/mcp_supervisor_gateway_host_session_events_total\{[^}]*opened[^}]*\} 1/);
    expect(scraped).toMatch(/mcp_supervisor_connection_state\{/);
    await client.close();
    expect(await serve.kill('SIGKILL')).toBeNull();
  });

  it('SIGTERM with 20 calls in flight: all 20 answered, streams closed, exit 0', async () => {
    serve = await start(['--drain-ms', '15000']);
    const client = await v1Client(serve.url);
    let started = 0;
    const calls = Array.from({ length: 20 }, (_, i) => {
      let progressed = false;
      return client
        .callTool(
          { name: 'everything__trigger-long-running-operation', arguments: { duration: 3, steps: 6 } },
          CallToolResultSchema,
          {
            timeout: 30_000,
            onprogress: () => {
              if (!progressed) started++;
              progressed = true;
            },
          },
        )
        .then((result) => [i, text(result)] as const);
    });
    // Every call is running upstream (its first progress came).
    await expect.poll(() => started).toBe(20);
    serve.child.kill('SIGTERM');
    const answers = await Promise.all(calls);
    expect(answers.filter(([, answer]) => /completed/.test(answer))).toHaveLength(20);
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).toMatch(/draining[\s\S]*drained/);
    await client.close();
  });
});
