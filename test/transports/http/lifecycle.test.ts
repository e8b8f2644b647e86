/**
 * The handshake and shutdown as seen on the wire, plus timeouts and cancellation of requests.
 * docs/client-requirements.md §1.2 (items 5-13).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  ConnectionClosedError,
  createSupervisor,
  LATEST_PROTOCOL_VERSION,
  RequestAbortedError,
  RequestTimeoutError,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsupportedProtocolVersionError,
  VERSION,
} from '../../../src/index.js';
import {
  cancellations,
  Cleanup,
  deletes,
  fixture,
  gets,
  handshake,
  header,
  open,
  posts,
  rejection,
  settle,
  transportTo,
  until,
} from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('initialize (§1.2)', () => {
  it('§4 initialize is never batched: its POST body is one request object', async () => {
    const f = await fixture(cleanup);
    await open(cleanup, f.url);
    const initialize = posts(f.requests, 'initialize');
    expect(initialize).toHaveLength(1);
    expect(Array.isArray(initialize[0]!.body)).toBe(false);
    expect(initialize[0]!.body).toMatchObject({ jsonrpc: '2.0', method: 'initialize' });
    expect(Number.isInteger(initialize[0]!.body.id)).toBe(true);
  });

  it('§5 the first interaction with the server is the initialize POST', async () => {
    const f = await fixture(cleanup);
    await open(cleanup, f.url);
    expect(f.requests[0]!.method).toBe('POST');
    expect(f.requests[0]!.rpcMethod).toBe('initialize');
  });

  it('§6 initialize carries protocolVersion, capabilities and clientInfo (name and version)', async () => {
    const f = await fixture(cleanup);
    await open(cleanup, f.url);
    const params = posts(f.requests, 'initialize')[0]!.body.params;
    expect(typeof params.protocolVersion).toBe('string');
    expect(params.capabilities).toBeTypeOf('object');
    expect(params.clientInfo).toEqual({ name: 'mcp-supervisor', version: VERSION });
  });

  it('§6 a caller-supplied clientInfo is sent as-is', async () => {
    const f = await fixture(cleanup);
    await open(cleanup, f.url, {}, { clientInfo: { name: 'my-agent', version: '2.3.4' } });
    expect(posts(f.requests, 'initialize')[0]!.body.params.clientInfo).toEqual({ name: 'my-agent', version: '2.3.4' });
  });

  it('§7 offers the latest protocol version it supports', async () => {
    const f = await fixture(cleanup);
    await open(cleanup, f.url);
    expect(LATEST_PROTOCOL_VERSION).toBe(SUPPORTED_PROTOCOL_VERSIONS[0]);
    expect(posts(f.requests, 'initialize')[0]!.body.params.protocolVersion).toBe('2025-11-25');
  });

  it('§8 continues when the server answers an older version the client supports (2024-11-05)', async () => {
    const f = await fixture(cleanup, { protocolVersion: '2024-11-05' });
    const { handle } = await open(cleanup, f.url);
    expect(handle.status().protocolVersion).toBe('2024-11-05');
    await handle.callTool('echo', { text: 'old' });
    expect(header(posts(f.requests, 'tools/call')[0]!, 'mcp-protocol-version')).toBe('2024-11-05');
  });

  it('§8 disconnects with UnsupportedProtocolVersionError when the server negotiates 1999-01-01', async () => {
    const f = await fixture(cleanup, { protocolVersion: '1999-01-01' });
    const error = await rejection(connect({ url: f.url }, { name: 'old' }));
    expect(error).toBeInstanceOf(UnsupportedProtocolVersionError);
    expect((error as UnsupportedProtocolVersionError).version).toBe('1999-01-01');
    expect(error.message).toContain('1999-01-01');
    // no initialized, no listener; the session is ended (DELETE) instead
    await settle(50);
    expect(posts(f.requests, 'notifications/initialized')).toHaveLength(0);
    expect(gets(f.requests)).toHaveLength(0);
    expect(deletes(f.requests)).toHaveLength(1);
    expect(f.sessions.size).toBe(0);
    // and no restart loop: one initialize only
    expect(posts(f.requests, 'initialize')).toHaveLength(1);
  });

  it('§9 sends notifications/initialized once, as a notification, right after the InitializeResult', async () => {
    const f = await fixture(cleanup);
    await open(cleanup, f.url);
    const initialized = posts(f.requests, 'notifications/initialized');
    expect(initialized).toHaveLength(1);
    expect(initialized[0]!.body).toEqual({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(f.requests.map((r) => r.rpcMethod ?? r.method).slice(0, 2)).toEqual([
      'initialize',
      'notifications/initialized',
    ]);
  });

  it('§10 holds requests issued during initialize until the handshake is done', async () => {
    const f = await fixture(cleanup);
    f.faults.delayMs = 150; // a slow initialize
    const supervisor = cleanup.add(
      createSupervisor({ servers: { slow: { url: f.url, protocolVersion: 'legacy' } } }),
      (s) => s.stop(),
    );
    const started = supervisor.start();
    const early = supervisor.server('slow').callTool('echo', { text: 'early' });
    expect(supervisor.server('slow').status().requests.waiting).toBe(1);
    await started;
    expect((await early).content[0]!.text).toBe('early');
    const order = f.requests.map((r) => r.rpcMethod ?? r.method);
    expect(order).toEqual(['initialize', 'notifications/initialized', 'GET', 'tools/call']);
  });

  it('§11 uses the negotiated version for the rest of the session', async () => {
    const f = await fixture(cleanup, { protocolVersion: '2025-06-18' });
    const { handle } = await open(cleanup, f.url);
    expect(handle.status().protocolVersion).toBe('2025-06-18');
    await handle.listTools();
    for (const request of f.requests.slice(1)) expect(header(request, 'mcp-protocol-version')).toBe('2025-06-18');
  });

  it('§12 never cancels initialize: a timed-out initialize puts no notifications/cancelled on the wire', async () => {
    const f = await fixture(cleanup);
    f.faults.delayMs = 300;
    const error = await rejection(
      connect({ url: f.url, requestTimeoutMs: 50, protocolVersion: 'legacy' }, { name: 'slow-init' }),
    );
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).method).toBe('initialize');
    await settle(350); // the server has answered by now
    expect(cancellations(f.requests)).toHaveLength(0);
    expect(posts(f.requests).map((r) => r.rpcMethod)).toEqual(['initialize']);
  });

  it('§13 close() ends the session: DELETE, the GET stream is closed, later calls fail fast', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    expect(f.getStreamCount()).toBe(1);
    await handle.close();
    expect(deletes(f.requests)).toHaveLength(1);
    await until(() => f.getStreamCount() === 0);
    expect(f.sessions.size).toBe(0);
    expect(['closed', 'stopped']).toContain(handle.status().state);
    await expect(handle.callTool('echo', { text: 'late' })).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('§13 close() fails requests still in flight with ConnectionClosedError', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    const slow = rejection(handle.callTool('slow', { ms: 2_000 }));
    await until(() => posts(f.requests, 'tools/call').length === 1);
    const started = Date.now();
    await handle.close();
    expect(await slow).toBeInstanceOf(ConnectionClosedError);
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});

describe('timeouts and cancellation', () => {
  it('a per-request timeoutMs rejects with RequestTimeoutError and sends notifications/cancelled with the request id', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url, { requestTimeoutMs: 10_000 });
    const started = Date.now();
    const error = await rejection(handle.callTool('slow', { ms: 1_000 }, { timeoutMs: 80 }));
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).timeoutMs).toBe(80);
    expect(Date.now() - started).toBeLessThan(800);
    const id = posts(f.requests, 'tools/call')[0]!.body.id;
    await until(() => cancellations(f.requests).length === 1);
    expect(cancellations(f.requests)[0]!.body.params).toMatchObject({ requestId: id });
    expect((await handle.callTool('echo', { text: 'next' })).content[0]!.text).toBe('next');
  });

  it('an aborted signal rejects with RequestAbortedError and sends notifications/cancelled with the request id', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    const controller = new AbortController();
    const call = handle.callTool('slow', { ms: 1_000 }, { signal: controller.signal });
    await until(() => posts(f.requests, 'tools/call').length === 1);
    controller.abort();
    const error = await rejection(call);
    expect(error).toBeInstanceOf(RequestAbortedError);
    const id = posts(f.requests, 'tools/call')[0]!.body.id;
    await until(() => cancellations(f.requests).length === 1);
    expect(cancellations(f.requests)[0]!.body.params).toMatchObject({ requestId: id });
    expect((await handle.callTool('echo', { text: 'next' })).content[0]!.text).toBe('next');
  });

  it('a per-request timeoutMs longer than requestTimeoutMs is honoured (the call is not cut at requestTimeoutMs)', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url, { requestTimeoutMs: 1_000 });
    const outcome = await handle.callTool('slow', { ms: 1_600 }, { timeoutMs: 5_000 }).catch((error: Error) => error);
    // Today the POST is bounded by requestTimeoutMs (undici headersTimeout) and fails with
    // TransportError "timed out": the runtime does not pass timeoutMs to transport.send.
    expect(outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : outcome).toEqual({
      content: [{ type: 'text', text: 'slept 1600ms' }],
    });
  });

  it('the transport bounds a POST by the timeoutMs it is given, not by requestTimeoutMs', async () => {
    const f = await fixture(cleanup);
    const { transport, sink } = transportTo(cleanup, f.url, { requestTimeoutMs: 1_000 });
    await handshake(transport, sink);
    sink.awaiting.add('long');
    await transport.send(
      { jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'slow', arguments: { ms: 1_600 } } },
      { timeoutMs: 5_000 },
    );
    expect(sink.messages.at(-1)).toMatchObject({ id: 'long', result: { content: [{ text: 'slept 1600ms' }] } });
  });

  it('a signal that is already aborted rejects at once and sends nothing', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    const before = f.requests.length;
    await expect(handle.callTool('echo', { text: 'x' }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      RequestAbortedError,
    );
    await settle(30);
    expect(f.requests.length).toBe(before);
  });
});
