/**
 * The direct path (src/gateway/direct-path.ts) answers exactly as the SDK's server does: the same
 * gateway (fronting server-everything) served twice, with the direct path and without it
 * (`directPath: false`), and the same raw requests sent to both, in both eras. A 2026-07-28
 * request the direct path serves builds no SDK server instance; one it must not serve (a bad
 * `Mcp-Name`) is refused with the SDK's own typed error. A 2025 host's `notifications/cancelled`
 * ends a direct call without an answer; a 2026-07-28 host closing its request cancels the upstream call.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DirectPath } from '../../src/gateway/direct-path.js';
import { serveGatewayHttp, type HttpService } from '../../src/gateway/http.js';
import { startEverythingServer, type EverythingServer } from '../../servers/everything-server.js';
import { startGateway, TOKEN, type RunningGateway } from './helpers.js';

let upstream: EverythingServer;
let gw: RunningGateway;
let reference: HttpService;

beforeAll(async () => {
  upstream = await startEverythingServer('streamableHttp');
  gw = await startGateway({
    servers: { everything: { url: upstream.url, keepalive: false } },
    catalog: { prefix: false },
  });
  reference = await serveGatewayHttp(gw.gateway, { token: TOKEN, directPath: false });
}, 30_000);

afterAll(async () => {
  await reference?.close();
  await gw?.close();
  await upstream?.close();
});

const base = {
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};
const MODERN = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

interface Reply {
  status: number;
  body: unknown;
}

/** A 2026-07-28 request as a host sends it (standard headers), or with `headers` changed. */
async function modern(
  url: string,
  method: string,
  params: object,
  headers: Record<string, string> = {},
  meta: object = envelope,
) {
  const name = (params as { name?: string }).name;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...base,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name && { 'mcp-name': name }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: meta } }),
  });
  return { status: response.status, body: await messageOf(response) };
}

/** The JSON-RPC message of an answer, JSON or the last `data:` of an SSE stream. */
async function messageOf(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!response.headers.get('content-type')?.includes('text/event-stream')) return text ? JSON.parse(text) : undefined;
  const data = text.split('\n').filter((line) => line.startsWith('data: {'));
  return data.length === 0 ? undefined : JSON.parse(data.at(-1)!.slice(6));
}

/** A raw 2025 session, initialized with `capabilities`: a POST of one message on it. */
async function openLegacySession(
  url: string,
  capabilities: object = {},
): Promise<(message: object) => Promise<Response>> {
  const init = await fetch(url, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  await init.text();
  const headers = {
    ...base,
    'mcp-session-id': init.headers.get('mcp-session-id')!,
    'mcp-protocol-version': '2025-11-25',
  };
  const post = (message: object) => fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
  return post;
}

/** A raw 2025 session: sends one request at a time on it. */
async function legacySession(url: string): Promise<(method: string, params?: object, all?: boolean) => Promise<Reply>> {
  const post = await openLegacySession(url);
  return async (method, params, all = false) => {
    const response = await post({ jsonrpc: '2.0', id: 7, method, ...(params && { params }) });
    return { status: response.status, body: all ? await messagesOf(response) : await messageOf(response) };
  };
}

/** Every JSON-RPC message of an SSE answer, in order. */
async function messagesOf(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as unknown);
}

const REQUESTS: [string, object][] = [
  ['tools/list', {}],
  ['resources/list', {}],
  ['resources/templates/list', {}],
  ['prompts/list', {}],
  ['tools/call', { name: 'echo', arguments: { message: 'hi' } }],
  // Multi-byte characters: the answer's Content-Length counts bytes, not characters.
  ['tools/call', { name: 'echo', arguments: { message: 'héllo — 世界 🙂' } }],
  ['tools/call', { name: 'get-sum', arguments: { a: 1, b: 2 } }],
  ['tools/call', { name: 'get-structured-content', arguments: { location: 'New York' } }],
  ['tools/call', { name: 'get-tiny-image', arguments: {} }],
  ['tools/call', { name: 'no-such-tool', arguments: {} }],
];

describe('the direct path', () => {
  it('answers 2026-07-28 requests as the SDK server does, with no server instance per request', async () => {
    const created = vi.spyOn(gw.gateway, 'createServer');
    for (const [method, params] of REQUESTS) {
      const direct = await modern(gw.http.url, method, params);
      const createdBefore = created.mock.calls.length;
      expect(direct, `${method} ${JSON.stringify(params)}`).toEqual(await modern(reference.url, method, params));
      expect(created.mock.calls.length).toBeGreaterThan(createdBefore);
    }
    const sent = await modern(gw.http.url, 'tools/list', {});
    expect((sent.body as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name)).toContain(
      'echo',
    );
    created.mockClear();
    for (const [method, params] of REQUESTS) await modern(gw.http.url, method, params);
    expect(created).not.toHaveBeenCalled();
    created.mockRestore();
  });

  it('answers 2025 session requests as the SDK server does', async () => {
    const direct = await legacySession(gw.http.url);
    const sdk = await legacySession(reference.url);
    for (const [method, params] of REQUESTS)
      expect(await direct(method, params), `${method} ${JSON.stringify(params)}`).toEqual(await sdk(method, params));
  });

  it("streams a 2025 call's progress on its SSE answer as the SDK server does", async () => {
    const serves = vi.spyOn(DirectPath.prototype, 'legacy');
    const direct = await legacySession(gw.http.url);
    const sdk = await legacySession(reference.url);
    const params = {
      name: 'trigger-long-running-operation',
      arguments: { duration: 0.05, steps: 2 },
      _meta: { progressToken: 'p1' },
    };
    const streamed = await direct('tools/call', params, true);
    expect(serves).toHaveBeenCalledTimes(1);
    expect(await serves.mock.results[0]!.value).toBeDefined(); // answered by the direct path
    serves.mockRestore();
    expect(streamed).toEqual(await sdk('tools/call', params, true));
    const messages = streamed.body as { method?: string; params?: { progress?: number } }[];
    expect(messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params?.progress)).toEqual([
      1, 2,
    ]);
  });

  it('leaves what it must not serve to the SDK, which refuses it with its typed error', async () => {
    const call = ['tools/call', { name: 'echo', arguments: { message: 'hi' } }] as const;
    const mismatches: Record<string, string>[] = [
      { 'mcp-name': 'get-sum' },
      { 'mcp-method': 'tools/list' },
      { 'mcp-protocol-version': '2025-11-25' },
    ];
    for (const headers of mismatches) {
      const direct = await modern(gw.http.url, ...call, headers);
      expect(direct.status).toBe(400);
      expect(direct).toEqual(await modern(reference.url, ...call, headers));
    }
    const badEnvelope = { ...envelope, 'io.modelcontextprotocol/clientCapabilities': 5 };
    for (let i = 0; i < 2; i++) {
      const refused = await modern(gw.http.url, ...call, {}, badEnvelope);
      expect(refused.status).toBe(400);
      expect(refused).toEqual(await modern(reference.url, ...call, {}, badEnvelope));
    }
    const bad = { name: 42 };
    expect(await modern(gw.http.url, 'tools/call', bad)).toEqual(await modern(reference.url, 'tools/call', bad));
  });

  it('checks Origin on every request, after one was accepted too (the accepted values are remembered)', async () => {
    const origin = (value: string) => modern(gw.http.url, 'tools/list', {}, { origin: value });
    expect((await origin('http://localhost:5173')).status).toBe(200);
    expect((await origin('https://evil.example')).status).toBe(403);
    expect((await origin('http://localhost:5173')).status).toBe(200);
  });

  it('ends a 2025 call the host cancelled, with no answer', async () => {
    // A host that takes server requests: its call is answered on an SSE stream, open at once.
    const post = await openLegacySession(gw.http.url, { roots: {} });
    const long = { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 3 } };
    const pending = post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: long });
    const response = await pending;
    await (await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } })).text();
    expect(await messageOf(response)).toBeUndefined();
    await expect.poll(() => gw.gateway.supervisor.server('everything').status().requests.inFlight).toBe(0);
  });

  it('cancels the upstream call of a 2026-07-28 request its host closed', async () => {
    const inFlight = () => gw.gateway.supervisor.server('everything').status().requests.inFlight;
    expect(inFlight()).toBe(0);
    const closed = new AbortController();
    const long = { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 3 } };
    const call = fetch(gw.http.url, {
      method: 'POST',
      headers: { ...base, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': long.name },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { ...long, _meta: envelope } }),
      signal: closed.signal,
    });
    await expect.poll(inFlight).toBe(1);
    closed.abort();
    await call.catch(() => {});
    await expect.poll(inFlight).toBe(0);
  });
});
