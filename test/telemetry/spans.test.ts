/**
 * Issue #19 items 1 and 3, with the real OpenTelemetry SDK registered: one CLIENT span per
 * request by the MCP semantic conventions over Streamable HTTP, legacy SSE and stdio; the trace
 * context reaching an official-SDK server's handler in `_meta`; a server request continuing the
 * trace it names; a session expiry seen as one replay inside a recover episode.
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect, type ServerHandle } from '../../src/index.js';
import { startHttpFixture } from '../../servers/http-fixture.js';
import { startLegacySseFixture } from '../../servers/legacy-sse-fixture.js';
import { FIXTURE, newTag } from '../transports/stdio/helpers.js';
import { startMetaServer } from './meta-server.js';
import { pointsOf, registerSdk, spansNamed, total, type RegisteredSdk } from './sdk.js';

let sdk: RegisteredSdk;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(() => {
  sdk = registerSdk();
});
afterAll(async () => {
  await sdk.shutdown();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  sdk.reset();
});

async function open(config: Parameters<typeof connect>[0], options: Parameters<typeof connect>[1] = {}) {
  const handle = await connect(config, { name: 'fx', ...options });
  cleanups.push(() => handle.close());
  return handle;
}

function only(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spansNamed(spans, name);
  expect(found, `spans named '${name}'`).toHaveLength(1);
  return found[0]!;
}

function traceparentOf(span: ReadableSpan): string {
  const { traceId, spanId } = span.spanContext();
  return `00-${traceId}-${spanId}-01`;
}

describe('a tool call is one CLIENT span by the MCP conventions', () => {
  it('over Streamable HTTP: name, attributes, the traceparent in params._meta, the duration metric', async () => {
    const fixture = await startHttpFixture();
    cleanups.push(() => fixture.close());
    const handle = await open({ url: fixture.url });
    await handle.callTool('echo', { text: 'hi' });

    const span = only(sdk.spans(), 'tools/call echo');
    const port = Number(new URL(fixture.url).port);
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '127.0.0.1',
      'server.port': port,
      'mcp_supervisor.attempt': 1,
    });
    const post = fixture.requests.find((r) => r.rpcMethod === 'tools/call')!;
    expect(span.attributes['jsonrpc.request.id']).toBe(String(post.body.id));
    expect(post.body.params._meta.traceparent).toBe(traceparentOf(span));
    expect(span.attributes['error.type']).toBeUndefined();

    // The handshake is a child of the connect episode, which records the transitions in words.
    const connectSpan = only(sdk.spans(), 'mcp_supervisor.connect');
    const initialize = only(sdk.spans(), 'initialize');
    expect(initialize.parentSpanContext?.spanId).toBe(connectSpan.spanContext().spanId);
    expect(connectSpan.events.map((e) => e.name)).toEqual([
      'connecting: start',
      // protocolVersion 'auto': the server/discover probe finds a 2025-era server, which is initialized.
      'discovering: transport ready',
      'initializing: legacy server: initializing',
      'ready: initialized',
    ]);

    const metrics = await sdk.metrics();
    const duration = metrics.get('mcp.client.operation.duration');
    expect(duration?.descriptor.unit).toBe('s');
    expect(total(metrics.get('mcp_supervisor.connection.transitions'), { 'mcp_supervisor.state': 'ready' })).toBe(1);
    const points = duration!.dataPoints.filter((p) => p.attributes['mcp.method.name'] === 'tools/call');
    expect(points).toHaveLength(1);
    expect(points[0]!.attributes).toMatchObject({ 'gen_ai.tool.name': 'echo', 'server.port': port });
  });

  it("keeps the caller's own _meta beside the trace context (and a progress token)", async () => {
    const fixture = await startHttpFixture();
    cleanups.push(() => fixture.close());
    const handle = await open({ url: fixture.url });
    await handle.request(
      'tools/call',
      { name: 'echo', arguments: { text: 'x' }, _meta: { 'example.com/mine': 'kept' } },
      { onprogress: () => {} },
    );
    const post = fixture.requests.find((r) => r.rpcMethod === 'tools/call')!;
    expect(post.body.params._meta).toEqual({
      'example.com/mine': 'kept',
      traceparent: traceparentOf(only(sdk.spans(), 'tools/call echo')),
      progressToken: expect.any(String),
    });
  });

  it('over legacy SSE', async () => {
    const fixture = await startLegacySseFixture();
    cleanups.push(() => fixture.close());
    const handle = await open({ url: fixture.url, type: 'sse' });
    await handle.callTool('echo', { text: 'hi' });

    const span = only(sdk.spans(), 'tools/call echo');
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'network.transport': 'tcp',
      'mcp_supervisor.transport': 'sse',
      'server.address': '127.0.0.1',
    });
    expect(span.attributes['jsonrpc.request.id']).toMatch(/^\d+$/);
  });

  it('over stdio: network.transport pipe, no server address', async () => {
    const handle = await open({ command: process.execPath, args: [FIXTURE, ...newTag()] });
    await handle.callTool('echo', { text: 'hi' });

    const span = only(sdk.spans(), 'tools/call echo');
    expect(span.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'network.transport': 'pipe' });
    expect(span.attributes['server.address']).toBeUndefined();
  });

  it('a JSON-RPC error answer sets error.type, rpc.response.status_code and the status', async () => {
    const fixture = await startHttpFixture();
    cleanups.push(() => fixture.close());
    const handle = await open({ url: fixture.url });
    await expect(handle.request('no/such-method', {})).rejects.toThrow();

    const span = only(sdk.spans(), 'no/such-method');
    expect(span.attributes['rpc.response.status_code']).toBe('-32601');
    expect(span.attributes['error.type']).toBe('-32601');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('trace context crosses to the server and back', () => {
  it("reaches an official-SDK server's handler in params._meta, as the child of the caller's span", async () => {
    const server = await startMetaServer();
    cleanups.push(() => server.close());
    const handle = await open({ url: server.url, type: 'http' });
    const caller = trace.getTracer('test').startSpan('agent step');
    const result = await trace
      .getTracer('test')
      .startActiveSpan('agent step', (active) => handle.callTool('trace-meta').finally(() => active.end()));
    caller.end();

    const received = JSON.parse(String(result.content[0]?.text)) as Record<string, string>;
    const span = only(sdk.spans(), 'tools/call trace-meta');
    const agent = sdk
      .spans()
      .find((s) => s.name === 'agent step' && s.spanContext().spanId === span.parentSpanContext?.spanId);
    expect(agent).toBeDefined();
    expect(received.traceparent).toBe(traceparentOf(span));
  });

  it('a server request carrying _meta trace context runs its handler inside that trace (a SERVER span)', async () => {
    const fixture = await startHttpFixture();
    cleanups.push(() => fixture.close());
    let seen: { traceId: string } | undefined;
    const handle = await open(
      { url: fixture.url },
      {
        handlers: {
          roots: () => {
            seen = trace.getActiveSpan()?.spanContext();
            return { roots: [] };
          },
        },
      },
    );
    await vi.waitFor(() => expect(fixture.getStreamCount()).toBe(1));
    const remote = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    fixture.push({ jsonrpc: '2.0', id: 'srv-1', method: 'roots/list', params: { _meta: { traceparent: remote } } });
    await vi.waitFor(() => expect(fixture.requests.some((r) => r.body?.id === 'srv-1')).toBe(true));

    expect(seen?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    const span = only(sdk.spans(), 'roots/list');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(span.attributes['jsonrpc.request.id']).toBe('srv-1');
    void handle;
  });
});

describe('notifications', () => {
  it('a notification is a CLIENT span too, without a request id, its trace context in _meta', async () => {
    const fixture = await startHttpFixture();
    cleanups.push(() => fixture.close());
    const handle = await open({ url: fixture.url });
    await handle.notify('notifications/roots/list_changed');

    const span = only(sdk.spans(), 'notifications/roots/list_changed');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.attributes['mcp.method.name']).toBe('notifications/roots/list_changed');
    expect(span.attributes['jsonrpc.request.id']).toBeUndefined();
    const sent = fixture.requests.find((r) => r.rpcMethod === 'notifications/roots/list_changed')!;
    expect(sent.body.params._meta.traceparent).toBe(traceparentOf(span));
  });

  it('a server notification carrying _meta trace context is delivered inside that trace', async () => {
    const fixture = await startHttpFixture();
    cleanups.push(() => fixture.close());
    const handle = await open({ url: fixture.url });
    const seen = new Promise<string | undefined>((resolve) =>
      handle.on('log', () => resolve(trace.getActiveSpan()?.spanContext().traceId)),
    );
    await vi.waitFor(() => expect(fixture.getStreamCount()).toBe(1));
    const remote = '00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01';
    fixture.push({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: 'hello', _meta: { traceparent: remote } },
    });

    expect(await seen).toBe('1af7651916cd43dd8448eb211c80319c');
    const span = only(sdk.spans(), 'notifications/message');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.parentSpanContext?.spanId).toBe('c7ad6b7169203331');
  });
});

describe('recovery is visible', () => {
  it('a session expiry: one replay event on the request, one recover episode, counted in the metrics', async () => {
    const fixture = await startHttpFixture();
    cleanups.push(() => fixture.close());
    const handle: ServerHandle = await open({ url: fixture.url });
    await handle.callTool('echo', { text: 'before' });
    sdk.reset();
    fixture.expireAllSessions();
    await handle.callTool('echo', { text: 'after' });

    const span = only(sdk.spans(), 'tools/call echo');
    const replays = span.events.filter((e) => e.name.startsWith('replayed'));
    expect(replays.map((e) => e.name)).toEqual(['replayed after session expiry']);
    expect(replays[0]!.attributes?.['mcp_supervisor.attempt']).toBe(2);
    expect(span.attributes['mcp_supervisor.attempt']).toBe(2);
    const replayPost = fixture.requests.filter((r) => r.rpcMethod === 'tools/call').at(-1)!;
    expect(span.attributes['jsonrpc.request.id']).toBe(String(replayPost.body.id));

    const recover = only(sdk.spans(), 'mcp_supervisor.recover');
    expect(recover.attributes['mcp_supervisor.cause']).toBe('session expired (HTTP 404)');
    expect(recover.events.map((e) => e.name)).toEqual([
      'expired: session expired (HTTP 404)',
      'reinitializing: session expired (HTTP 404)',
      'ready: initialized',
    ]);
    // The re-initialize is a child of the recover episode.
    const initialize = only(sdk.spans(), 'initialize');
    expect(initialize.parentSpanContext?.spanId).toBe(recover.spanContext().spanId);

    const metrics = await sdk.metrics();
    const here = { 'server.port': Number(new URL(fixture.url).port) };
    expect(total(metrics.get('mcp_supervisor.requests.replayed'), here)).toBe(1);
    expect(total(metrics.get('mcp_supervisor.session.reinitializations'), here)).toBe(1);
    const sessions = pointsOf(metrics.get('mcp.client.session.duration'), here);
    expect(sessions.map((p) => p.attributes['error.type'])).toEqual(['session_expired']);
    expect(sessions[0]!.attributes['mcp.protocol.version']).toBe('2025-11-25');
  });
});
