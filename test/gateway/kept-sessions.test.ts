/**
 * 2025 host sessions kept in the gateway's store (issue #43, item 1): a gateway that restarted
 * serves the session id the host kept — restored from the store with what the host declared
 * (capabilities: the servers' requests still reach it; log level; subscriptions) — and a session
 * id found nowhere is adopted (or answered 404 with `strictSessions`); a session the host ended
 * is gone from the store. The official SDK v1 `Client` keeps one session throughout and is never
 * told anything happened. The restart is played in this process: a new gateway on the same port
 * and store; test/soak/gateway-restart.test.ts kills the CLI for real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createGateway, type Gateway } from '../../src/gateway/gateway.js';
import { serveGatewayHttp, type HttpService } from '../../src/gateway/http.js';
import { KeptSessions } from '../../src/gateway/kept-sessions.js';
import type { Logger } from '../../src/observe/logger.js';
import { memoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/types.js';
import { EVERYTHING_ENTRY } from '../../servers/everything-server.js';
import { text, TOKEN, v1Client } from './helpers.js';

const servers = { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] } };

interface Running {
  gateway: Gateway;
  http: HttpService;
  lines: string[];
  close(): Promise<void>;
}

/** A gateway process as the CLI runs it, on `port` (0: a free one), with its log lines. */
async function start(store: Store, port = 0, strictSessions = false): Promise<Running> {
  const lines: string[] = [];
  const line = (fields: Record<string, unknown>, message?: string) =>
    void lines.push(`${message ?? ''} ${JSON.stringify(fields)}`);
  const logger: Logger = { debug: line, info: line, warn: line, error: line };
  const gateway = createGateway({ servers, store, logger });
  await gateway.start();
  const http = await serveGatewayHttp(gateway, { token: TOKEN, port, strictSessions });
  return {
    gateway,
    http,
    lines,
    close: async () => {
      await http.close();
      await gateway.close();
    },
  };
}

const portOf = (url: string) => Number(new URL(url).port);
const sessionIdOf = (client: ClientV1) => (client.transport as StreamableHTTPClientTransport).sessionId!;
const echo = async (client: ClientV1, message: string) =>
  text(await client.callTool({ name: 'everything__echo', arguments: { message } }));

let store: Store;
let first: Running;
let client: ClientV1;
let closes = 0;
const asked: string[] = [];

beforeAll(async () => {
  store = memoryStore();
  first = await start(store);
  client = await v1Client(first.http.url, { elicitation: { form: {} } });
  client.onclose = () => void closes++;
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message);
    return { action: 'decline' };
  });
});

afterAll(async () => {
  await client?.close();
  await first?.close();
});

describe('host sessions kept in the store', () => {
  it('a restarted gateway restores the session the host kept: same id, its capabilities, level and subscriptions; the host never notices', async () => {
    const id = sessionIdOf(client);
    expect(await echo(client, 'before')).toBe('Echo: before');
    await client.setLoggingLevel('error');
    const { resources } = await client.listResources();
    const uri = resources[0]!.uri;
    await client.subscribeResource({ uri });
    const kept = new KeptSessions(store, 0, () => {});
    await expect.poll(() => kept.find(id)).toMatchObject({ level: 'error', subscriptions: [uri] });
    expect(first.lines.join('\n')).toMatch(/host session \S+ opened/);

    const port = portOf(first.http.url);
    await first.close();
    first = await start(store, port);

    expect(await echo(client, 'after')).toBe('Echo: after');
    expect(sessionIdOf(client)).toBe(id);
    expect(closes).toBe(0);
    // What the host declared came back: a server's elicitation is forwarded to it again.
    const elicited = await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} });
    expect(asked).toHaveLength(1);
    expect(text(elicited)).toMatch(/decline/i);
    // The level and the subscriptions were replayed: the record written again still holds them.
    expect(await kept.find(id)).toMatchObject({
      level: 'error',
      subscriptions: [uri],
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'host' },
    });
    const log = first.lines.join('\n');
    expect(log).toMatch(/host session \S+ restored \(host\)/);
    expect(log).not.toContain(id);
  });

  it('a session id found nowhere (the store wiped) is adopted; with strictSessions it is answered 404', async () => {
    const id = sessionIdOf(client);
    const port = portOf(first.http.url);
    await first.close();
    const wiped = memoryStore();
    first = await start(wiped, port);
    expect(await echo(client, 'adopted')).toBe('Echo: adopted');
    expect(sessionIdOf(client)).toBe(id);
    expect(first.lines.join('\n')).toMatch(/host session \S+ adopted/);
    // Kept from now on, as adopted: what the host declared is not known.
    await expect.poll(() => new KeptSessions(wiped, 0, () => {}).find(id)).toMatchObject({ adopted: true });

    await first.close();
    first = await start(memoryStore(), port, true);
    await expect(echo(client, 'strict')).rejects.toThrow(/404|Session not found/);
    expect(closes).toBe(0);
  });

  it("the host's DELETE ends the session everywhere: its record is gone", async () => {
    const port = portOf(first.http.url);
    await first.close();
    first = await start(store, port);
    const fresh = await v1Client(first.http.url);
    const id = sessionIdOf(fresh);
    const kept = new KeptSessions(store, 0, () => {});
    await expect.poll(() => kept.find(id)).toBeDefined();
    await (fresh.transport as StreamableHTTPClientTransport).terminateSession();
    await fresh.close();
    expect(await kept.find(id)).toBeUndefined();
    expect(first.lines.join('\n')).toMatch(/host session \S+ ended/);
  });
});
