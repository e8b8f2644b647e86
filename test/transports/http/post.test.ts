/**
 * Streamable HTTP, sending: one message per POST, the headers on every POST, JSON and SSE
 * responses, server messages before the response, priming events and comments, JSON-RPC errors.
 * docs/client-requirements.md §1.1 and §1.3.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpError, TransportError, type JsonRpcNotification } from '../../../src/index.js';
import {
  answerBasics,
  Cleanup,
  fixture,
  header,
  open,
  posts,
  rejection,
  requestPosts,
  scriptedServer,
  settle,
  sse,
  startSse,
  toolResult,
  gets,
  replyJson,
  until,
} from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('JSON-RPC framing (§1.1)', () => {
  it.each(['json', 'sse'] as const)('§1 sends and reads UTF-8 (%s responses)', async (responseMode) => {
    const f = await fixture(cleanup, { responseMode });
    const { handle } = await open(cleanup, f.url);
    const text = 'héllo — 日本語 ✓ 🚀';
    const result = await handle.callTool('echo', { text });
    expect(result.content[0]).toEqual({ type: 'text', text });
    const sent = posts(f.requests, 'tools/call')[0]!;
    expect(sent.body.params.arguments.text).toBe(text);
    expect(header(sent, 'content-type')).toBe('application/json');
  });

  it('§1 decodes UTF-8 characters split across SSE chunks', async () => {
    const text = 'ünïcödé 日本語 🚀'.repeat(20);
    const server = await scriptedServer(cleanup, async (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-utf8' })) return;
      startSse(res);
      const bytes = Buffer.from(sse(toolResult(request.body.id, text)), 'utf8');
      // One byte per write: multi-byte characters straddle chunk boundaries.
      for (let i = 0; i < bytes.length; i += 1) res.write(bytes.subarray(i, i + 1));
      res.end();
    });
    const { handle } = await open(cleanup, server.url);
    const result = await handle.callTool('echo', { text: 'x' });
    expect(result.content[0]!.text).toBe(text);
  });

  it('§2 request ids are integers, never null, never reused, and increase in the order of issue', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    await handle.listTools();
    await Promise.all([1, 2, 3, 4, 5].map((n) => handle.callTool('echo', { text: String(n) })));
    await handle.request('ping');
    const ids = requestPosts(f.requests).map((r) => r.body.id);
    expect(ids.length).toBe(8); // initialize, tools/list, 5 calls, ping
    for (const id of ids) {
      expect(Number.isInteger(id)).toBe(true);
      expect(id).not.toBeNull();
    }
    expect(new Set(ids).size).toBe(ids.length);
    // the five concurrent calls were issued in order 1..5 and got increasing ids in that order
    const callIds = requestPosts(f.requests)
      .filter((r) => r.rpcMethod === 'tools/call')
      .sort((a, b) => Number(a.body.params.arguments.text) - Number(b.body.params.arguments.text))
      .map((r) => r.body.id as number);
    expect(callIds).toEqual([...callIds].sort((a, b) => a - b));
    const idOf = (method: string) =>
      requestPosts(f.requests)
        .filter((r) => r.rpcMethod === method)
        .map((r) => r.body.id as number);
    expect(idOf('initialize')[0]!).toBeLessThan(idOf('tools/list')[0]!);
    expect(idOf('tools/list')[0]!).toBeLessThan(Math.min(...callIds));
    expect(Math.max(...callIds)).toBeLessThan(idOf('ping')[0]!);
  });

  it('§3 sends exactly one JSON-RPC message per POST, never an array', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    f.faults.notifyBeforeResponse = true; // makes the client answer a server ping too
    await Promise.all([
      handle.callTool('echo', { text: 'a' }),
      handle.listTools(),
      handle.notify('notifications/roots/list_changed'),
    ]);
    // initialize, initialized, the call, the list, the notification, and an answer to each server ping
    await until(() => posts(f.requests).length === 7);
    const all = posts(f.requests);
    for (const post of all) {
      expect(Array.isArray(post.body)).toBe(false);
      expect(post.body).toMatchObject({ jsonrpc: '2.0' });
    }
  });

  it('§3 accepts a JSON array body from a 2025-03-26 server and routes each message', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-batch', protocolVersion: '2025-03-26' })) return;
      const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'batched' } };
      replyJson(res, 200, [note, toolResult(request.body.id, 'from a batch')]);
    });
    const { handle } = await open(cleanup, server.url);
    const notes: JsonRpcNotification[] = [];
    handle.on('notification', (n) => notes.push(n));
    const result = await handle.callTool('echo', { text: 'x' });
    expect(result.content[0]!.text).toBe('from a batch');
    expect(notes.map((n) => n.params?.data)).toEqual(['batched']);
  });
});

describe('sending (§1.3)', () => {
  it('§14 sends every message as its own new POST to the MCP endpoint', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    await handle.callTool('echo', { text: 'a' });
    await handle.notify('notifications/roots/list_changed');
    await handle.listTools();
    expect(posts(f.requests).map((r) => r.rpcMethod)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/call',
      'notifications/roots/list_changed',
      'tools/list',
    ]);
    expect(f.requests.map((r) => r.path)).toEqual(f.requests.map(() => new URL(f.url).pathname));
    expect(new URL(f.url).pathname).toBe('/mcp');
  });

  it('§15 sends Accept with both application/json and text/event-stream, and Content-Type application/json, on every POST', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    f.faults.notifyBeforeResponse = true;
    await handle.callTool('echo', { text: 'a' });
    await handle.notify('notifications/roots/list_changed');
    // initialize, initialized, tools/call, the answer to the server's ping, the notification
    await until(() => posts(f.requests).length === 5);
    const all = posts(f.requests);
    expect(all.some((r) => r.body.id === 'srv-1' && 'result' in r.body)).toBe(true);
    for (const post of all) {
      const accept = header(post, 'accept') ?? '';
      expect(accept).toContain('application/json');
      expect(accept).toContain('text/event-stream');
      expect(header(post, 'content-type')).toBe('application/json');
    }
  });

  it('§16 a notification answered 202 resolves notify()', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    await expect(handle.notify('notifications/roots/list_changed')).resolves.toBeUndefined();
    const sent = posts(f.requests, 'notifications/roots/list_changed')[0]!;
    expect(sent.body).toEqual({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect('id' in sent.body).toBe(false);
  });

  it('§16 also accepts 200 with a JSON body for a notification (the conformance initialize server does this)', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'POST' && request.body?.method?.startsWith('notifications/')) {
        replyJson(res, 200, {});
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-200' })) return;
      replyJson(res, 200, toolResult(request.body.id, 'ok'));
    });
    const { handle } = await open(cleanup, server.url);
    expect(handle.status().state).toBe('ready');
    await expect(handle.notify('notifications/roots/list_changed')).resolves.toBeUndefined();
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('ok');
  });

  it('§16 a notification answered 400 with an id-less JSON-RPC error rejects with TransportError carrying the message', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.rpcMethod === 'notifications/bad') {
        replyJson(res, 400, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid notification params' } });
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-400' })) return;
      replyJson(res, 200, toolResult(request.body.id, 'still fine'));
    });
    const { handle } = await open(cleanup, server.url);
    const error = await rejection(handle.notify('notifications/bad'));
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(400);
    expect(error.message).toContain('Invalid notification params');
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('still fine');
  });

  it.each(['json', 'sse'] as const)('§17 handles a %s response to a request', async (responseMode) => {
    const f = await fixture(cleanup, { responseMode });
    const { handle } = await open(cleanup, f.url);
    const tools = await handle.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['echo']);
    expect((await handle.callTool('echo', { text: responseMode })).content[0]!.text).toBe(responseMode);
  });

  it.each([
    ['application/json; charset=utf-8', 'json'],
    ['text/event-stream; charset=utf-8', 'sse'],
    ['Application/JSON', 'json'],
  ] as const)('§17 compares the media-type essence: %s', async (contentType, kind) => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-ct' })) return;
      const response = toolResult(request.body.id, contentType);
      res.writeHead(200, { 'content-type': contentType });
      res.end(kind === 'json' ? JSON.stringify(response) : sse(response));
    });
    const { handle } = await open(cleanup, server.url);
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe(contentType);
  });

  it('§18 handles a notification and a server request (ping) that arrive on the POST stream before the response', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    const order: string[] = [];
    handle.on('notification', (n) => order.push(`notification ${n.method}`));
    f.faults.notifyBeforeResponse = true;
    const result = await handle.callTool('echo', { text: 'after the others' });
    order.push('result');
    expect(result.content[0]!.text).toBe('after the others');
    expect(order).toEqual(['notification notifications/message', 'result']);
    await until(() => posts(f.requests).some((r) => r.body?.id === 'srv-1'));
    const answer = posts(f.requests).find((r) => r.body?.id === 'srv-1');
    expect(answer?.body).toEqual({ jsonrpc: '2.0', id: 'srv-1', result: {} });
    // the answer is a new POST that carries the session
    expect(header(answer!, 'mcp-session-id')).toBe(header(posts(f.requests, 'tools/call')[0]!, 'mcp-session-id'));
  });

  it('§19 ignores priming events (empty data) and `: comments` on a POST stream', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-prime' })) return;
      startSse(res);
      res.write(': keepalive\n\n');
      res.write('id: prime-1\nretry: 1000\ndata: \n\n');
      res.write(': another comment\n\n');
      res.end(sse(toolResult(request.body.id, 'after priming')));
    });
    const { handle } = await open(cleanup, server.url);
    const warnings: Error[] = [];
    handle.on('warning', (w) => warnings.push(w));
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('after priming');
    expect(warnings).toEqual([]);
    // a complete response needs no resumption
    await settle(50);
    expect(gets(server.requests).length).toBe(1); // only the listener's attempt
  });

  it('§19 the priming event of the GET stream is not parsed as a message', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    const warnings: Error[] = [];
    handle.on('warning', (w) => warnings.push(w));
    f.closeGetStreams(); // the reconnect gets another priming event
    await settle(50);
    expect(warnings).toEqual([]);
    expect(handle.status().lastError).toBeUndefined();
  });

  it.each(['json', 'sse'] as const)(
    '§22 a JSON-RPC error response (%s) rejects with McpError carrying code and message, and is terminal',
    async (responseMode) => {
      const f = await fixture(cleanup, { responseMode });
      const { handle } = await open(cleanup, f.url);
      const unknownTool = await rejection(handle.callTool('nope', {}));
      expect(unknownTool).toBeInstanceOf(McpError);
      expect((unknownTool as McpError).rpcCode).toBe(-32602);
      expect((unknownTool as McpError).rpcMessage).toBe('Unknown tool: nope');
      expect(unknownTool.message).toContain('Unknown tool: nope');
      const unknownMethod = await rejection(handle.request('no/such/method'));
      expect((unknownMethod as McpError).rpcCode).toBe(-32601);
      // terminal: no resumption GET follows an error response
      await settle(50);
      expect(gets(f.requests).length).toBe(1);
      expect(handle.status().state).toBe('ready');
    },
  );
});
