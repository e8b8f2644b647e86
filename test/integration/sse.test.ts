/**
 * Legacy HTTP+SSE servers through the public API (issue #3 items 1, 4 and 6; docs/client-requirements.md
 * §47, §49-51): a hand-written legacy fixture with fault switches and a server built with the
 * SDK's SSEServerTransport. Timing is observed through transitions and the fixture, never slept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  ConnectionClosedError,
  EndpointTimeoutError,
  ProtocolError,
  TransportError,
  type ServerHandle,
  OutcomeUnknownError,
} from '../../src/index.js';
import {
  startLegacySseFixture,
  type LegacyFixtureSettings,
  type LegacySseFixture,
} from '../../servers/legacy-sse-fixture.js';
import { startSdkSseServer, type SdkSseServer } from '../../servers/sdk-sse-server.js';
import { nextTransition, quickRestart, recordTransitions } from './helpers.js';
import { rejection as failure } from '../transports/helpers.js';

let fixture: LegacySseFixture | undefined;
let sdk: SdkSseServer | undefined;
let handle: ServerHandle | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await fixture?.close();
  await sdk?.close();
  handle = undefined;
  fixture = undefined;
  sdk = undefined;
});

async function legacy(settings?: LegacyFixtureSettings): Promise<LegacySseFixture> {
  fixture = await startLegacySseFixture(settings);
  return fixture;
}

const gets = (f: LegacySseFixture) => f.requests.filter((r) => r.method === 'GET');
const posts = (f: LegacySseFixture, rpcMethod?: string) =>
  f.requests.filter((r) => r.method === 'POST' && (rpcMethod === undefined || r.rpcMethod === rpcMethod));

describe('legacy HTTP+SSE through connect()', () => {
  it('a URL ending in /sse is legacy SSE: GET, endpoint, initialize over POST, tools work', async () => {
    const f = await legacy();
    handle = await connect({ url: f.url, headers: { authorization: 'Bearer s3cret-token' } }, { name: 'old' });

    expect(handle.status()).toMatchObject({
      state: 'ready',
      transport: 'sse',
      protocolVersion: '2024-11-05',
      serverInfo: { name: 'legacy-fixture' },
    });
    expect(handle.status().sessionId).toBeUndefined();
    const tools = await handle.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['echo', 'slow']);
    expect((await handle.callTool('echo', { text: 'over sse' })).content[0]).toEqual({
      type: 'text',
      text: 'over sse',
    });

    // The first request is the GET; nothing is POSTed to the SSE URL itself; every POST goes to the endpoint.
    expect(f.requests[0]!.method).toBe('GET');
    expect(gets(f)).toHaveLength(1);
    const sessionId = f.sessions()[0]!;
    expect(posts(f).every((r) => r.url === `/messages?sessionId=${sessionId}`)).toBe(true);
    expect(posts(f).map((r) => r.rpcMethod)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/call',
    ]);
    expect(posts(f).every((r) => r.headers.authorization === 'Bearer s3cret-token')).toBe(true);
  });

  it("type: 'sse' uses legacy SSE on any URL", async () => {
    const f = await legacy();
    handle = await connect({ url: `${f.origin}/events`, type: 'sse' }, { name: 'old' });
    expect(handle.status().transport).toBe('sse');
    expect((await handle.callTool('echo', { text: 'typed' })).content[0]).toMatchObject({ text: 'typed' });
    expect(gets(f)[0]!.url).toBe('/events');
  });

  it('works against a server built with the SDK SSEServerTransport', async () => {
    sdk = await startSdkSseServer();
    handle = await connect({ url: sdk.url }, { name: 'sdk-old' });
    expect(handle.status()).toMatchObject({
      state: 'ready',
      transport: 'sse',
      serverInfo: { name: 'sdk-sse-fixture' },
    });
    const tools = await handle.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['add', 'echo']);
    expect((await handle.callTool('add', { a: 2, b: 3 })).content[0]).toEqual({ type: 'text', text: '5' });
    expect((await handle.callTool('echo', { text: 'sdk' })).content[0]).toEqual({ type: 'text', text: 'sdk' });
    expect(sdk.gets).toBe(1);
  });

  it('§50 an endpoint on another origin fails with an error naming both origins, and nothing is POSTed', async () => {
    const f = await legacy();
    const foreign = f.origin.replace('127.0.0.1', 'localhost');
    f.settings.endpointOrigin = foreign;
    const error = await failure(
      connect({ url: f.url, headers: { authorization: 'Bearer s3cret-token' } }, { name: 'old' }),
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain(foreign);
    expect(error.message).toContain(f.origin);
    expect(posts(f)).toHaveLength(0);
    await expect.poll(() => f.streamCount()).toBe(0);
  });

  it('an endpoint event that never comes fails with EndpointTimeoutError, bounded by requestTimeoutMs', async () => {
    const f = await legacy({ noEndpoint: true });
    const error = await failure(connect({ url: f.url, requestTimeoutMs: 200 }, { name: 'old' }));
    expect(error).toBeInstanceOf(EndpointTimeoutError);
    expect(error.message).toMatch(/no endpoint event within 200 ms/);
    expect(posts(f)).toHaveLength(0);
  });

  it('a 401 to the POSTs fails with TransportError 401', async () => {
    const f = await legacy({ postStatus: 401 });
    const error = await failure(connect({ url: f.url }, { name: 'old' }));
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(401);
  });

  it('§47 auto: a 401 to the Streamable HTTP initialize does not fall back to legacy SSE', async () => {
    const f = await legacy({ postStatus: 401 });
    const error = await failure(connect({ url: `${f.origin}/mcp`, type: 'auto' }, { name: 'old' }));
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(401);
    expect(gets(f)).toHaveLength(0);
  });

  it('§46 auto: a 405 to the Streamable HTTP initialize falls back to the legacy stream', async () => {
    const f = await legacy();
    handle = await connect({ url: `${f.origin}/mcp` }, { name: 'old' });
    expect(handle.status().transport).toBe('sse');
    expect((await handle.callTool('echo', { text: 'fell back' })).content[0]).toMatchObject({ text: 'fell back' });
    expect(posts(f, 'initialize').map((r) => r.url)).toEqual(['/mcp', `/messages?sessionId=${f.sessions()[0]}`]);
    // The stream opened by the fallback probe is the one used: no second GET.
    expect(gets(f).map((r) => r.url)).toEqual(['/mcp']);
  });

  it('close() ends the stream on the server and later calls fail fast', async () => {
    const f = await legacy();
    handle = await connect({ url: f.url }, { name: 'old' });
    expect(f.streamCount()).toBe(1);
    await handle.close();
    await expect.poll(() => f.streamCount()).toBe(0);
    expect(f.requests.filter((r) => r.method === 'DELETE')).toHaveLength(0);
    await expect(handle.callTool('echo', { text: 'late' })).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('close() releases the SDK server session', async () => {
    sdk = await startSdkSseServer();
    handle = await connect({ url: sdk.url }, { name: 'sdk-old' });
    expect(sdk.sessionCount()).toBe(1);
    await handle.close();
    await expect.poll(() => sdk!.sessionCount()).toBe(0);
  });
});

describe('idle closes (§51, issue #3 item 4)', () => {
  it('a stream closed while idle is re-established with a NEW stream and a new initialize; a call issued after the close succeeds', async () => {
    const f = await legacy();
    handle = await connect({ url: f.url, restart: quickRestart(5) }, { name: 'old' });
    const transitions = recordTransitions(handle);
    const firstSession = f.sessions()[0];
    // Armed only now (by the next write on the stream), so a slow handshake is never cut.
    f.settings.idleCloseMs = 150;
    await handle.callTool('echo', { text: 'before the close' });

    await nextTransition(handle, (t) => t.from === 'ready' && t.to === 'reconnecting');
    expect(f.idleCloses).toBe(1);
    f.settings.idleCloseMs = undefined; // the new stream stays up
    const afterClose = handle.callTool('echo', { text: 'after the close' });

    expect((await afterClose).content[0]).toMatchObject({ text: 'after the close' });
    expect(gets(f)).toHaveLength(2);
    expect(posts(f, 'initialize')).toHaveLength(2);
    expect(posts(f, 'notifications/initialized')).toHaveLength(2);
    const secondSession = f.sessions()[0];
    expect(secondSession).not.toBe(firstSession);
    // The call went to the new session only.
    const calls = posts(f, 'tools/call');
    expect(calls.map((r) => r.url)).toEqual([
      `/messages?sessionId=${firstSession}`,
      `/messages?sessionId=${secondSession}`,
    ]);
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual([
      'ready->reconnecting',
      'reconnecting->connecting',
      'connecting->initializing',
      'initializing->ready',
    ]);
    expect(transitions[0]!.error).toMatch(/the SSE stream closed/);
    expect(handle.status()).toMatchObject({ state: 'ready', transport: 'sse' });
  });

  it('a call in flight when the stream closes has an unknown outcome: not known safe, it fails with a retryable OutcomeUnknownError; the next call works', async () => {
    const f = await legacy();
    handle = await connect({ url: f.url, restart: quickRestart(5) }, { name: 'old' });
    const inFlight = handle.callTool('slow', { ms: 5_000 });
    await expect.poll(() => posts(f, 'tools/call').length).toBe(1);
    const ready = nextTransition(handle, (t) => t.to === 'ready');
    f.closeStreams();

    const error = await failure(inFlight);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as OutcomeUnknownError).retryable).toBe(true);
    expect(error.message).toMatch(/the connection was lost/);
    await ready;
    expect((await handle.callTool('echo', { text: 'next' })).content[0]).toMatchObject({ text: 'next' });
    expect(gets(f)).toHaveLength(2);
  });

  it('the SDK server: streams ended by the server are re-established with a new session', async () => {
    sdk = await startSdkSseServer();
    handle = await connect({ url: sdk.url, restart: quickRestart(5) }, { name: 'sdk-old' });
    const lost = nextTransition(handle, (t) => t.to === 'reconnecting');
    await sdk.closeAllStreams();
    await lost;
    const afterClose = handle.callTool('add', { a: 20, b: 22 });
    expect((await afterClose).content[0]).toMatchObject({ text: '42' });
    expect(sdk.gets).toBe(2);
    expect(sdk.posts.filter((m) => m === 'initialize')).toHaveLength(2);
    expect(sdk.sessionCount()).toBe(1);
  });

  it('a per-call timeout longer than requestTimeoutMs is honoured: the slower answer arrives on the same, uncut stream', async () => {
    const f = await legacy();
    handle = await connect({ url: f.url, requestTimeoutMs: 300 }, { name: 'old' });
    const result = await handle.callTool('slow', { ms: 600 }, { timeoutMs: 5_000 });
    expect(result.content[0]).toMatchObject({ text: 'slept 600ms' });
    expect(gets(f)).toHaveLength(1);
    expect(handle.status().state).toBe('ready');
  });
});

describe('legacy HTTP+SSE: keepalive and interrupted connects', () => {
  it('the keepalive probes legacy servers too (ping over the endpoint, answered on the stream)', async () => {
    const f = await legacy();
    handle = await connect(
      { url: f.url, keepalive: { intervalMs: 30, timeoutMs: 500, maxMissed: 2 } },
      { name: 'old' },
    );
    await expect.poll(() => posts(f, 'ping').length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    expect(handle.status().keepalive).toMatchObject({ missed: 0, lastRttMs: expect.any(Number) });
    expect(handle.status().state).toBe('ready');
  });

  it('stop() during connect ends the attempt and never triggers a fallback', async () => {
    const { startHttpFixture } = await import('../../servers/http-fixture.js');
    const slow = await startHttpFixture();
    slow.faults.delayMs = 2_000; // initialize is in flight when stop() comes
    const { createSupervisor } = await import('../../src/index.js');
    const sup = createSupervisor({ servers: { slow: { url: slow.url, protocolVersion: 'legacy' } } });
    const initializing = nextTransition(sup, (t) => t.to === 'initializing');
    void sup.start();
    await initializing;
    await sup.stop();
    expect(sup.status().slow?.state).toBe('closed');
    // Nothing but (at most) the interrupted initialize reached the server: no GET probe for a legacy endpoint.
    expect(slow.requests.filter((r) => r.method !== 'POST' || r.rpcMethod !== 'initialize')).toEqual([]);
    expect(sup.status().slow?.transport).toBeUndefined();
    await slow.close();
  });
});
