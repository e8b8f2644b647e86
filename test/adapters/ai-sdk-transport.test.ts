/**
 * `mcp-supervisor/ai-sdk`'s `supervisedMcpTransport()`: the AI SDK's own MCP client
 * (`@ai-sdk/mcp`'s `createMCPClient({ transport })`), unchanged, against the SDK's example server
 * restarted (400 and 404) and down for a while, and server-everything's elicitation through the
 * client's `onElicitationRequest`. The client sees answers, never its transport's `onclose`.
 */
import { createMCPClient, ElicitationRequestSchema, type MCPClient } from '@ai-sdk/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supervisedMcpTransport, type SupervisedTransport } from '../../src/adapters/ai-sdk/index.js';
import { startEverythingServer, type EverythingServer } from '../../servers/everything-server.js';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { nextTransition } from '../integration/helpers.js';
import { clientNoticesClose } from './sdk-clients.js';

const FAST = {
  restart: { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } },
  keepalive: false as const,
};

let status400: SdkExampleServer;
let status404: SdkExampleServer;
let everything: EverythingServer;
const clients: MCPClient[] = [];

beforeAll(async () => {
  [status400, status404, everything] = await Promise.all([
    startSdkExampleServer(),
    startSdkExampleServer({ unknownSessionStatus: 404 }),
    startEverythingServer('streamableHttp'),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await Promise.all([status400?.close(), status404?.close(), everything?.close()]);
});

async function open(url: string, capabilities?: Record<string, unknown>) {
  const transport: SupervisedTransport = supervisedMcpTransport({ url, ...FAST });
  const errors: unknown[] = [];
  const client = await createMCPClient({ transport, capabilities, onUncaughtError: (error) => errors.push(error) });
  clients.push(client);
  const seen = { closes: 0 };
  const closed = transport.onclose;
  transport.onclose = () => {
    seen.closes++;
    closed?.();
  };
  return { client, transport, errors, seen };
}

async function echo(client: MCPClient, text: string): Promise<string | undefined> {
  const tools = await client.tools();
  const result = (await tools['echo']!.execute({ text }, { toolCallId: text, messages: [] })) as {
    content: Array<{ text?: string }>;
  };
  return result.content[0]?.text;
}

describe('the AI SDK MCP client over supervisedMcpTransport', () => {
  it('initializes from the supervised handshake: server info, tools', async () => {
    const { client, transport } = await open(status404.url);
    expect(transport.sessionId).toEqual(expect.any(String));
    expect(client.serverInfo).toMatchObject({ name: 'sdk-example', version: '1.0.0' });
    expect(Object.keys(await client.tools())).toEqual(['echo', 'lookup', 'upsert', 'increment']);
  });

  it.each([
    ['400 "No valid session ID provided"', () => status400],
    ['404 "Session not found"', () => status404],
  ])('a restart answering %s: tools() and their calls are answered', async (_, server) => {
    const { client, seen } = await open(server().url);
    expect(await echo(client, 'before')).toBe('before');
    await server().restart();
    await clientNoticesClose();
    expect(await echo(client, 'after')).toBe('after');
    expect(seen.closes).toBe(0);
  });

  it('an outage: a call made while the server is down is held and answered when it is back', async () => {
    const { client, transport, seen } = await open(status400.url);
    const tools = await client.tools();
    await status400.stop();
    await clientNoticesClose();
    const down = nextTransition(transport.server!, (t) => t.to === 'reconnecting' || t.to === 'failed');
    const call = tools['echo']!.execute({ text: 'held' }, { toolCallId: 'held', messages: [] });
    await down;
    await status400.start();
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'held' }] });
    expect(seen.closes).toBe(0);
  });

  it("elicitation reaches the client's onElicitationRequest and its answer goes back", async () => {
    const { client } = await open(everything.url, { elicitation: {} });
    const messages: string[] = [];
    client.onElicitationRequest(ElicitationRequestSchema, (request) => {
      messages.push(request.params.message);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    const tools = await client.tools();
    const result = (await tools['trigger-elicitation-request']!.execute({}, { toolCallId: 'e', messages: [] })) as {
      content: Array<{ text?: string }>;
    };
    expect(messages).toHaveLength(1);
    expect(result.content.map((part) => part.text).join('\n')).toContain('- Name: Ada');
  });

  it('close(): the transport closes once and the supervised connection with it', async () => {
    const { client, transport, seen } = await open(status404.url);
    await client.close();
    expect(seen.closes).toBe(1);
    expect(transport.server!.status().state).toBe('closed');
  });
});
