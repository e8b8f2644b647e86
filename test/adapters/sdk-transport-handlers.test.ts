/**
 * `mcp-supervisor/sdk`: the server's requests reach the SDK Client's own handlers (form and URL
 * elicitation, sampling with tools, roots) and their answers go back; progress reaches the
 * Client's `onprogress` under its own token. Against @modelcontextprotocol/server-everything and
 * a 2025-11-25 server built with the SDK (servers/sdk-elicitation-server.ts), SDK v1 and v2; and a
 * legacy HTTP+SSE server spoken to through the same transport.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { supervisedTransport } from '../../src/adapters/sdk/index.js';
import { startEverythingServer, type EverythingServer } from '../../servers/everything-server.js';
import { startSdkElicitationServer, type SdkElicitationServer } from '../../servers/sdk-elicitation-server.js';
import { startSdkSseServer, type SdkSseServer } from '../../servers/sdk-sse-server.js';
import { openClient, strayMessages, type ClientHandlersForTest, type TestClient } from './sdk-clients.js';

let everything: EverythingServer;
let legacy: SdkSseServer;
const elicitations: SdkElicitationServer[] = [];
const opened: TestClient[] = [];

beforeAll(async () => {
  [everything, legacy] = await Promise.all([startEverythingServer('streamableHttp'), startSdkSseServer()]);
}, 30_000);

afterAll(async () => {
  await Promise.all(opened.map((client) => client.close().catch(() => {})));
  await Promise.all([everything?.close(), legacy?.close(), ...elicitations.map((server) => server.close())]);
});

const asked: Array<{ method: string; params: Record<string, unknown> }> = [];
const handlers: ClientHandlersForTest = {
  elicitation: (params) => {
    asked.push({ method: 'elicitation/create', params });
    return params['mode'] === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } };
  },
  sampling: (params) => {
    asked.push({ method: 'sampling/createMessage', params });
    return {
      role: 'assistant',
      content: { type: 'text', text: 'sampled answer' },
      model: 'test',
      stopReason: 'endTurn',
    };
  },
  roots: () => {
    asked.push({ method: 'roots/list', params: {} });
    return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
  },
};

function allText(result: { content: Array<{ text?: string }> }): string {
  return result.content.map((part) => part.text ?? '').join('\n');
}

describe.each(['v1', 'v2'] as const)("the SDK %s Client's handlers over supervisedTransport", (version) => {
  let client: TestClient;
  let other: TestClient;

  beforeAll(async () => {
    const elicitation = await startSdkElicitationServer(); // one session per server
    elicitations.push(elicitation);
    [client, other] = await Promise.all([
      openClient(version, supervisedTransport({ url: everything.url, keepalive: false }), { handlers }),
      openClient(version, supervisedTransport({ url: elicitation.url, keepalive: false }), { handlers }),
    ]);
    opened.push(client, other);
  });

  it('form elicitation: the Client’s handler answers the server', async () => {
    const result = await client.call('trigger-elicitation-request');
    expect(allText(result)).toContain('- Name: Ada');
    expect(asked.some((a) => a.method === 'elicitation/create' && a.params['mode'] !== 'url')).toBe(true);
  });

  it('sampling: the Client’s handler answers the server', async () => {
    const result = await client.call('trigger-sampling-request', { prompt: 'say hi', maxTokens: 10 });
    expect(allText(result)).toContain('sampled answer');
  });

  it('roots: the server reads the Client’s roots', async () => {
    const result = await client.call('get-roots-list');
    expect(allText(result)).toContain('file:///work/project');
  });

  it('progress reaches the Client’s onprogress under its own token', async () => {
    const progress: number[] = [];
    const result = await client.call(
      'trigger-long-running-operation',
      { duration: 0.2, steps: 4 },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(result.content.length).toBeGreaterThan(0);
    expect(progress).toEqual([1, 2, 3, 4]);
  });

  it('URL elicitation and sampling with tools (2025-11-25): the capabilities the Client declared reach the server', async () => {
    const declared = JSON.parse(allText(await other.call('client_capabilities'))) as Record<string, unknown>;
    expect(declared).toMatchObject({ elicitation: { form: {}, url: {} }, sampling: { tools: {} }, roots: {} });
    expect(JSON.parse(allText(await other.call('open_link')))).toMatchObject({ action: 'accept' });
    expect(asked.some((a) => a.method === 'elicitation/create' && a.params['mode'] === 'url')).toBe(true);
    expect(allText(await other.call('ask_model'))).toContain('sampled answer');
  });

  it('the server’s requests carry ids of the transport’s own; the Client saw no stray message and no onclose', () => {
    const requests = [...client.seen, ...other.seen].filter((m) => m.method !== undefined && m.id !== undefined);
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) expect(String(request.id)).toMatch(/^mcp-supervisor:\d+$/);
    expect(strayMessages(client.seen)).toEqual([]);
    expect(strayMessages(other.seen)).toEqual([]);
    expect([client.closes, other.closes]).toEqual([0, 0]);
  });
});

describe.each(['v1', 'v2'] as const)('the SDK %s Client, a legacy HTTP+SSE server (2024-11-05)', (version) => {
  it('the transport speaks legacy SSE; the Client needs no SSEClientTransport nor fallback code', async () => {
    const transport = supervisedTransport({ url: legacy.url, keepalive: false });
    const client = await openClient(version, transport);
    opened.push(client);
    expect(transport.server!.status().transport).toBe('sse');
    expect(await client.toolNames()).toContain('echo');
    expect(allText(await client.call('echo', { text: 'old' }))).toContain('old');
  });
});
