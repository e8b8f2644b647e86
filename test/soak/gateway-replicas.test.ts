/**
 * Replicas of `serve --http` sharing one Redis store behind a real haproxy, round robin per
 * request, no stickiness (issue #43, item 2): a 2025-era host's calls land on any replica, each
 * takes the session up from Redis; one replica SIGKILLed amid 1,000 calls: no call started after
 * the kill fails (only those in flight on the dead replica may), the same session throughout.
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
import { startRedisServer, type RedisServer } from '../store/redis-server.js';
import { startHaproxy, type Haproxy } from './haproxy.js';

let upstream: SdkExampleServer;
let redis: RedisServer;
let dir: string;
const replicas: GatewayProcess[] = [];
let balancer: Haproxy;

beforeAll(async () => {
  redis = await startRedisServer();
  upstream = await startSdkExampleServer({ unknownSessionStatus: 404 });
  dir = mkdtempSync(join(tmpdir(), 'gateway-replicas-'));
  const config = join(dir, 'servers.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { example: { url: upstream.url, keepalive: false } } }));
  const ports = [await freePort(), await freePort(), await freePort()];
  replicas.push(
    ...(await Promise.all(
      ports.map((port) =>
        startServe(['--config', config, '--http', `127.0.0.1:${port}`, '--store', redis.url], {
          MCP_SUPERVISOR_TOKEN: TOKEN,
        }),
      ),
    )),
  );
  balancer = await startHaproxy(dir, ports);
}, 120_000);

afterAll(async () => {
  await balancer?.stop();
  await Promise.all(replicas.map((replica) => replica.kill('SIGKILL')));
  await upstream?.close();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('gateway replicas behind haproxy with one Redis store', () => {
  it('1,000 calls of one host session over 3 replicas, one SIGKILLed: no call after the kill fails', async () => {
    const client = await v1Client(balancer.url);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId;
    let closes = 0;
    client.onclose = () => void closes++;
    const calls: { started: number; ended: number; ok: boolean; error?: string }[] = [];
    let next = 0;
    let killedAt = Infinity;
    const worker = async () => {
      while (next < 1_000) {
        const i = next++;
        if (i === 300) {
          await replicas[1]!.kill('SIGKILL');
          killedAt = Date.now();
        }
        const started = Date.now();
        try {
          const result = await client.callTool({ name: 'example__echo', arguments: { text: `call ${i}` } });
          calls.push({ started, ended: Date.now(), ok: text(result) === `call ${i}` });
        } catch (error) {
          calls.push({ started, ended: Date.now(), ok: false, error: String(error) });
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const sessionAtEnd = (client.transport as StreamableHTTPClientTransport).sessionId;
    const closesAtEnd = closes;
    await client.close();

    expect(calls).toHaveLength(1_000);
    const afterKill = calls.filter((call) => call.started > killedAt);
    expect(afterKill.length).toBeGreaterThan(600);
    expect(afterKill.filter((call) => !call.ok)).toEqual([]);
    // At most the 8 calls in flight when it died.
    expect(calls.filter((call) => !call.ok).length).toBeLessThanOrEqual(8);
    expect(sessionAtEnd).toBe(sessionId);
    expect(closesAtEnd).toBe(0);
    // Every replica served the session: opened on one, restored from Redis on the others.
    const said = replicas.map((replica) => /host session \S+ (opened|restored)/.exec(replica.stderr())?.[1]);
    expect(said.filter((word) => word === 'opened')).toHaveLength(1);
    expect(said.filter((word) => word === 'restored')).toHaveLength(2);
  });
});
