/**
 * The legacy HTTP+SSE transport (MCP 2024-11-05) driven directly, against real servers on
 * 127.0.0.1: opening the stream and its endpoint, POSTing, reading `message` events, and what
 * happens when the stream ends. docs/client-requirements.md §1.10 (items 49-51), issue #3 items 1, 4 and 6.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionClosedError, EndpointTimeoutError, ProtocolError, TransportError } from '../../../src/index.js';
import type { JsonRpcMessage } from '../../../src/protocol/jsonrpc.js';
import { LegacySseTransport, type LegacySseTransportOptions } from '../../../src/transports/legacy-sse/legacy-sse.js';
import {
  startLegacySseFixture,
  type LegacyFixtureSettings,
  type LegacySseFixture,
} from '../../../servers/legacy-sse-fixture.js';
import { startSdkSseServer } from '../../../servers/sdk-sse-server.js';
import { formatSseEvent } from '../../../servers/sse-writer.js';
import {
  Cleanup,
  ManualTimers,
  rejection,
  scriptedServer,
  sse,
  startSse,
  testHttpOptions,
  until,
  type RecordingSink,
} from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function legacyFixture(settings?: LegacyFixtureSettings): Promise<LegacySseFixture> {
  return cleanup.add(await startLegacySseFixture(settings), (f) => f.close());
}

function legacyTo(
  url: string,
  options: Partial<LegacySseTransportOptions> = {},
): { transport: LegacySseTransport; sink: RecordingSink } {
  const built = testHttpOptions(url, 'legacy', options);
  const transport = new LegacySseTransport(built);
  cleanup.add(transport, (t) => t.close());
  return { transport, sink: built.sink };
}

let nextId = 5_000;

/** Sends a request and waits for its response on the stream. */
async function call(
  transport: LegacySseTransport,
  sink: RecordingSink,
  method: string,
  params?: Record<string, unknown>,
): Promise<JsonRpcMessage> {
  const id = ++nextId;
  sink.awaiting.add(id);
  await transport.send({ jsonrpc: '2.0', id, method, params });
  await until(() => !sink.awaiting.has(id));
  return sink.messages.find((m) => !('method' in m) && m.id === id)!;
}

const postsTo = (f: LegacySseFixture) => f.requests.filter((r) => r.method === 'POST');

describe('opening the stream and its endpoint (§49, §50)', () => {
  it('GETs the SSE URL with accept text/event-stream and the configured headers, then POSTs to the relative endpoint', async () => {
    const f = await legacyFixture();
    const { transport, sink } = legacyTo(f.url, {
      headers: { Authorization: 'Bearer s3cret-token', 'X-Tenant': 'blue' },
    });
    await transport.open();

    const [get] = f.requests;
    expect(get).toMatchObject({ method: 'GET', url: '/sse' });
    expect(get!.headers.accept).toBe('text/event-stream');
    expect(get!.headers.authorization).toBe('Bearer s3cret-token');
    expect(get!.headers['x-tenant']).toBe('blue');

    const response = await call(transport, sink, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
    expect(response).toMatchObject({ result: { content: [{ type: 'text', text: 'hi' }] } });
    const [post] = postsTo(f);
    expect(post!.url).toBe(`/messages?sessionId=${f.sessions()[0]}`);
    expect(post!.headers['content-type']).toBe('application/json');
    expect(post!.headers.authorization).toBe('Bearer s3cret-token');
    expect(post!.headers['mcp-session-id']).toBeUndefined();
    expect(post!.headers['mcp-protocol-version']).toBeUndefined();
  });

  it('resolves a relative endpoint against the SSE URL (a path without a leading slash)', async () => {
    const f = await legacyFixture({ endpointFor: (id) => `messages?sessionId=${id}` });
    const { transport, sink } = legacyTo(`${f.origin}/v1/sse?tenant=a`);
    await transport.open();
    await call(transport, sink, 'ping');
    expect(postsTo(f).map((r) => r.url)).toEqual([`/v1/messages?sessionId=${f.sessions()[0]}`]);
  });

  it('accepts an absolute endpoint on the same origin', async () => {
    let origin = '';
    const f = await legacyFixture({ endpointFor: (id) => `${origin}/abs/messages?sessionId=${id}` });
    origin = f.origin;
    const { transport, sink } = legacyTo(f.url);
    await transport.open();
    expect(await call(transport, sink, 'ping')).toMatchObject({ result: {} });
    expect(postsTo(f).map((r) => r.url)).toEqual([`/abs/messages?sessionId=${f.sessions()[0]}`]);
  });

  it('does not POST before the endpoint event: open() waits for it and send() refuses until then', async () => {
    let stream: ServerResponse | undefined;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET') {
        startSse(res);
        stream = res;
        return;
      }
      res.writeHead(202).end();
      stream!.write(sse({ jsonrpc: '2.0', id: request.body.id, result: { ok: true } }));
    });
    const { transport, sink } = legacyTo(`${server.origin}/sse`);
    let opened = false;
    const opening = transport.open().then(() => (opened = true));
    await until(() => stream !== undefined);

    const early = await rejection(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    expect(early).toBeInstanceOf(ConnectionClosedError);
    expect(opened).toBe(false);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(0);

    stream!.write(formatSseEvent({ event: 'endpoint', data: '/messages?sessionId=abc' }));
    await opening;
    expect(await call(transport, sink, 'ping')).toMatchObject({ result: { ok: true } });
  });

  it('§50 refuses an endpoint on another origin with an error naming both, and POSTs nothing', async () => {
    const f = await legacyFixture();
    // Same server, another origin: any POST would show up in this fixture's log.
    f.settings.endpointOrigin = f.origin.replace('127.0.0.1', 'localhost');
    const { transport } = legacyTo(f.url, { headers: { authorization: 'Bearer s3cret-token' } });

    const error = await rejection(transport.open());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain(f.settings.endpointOrigin);
    expect(error.message).toContain(f.origin);
    expect(error.message).not.toContain('sessionId');
    expect(postsTo(f)).toHaveLength(0);
    expect(transport.isOpen).toBe(false);
    await until(() => f.streamCount() === 0);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toBeInstanceOf(
      ConnectionClosedError,
    );
    expect(postsTo(f)).toHaveLength(0);
  });

  it('refuses an endpoint that is not a URL', async () => {
    const f = await legacyFixture({ endpointFor: () => 'http://[not-a-host' });
    const error = await rejection(legacyTo(f.url).transport.open());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/endpoint event is not a valid URL/);
  });

  it('an endpoint that never comes ends open() with EndpointTimeoutError after endpointTimeoutMs, and releases the stream', async () => {
    const f = await legacyFixture({ noEndpoint: true });
    const timers = new ManualTimers();
    const { transport } = legacyTo(f.url, { timers, requestTimeoutMs: 4_000 });
    const opening = rejection(transport.open());
    const timer = await timers.nth(0);
    expect(timer.ms).toBe(4_000); // default: min(requestTimeoutMs, 10 s)
    await until(() => f.streamCount() === 1);
    timer.fire();

    const error = await opening;
    expect(error).toBeInstanceOf(EndpointTimeoutError);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBeUndefined();
    expect(error.message).toMatch(/no endpoint event within 4000 ms/);
    await until(() => f.streamCount() === 0);
    expect(postsTo(f)).toHaveLength(0);
  });

  it('the endpoint wait is bounded with real timers too', async () => {
    const f = await legacyFixture({ noEndpoint: true });
    const { transport } = legacyTo(f.url, { endpointTimeoutMs: 100 });
    expect(await rejection(transport.open())).toBeInstanceOf(EndpointTimeoutError);
  });

  it('a non-2xx answer to the GET is a TransportError with the status', async () => {
    const f = await legacyFixture({ getStatus: 401 });
    const error = await rejection(legacyTo(f.url).transport.open());
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(401);
  });

  it('a GET answered with another content type is a ProtocolError', async () => {
    const f = await legacyFixture({ getContentType: 'text/html' });
    const error = await rejection(legacyTo(f.url).transport.open());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/"text\/html", not text\/event-stream/);
  });

  it('a stream that ends before the endpoint event fails open()', async () => {
    const server = await scriptedServer(cleanup, (_request, res) => {
      startSse(res);
      res.end(': bye\n\n');
    });
    const error = await rejection(legacyTo(`${server.origin}/sse`).transport.open());
    expect(error).toBeInstanceOf(TransportError);
    expect(error.message).toMatch(/ended before its endpoint event/);
  });

  it('close() while opening rejects open() with ConnectionClosedError', async () => {
    const f = await legacyFixture({ noEndpoint: true });
    const { transport } = legacyTo(f.url);
    const opening = rejection(transport.open());
    await until(() => f.streamCount() === 1);
    await transport.close();
    expect(await opening).toBeInstanceOf(ConnectionClosedError);
    await until(() => f.streamCount() === 0);
  });
});

describe('messages on the stream', () => {
  it('delivers server notifications and requests from `message` events (and events without a type)', async () => {
    const server = await scriptedServer(cleanup, (_request, res) => {
      startSse(res);
      res.write(formatSseEvent({ event: 'endpoint', data: '/messages?sessionId=abc' }));
      res.write(sse({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'typed' } }));
      res.write(formatSseEvent({ data: JSON.stringify({ jsonrpc: '2.0', id: 'srv-1', method: 'ping' }) }));
      res.write(formatSseEvent({ event: 'heartbeat', data: 'not json' }));
      res.write(formatSseEvent({ event: 'endpoint', data: '/other' }));
    });
    const { transport, sink } = legacyTo(`${server.origin}/sse`);
    await transport.open();
    await until(() => sink.messages.length === 2 && sink.streamErrors.length === 1);
    expect(sink.messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'typed' } },
      { jsonrpc: '2.0', id: 'srv-1', method: 'ping' },
    ]);
    expect(sink.streamErrors[0]!.message).toMatch(/second endpoint event/);
  });

  it('a malformed message is reported to the sink and the stream goes on', async () => {
    const server = await scriptedServer(cleanup, (_request, res) => {
      startSse(res);
      res.write(formatSseEvent({ event: 'endpoint', data: '/messages?sessionId=abc' }));
      res.write(formatSseEvent({ event: 'message', data: '{"jsonrpc":"2.0", garbage' }));
      res.write(sse({ jsonrpc: '2.0', method: 'notifications/after' }));
    });
    const { transport, sink } = legacyTo(`${server.origin}/sse`);
    await transport.open();
    await until(() => sink.messages.length === 1);
    expect(sink.streamErrors).toHaveLength(1);
    expect(sink.streamErrors[0]).toBeInstanceOf(ProtocolError);
    expect(sink.messages[0]).toMatchObject({ method: 'notifications/after' });
    expect(transport.isOpen).toBe(true);
    expect(sink.closedWith).toHaveLength(0);
  });

  // undici runs body timeouts on coarse timers (about 1 s resolution): the stream must stay idle
  // well past that for a stream bounded by requestTimeoutMs to be cut, hence 2.5 s.
  it('the stream is not cut by request timeouts: a response 2.5 s later arrives though requestTimeoutMs is 100', async () => {
    const f = await legacyFixture();
    const { transport, sink } = legacyTo(f.url, { requestTimeoutMs: 100 });
    await transport.open();
    const response = await call(transport, sink, 'tools/call', { name: 'slow', arguments: { ms: 2_500 } });
    expect(response).toMatchObject({ result: { content: [{ text: 'slept 2500ms' }] } });
    expect(sink.closedWith).toHaveLength(0);
    expect(transport.isOpen).toBe(true);
    expect(f.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
  });
});

describe('POSTing messages', () => {
  it('send() resolves once the server accepted the message (202); the response comes on the stream', async () => {
    const f = await legacyFixture();
    const { transport, sink } = legacyTo(f.url);
    await transport.open();
    await transport.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'slow', arguments: { ms: 200 } },
    });
    expect(sink.messages).toHaveLength(0);
    await until(() => sink.messages.length === 1);
    expect(sink.messages[0]).toMatchObject({ id: 1, result: { content: [{ text: 'slept 200ms' }] } });
  });

  it('a 401 to the POST is a TransportError with status 401 (not retryable)', async () => {
    const f = await legacyFixture({ postStatus: 401 });
    const { transport } = legacyTo(f.url);
    await transport.open();
    const error = await rejection(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(401);
    expect((error as TransportError).retryable).toBe(false);
    expect(transport.isOpen).toBe(true);
  });

  it('error bodies never leak the token or the session id from the endpoint', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET') {
        startSse(res);
        res.write(formatSseEvent({ event: 'endpoint', data: '/messages?sessionId=sess-0123456789' }));
        return;
      }
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end(`bad request from ${String(request.headers.authorization)} in session sess-0123456789`);
    });
    const { transport } = legacyTo(`${server.origin}/sse`, { headers: { authorization: 'Bearer tok-abcdef' } });
    await transport.open();
    const error = (await rejection(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' }))) as TransportError;
    expect(error.status).toBe(400);
    expect(error.message).toContain('[redacted]');
    expect(error.message).not.toContain('tok-abcdef');
    expect(error.message).not.toContain('sess-0123456789');
  });
});

describe('the stream ends (§51)', () => {
  it('a stream closed by the server after open: isOpen turns false and the sink hears one retryable ConnectionClosedError', async () => {
    const f = await legacyFixture();
    const { transport, sink } = legacyTo(f.url);
    await transport.open();
    f.closeStreams();
    await until(() => sink.closedWith.length === 1);
    expect(transport.isOpen).toBe(false);
    const [error] = sink.closedWith;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).retryable).toBe(true);
    expect(error!.message).toMatch(/the SSE stream closed/);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toBeInstanceOf(
      ConnectionClosedError,
    );
    expect(postsTo(f)).toHaveLength(0);
  });

  it('an idle stream closed by a proxy after idleCloseMs is reported the same way', async () => {
    const f = await legacyFixture({ idleCloseMs: 100 });
    const { transport, sink } = legacyTo(f.url);
    await transport.open();
    await until(() => sink.closedWith.length === 1);
    expect(f.idleCloses).toBe(1);
    expect(transport.isOpen).toBe(false);
  });

  it('close() ends the stream on the server, does not report a lost connection, and is idempotent', async () => {
    const f = await legacyFixture();
    const { transport, sink } = legacyTo(f.url);
    const other = legacyTo(f.url);
    await transport.open();
    await other.transport.open();
    await until(() => f.streamCount() === 2);
    await transport.close();
    await transport.close();
    await until(() => f.streamCount() === 1);
    expect(sink.closedWith).toHaveLength(0);
    expect(transport.isOpen).toBe(false);
    // The shared pool is still there for the other transport (the share was released once).
    expect(other.transport.pool.destroyed).toBe(false);
    expect(await call(other.transport, other.sink, 'ping')).toMatchObject({ result: {} });
    await other.transport.close();
    expect(other.transport.pool.destroyed).toBe(true);
    await until(() => f.streamCount() === 0);
  });

  it('session bookkeeping: no session header, a generation per session, no listener, nothing to DELETE', async () => {
    const f = await legacyFixture();
    const { transport } = legacyTo(f.url);
    await transport.open();
    expect(transport.kind).toBe('sse');
    expect(transport.hasSession).toBe(false);
    const before = transport.sessionGeneration;
    transport.beginSession();
    expect(transport.sessionGeneration).toBe(before + 1);
    transport.completeSession('2024-11-05');
    expect(transport.protocolVersion).toBe('2024-11-05');
    expect(await transport.openListener()).toEqual({ kind: 'unavailable', status: 0 });
    await transport.terminateSession();
    expect(f.requests.map((r) => r.method)).toEqual(['GET']);
  });
});

describe('against the SDK SSEServerTransport', () => {
  it('opens, initializes and calls tools; a closed stream is reported', async () => {
    const server = cleanup.add(await startSdkSseServer(), (s) => s.close());
    const { transport, sink } = legacyTo(server.url);
    await transport.open();
    const init = await call(transport, sink, 'initialize', {
      protocolVersion: '2024-11-05',
      capabilities: {},
      clientInfo: { name: 'direct', version: '0' },
    });
    expect(init).toMatchObject({ result: { protocolVersion: '2024-11-05', serverInfo: { name: 'sdk-sse-fixture' } } });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(await call(transport, sink, 'tools/call', { name: 'add', arguments: { a: 2, b: 3 } })).toMatchObject({
      result: { content: [{ type: 'text', text: '5' }] },
    });

    await server.closeAllStreams();
    await until(() => sink.closedWith.length === 1);
    expect(transport.isOpen).toBe(false);
  });
});
