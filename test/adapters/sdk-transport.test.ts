/**
 * `mcp-supervisor/sdk`: the official SDK's own `Client`, v1 (1.32.x) and v2 (2.4.x), unchanged,
 * over `supervisedTransport()`, against real servers: the SDK's example server restarted (400
 * and 404 for the old session), down for a while, killed mid-call; a tool server whose tools
 * change; a v2 stdio server in modern-only mode. In each the Client sees answers, never its
 * `onclose`; the rules the SDK's own code imposes on a transport are checked one by one.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  supervisedTransport,
  SUPERVISOR_ERROR,
  type SupervisedTransport,
  type WireMessage,
} from '../../src/adapters/sdk/index.js';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { startHttpFixture } from '../../servers/http-fixture.js';
import { startSdkExampleProcess, type SdkExampleProcess } from '../../servers/fixture-process.js';
import { startToolServer, type ToolServer } from '../catalog/tool-server.js';
import { startStateServer, type StateServer } from '../../servers/sdk-state-server.js';
import { nextTransition } from '../integration/helpers.js';
import { until } from './servers.js';
import { clientNoticesClose, openClient, strayMessages, type SdkVersion, type TestClient } from './sdk-clients.js';

const FAST = {
  restart: { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } },
  revive: { initialMs: 20, maxMs: 50 },
  keepalive: false as const,
};
const V2_STDIO = fileURLToPath(new URL('../../servers/v2-stdio-server.mjs', import.meta.url));

let status400: SdkExampleServer;
let status404: SdkExampleServer;
let tools: ToolServer;
let killable: SdkExampleProcess;
let state: StateServer;
const opened: TestClient[] = [];

beforeAll(async () => {
  [status400, status404, tools, killable, state] = await Promise.all([
    startSdkExampleServer(),
    startSdkExampleServer({ unknownSessionStatus: 404 }),
    startToolServer([{ name: 'wait', hang: true }, { name: 'first' }]),
    startSdkExampleProcess({ stallTools: ['lookup', 'increment'] }),
    startStateServer(),
  ]);
}, 30_000);

// A connection left open on a shared server would re-initialize after the next test's restart
// and be counted in that test's initialize requests.
afterEach(async () => {
  await Promise.all(opened.splice(0).map((client) => client.close().catch(() => {})));
});

afterAll(async () => {
  tools?.release();
  await Promise.all([status400?.close(), status404?.close(), tools?.close(), killable?.close(), state?.close()]);
});

async function open(version: SdkVersion, transport: SupervisedTransport, options?: Parameters<typeof openClient>[2]) {
  const client = await openClient(version, transport, options);
  opened.push(client);
  return client;
}

function text(result: { content: Array<{ text?: string }> }): string | undefined {
  return result.content[0]?.text;
}

describe.each(['v1', 'v2'] as const)('the SDK %s Client over supervisedTransport', (version) => {
  it('sessionId reads undefined until the supervised handshake; the Client learns the capabilities from it', async () => {
    const transport = supervisedTransport({ url: status400.url, ...FAST });
    await transport.start();
    expect(transport.sessionId).toBeUndefined(); // a Client that saw one would skip initialize
    const client = await open(version, transport);
    expect(transport.sessionId).toEqual(expect.any(String));
    expect(client.serverVersion()).toEqual({ name: 'sdk-example', version: '1.0.0' });
    expect(client.serverCapabilities()).toHaveProperty('tools');
    expect(await client.toolNames()).toEqual(['echo', 'lookup', 'upsert', 'increment']);
    expect(transport.protocolVersion).toBe(transport.server!.status().protocolVersion);
  });

  it.each([
    ['400 "No valid session ID provided"', () => status400],
    ['404 "Session not found"', () => status404],
  ])('a restart answering %s: every call answered, one re-initialize the Client never sees', async (_, server) => {
    const transport = supervisedTransport({ url: server().url, ...FAST });
    const client = await open(version, transport);
    const learned = { info: client.serverVersion(), capabilities: client.serverCapabilities() };
    const initializes = server().requests()['initialize'] ?? 0;
    await server().restart();
    await clientNoticesClose();
    const results = await Promise.all([0, 1, 2].map((i) => client.call('echo', { text: `after ${i}` })));
    expect(results.map(text)).toEqual(['after 0', 'after 1', 'after 2']);
    expect(await client.toolNames()).toEqual(['echo', 'lookup', 'upsert', 'increment']);
    expect(server().requests()['initialize']).toBe(initializes + 1);
    expect({ info: client.serverVersion(), capabilities: client.serverCapabilities() }).toEqual(learned);
    expect(client.closes).toBe(0);
    // Our own traffic (the re-initialize, its initialized, the probe) never reached the Client.
    expect(strayMessages(client.seen)).toEqual([]);
    expect(client.seen.filter((m) => m.method !== undefined && m.id === undefined).map((m) => m.method)).toEqual([
      'notifications/tools/list_changed', // the new session may list other tools: the Client reads them again
    ]);
  });

  it('an outage: calls sent while the server is down are held and answered when it is back; onerror, not onclose', async () => {
    const transport = supervisedTransport({ url: status400.url, ...FAST });
    const client = await open(version, transport);
    await status400.stop();
    await clientNoticesClose();
    const down = nextTransition(transport.server!, (t) => t.to === 'reconnecting' || t.to === 'failed');
    const calls = [0, 1, 2].map((i) => client.call('echo', { text: `held ${i}` }));
    await down;
    expect(transport.server!.status().requests.waiting).toBeGreaterThan(0);
    await status400.start();
    expect((await Promise.all(calls)).map(text)).toEqual(['held 0', 'held 1', 'held 2']);
    expect(client.closes).toBe(0);
    expect(client.errors.length).toBeGreaterThan(0); // told, as non-fatal errors
  });

  it('listChanged across a re-initialize: the Client hears of the new session and of later changes', async () => {
    tools.setTools([{ name: 'wait', hang: true }, { name: 'first' }]);
    const transport = supervisedTransport({ url: tools.url, ...FAST });
    const client = await open(version, transport);
    let changes = 0;
    client.onToolsChanged(() => changes++);
    expect(await client.toolNames()).toEqual(['wait', 'first']);
    await tools.restart([{ name: 'wait', hang: true }, { name: 'second' }]);
    await clientNoticesClose();
    expect(await client.toolNames()).toEqual(['wait', 'second']); // the first call finds the session gone
    await until(() => changes === 1);
    // A list_changed of the new session (sent again until its stream is open: the server drops it before).
    while (changes < 2) {
      tools.setTools([{ name: 'wait', hang: true }, { name: 'third' }]);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await client.toolNames()).toEqual(['wait', 'third']);
    expect(client.closes).toBe(0);
  });

  it('the logging level and the subscriptions the Client set hold on the session after a restart', async () => {
    const client = await open(version, supervisedTransport({ url: state.url, ...FAST }));
    await client.setLoggingLevel('warning');
    await client.subscribeResource(`file:///${version}.txt`);
    const first = state.latest()!;
    expect({ level: first.level, subscriptions: [...first.subscriptions] }).toEqual({
      level: 'warning',
      subscriptions: [`file:///${version}.txt`],
    });
    await state.restart();
    await clientNoticesClose();
    await client.toolNames();
    const next = state.latest()!;
    expect(next.id).not.toBe(first.id);
    expect({ level: next.level, subscriptions: [...next.subscriptions] }).toEqual({
      level: 'warning',
      subscriptions: [`file:///${version}.txt`],
    });
    expect(client.closes).toBe(0);
  });

  it("cancellation: the Client's abort reaches the server; the late answer never reaches the Client", async () => {
    tools.setTools([{ name: 'wait', hang: true }]);
    const transport = supervisedTransport({ url: tools.url, ...FAST });
    const client = await open(version, transport);
    const cancelled = tools.cancelled.length;
    const controller = new AbortController();
    const call = client.call('wait', { text: version }, { signal: controller.signal });
    await until(() => tools.calls.includes(`wait(${version})`));
    controller.abort();
    await expect(call).rejects.toThrow();
    await until(() => tools.cancelled.length === cancelled + 1);
    tools.release();
    expect(await client.toolNames()).toEqual(['wait']); // one more round trip: a late answer would be here by now
    expect(strayMessages(client.seen)).toEqual([]);
    expect(client.errors).toEqual([]);
  });

  it('close(): onclose once, the session ended; give-up (revive: false): onclose', async () => {
    const transport = supervisedTransport({ url: status404.url, ...FAST });
    const client = await open(version, transport);
    await client.close();
    expect(client.closes).toBe(1);
    expect(transport.server!.status().state).toBe('closed');

    const server = await startSdkExampleServer();
    const doomed = supervisedTransport({ url: server.url, ...FAST, restart: { maxRestarts: 0 }, revive: false });
    const gives = await open(version, doomed);
    await server.close();
    await expect(gives.call('echo', { text: 'x' })).rejects.toThrow();
    await until(() => gives.closes === 1);
    expect(doomed.server!.status().state).toBe('closed');
  });

  it('a v2 stdio server in modern-only mode: the Client speaks 2025, the connection 2026-07-28; a killed child is restarted', async () => {
    const transport = supervisedTransport({ command: process.execPath, args: [V2_STDIO, 'modern'], ...FAST });
    const client = await open(version, transport);
    expect(transport.server!.status().era).toBe('modern');
    expect(client.serverVersion()?.name).toBe('v2-stdio-modern');
    const first = text(await client.call('echo', { text: 'a' }));
    const pid = transport.server!.status().pid!;
    expect(first).toBe(`a (pid ${pid})`);
    // Killed while idle: the restart is under way before the next call (one written to the dead
    // pipe would be outcome-unknown, a different test).
    const restarted = nextTransition(transport.server!, (t) => t.to === 'ready');
    process.kill(pid, 'SIGKILL');
    await restarted;
    const second = text(await client.call('echo', { text: 'b' }));
    expect(second).toMatch(/^b \(pid \d+\)$/);
    expect(second).not.toBe(`b (pid ${pid})`);
    expect(await client.toolNames()).toContain('echo');
    expect(client.closes).toBe(0);
  });
});

describe('a server killed mid-call (SIGKILL, the same port again)', () => {
  it('the read-only call is answered, the non-idempotent one is outcome-unknown: v1 and v2 at once', async () => {
    const clients = await Promise.all(
      (['v1', 'v2'] as const).map((version) => open(version, supervisedTransport({ url: killable.url, ...FAST }))),
    );
    // What the server says of its tools (readOnlyHint) decides what may be sent again.
    for (const client of clients) await client.toolNames();
    const before = await killable.executions();
    const calls = clients.map((client) => ({
      read: client.call('lookup', { key: client.version }),
      increment: client.call('increment').then(
        () => undefined,
        (error: { code?: number; data?: { code?: string } }) => error,
      ),
    }));
    for (let ran = false; !ran;) {
      const now = await killable.executions();
      ran = now['lookup'] === (before['lookup'] ?? 0) + 2 && now['increment'] === (before['increment'] ?? 0) + 2;
    }
    await killable.kill();
    await killable.start({ stallTools: [] });
    expect((await Promise.all(calls.map((call) => call.read))).map(text)).toEqual(['no v1', 'no v2']);
    for (const call of calls) {
      const error = await call.increment;
      expect(error?.code).toBe(SUPERVISOR_ERROR);
      expect(error?.data?.code).toBe('OUTCOME_UNKNOWN');
    }
    expect((await killable.executions())['increment']).toBe((before['increment'] ?? 0) + 2); // none run twice
    expect(clients.map((client) => client.closes)).toEqual([0, 0]);
  });
});

describe('the SDK v2 Client: what only v2 does', () => {
  it("versionNegotiation 'auto': its in-place server/discover probe is answered as by a 2025-era server; it initializes", async () => {
    const transport = supervisedTransport({ url: status404.url, ...FAST });
    const client = await open('v2', transport, { v2: { versionNegotiation: { mode: 'auto' } } });
    expect(client.serverVersion()?.name).toBe('sdk-example');
    expect(await client.toolNames()).toContain('echo');
  });

  it("connect(transport, { prior: { kind: 'legacy' } }) skips the probe and initializes", async () => {
    const client = await open('v2', supervisedTransport({ url: status404.url, ...FAST }), {
      v2: { prior: { kind: 'legacy' } },
    });
    expect(await client.toolNames()).toContain('echo');
  });

  it("connect(transport, { prior: { kind: 'modern', discover } }): no initialize; its first request opens the connection; the Client speaks 2026-07-28", async () => {
    // A cached verdict, as an application persists `client.getDiscoverResult()`.
    const discover = {
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'v2-stdio-modern', version: '2.0.0' } },
    };
    const transport = supervisedTransport({ command: process.execPath, args: [V2_STDIO, 'modern'], ...FAST });
    const client = await open('v2', transport, { v2: { prior: { kind: 'modern', discover } } });
    expect(transport.server).toBeUndefined(); // zero round trips: nothing was sent yet
    expect(transport.sessionId).toBeUndefined();
    expect(transport.protocolVersion).toBe('2026-07-28');
    expect(client.serverVersion()).toEqual({ name: 'v2-stdio-modern', version: '2.0.0' });
    const [first, tools] = await Promise.all([client.call('echo', { text: 'm' }), client.toolNames()]);
    expect(transport.server!.status().era).toBe('modern');
    const pid = transport.server!.status().pid!;
    expect(text(first)).toBe(`m (pid ${pid})`);
    expect(tools).toContain('echo');
    // A killed child is restarted; the Client's next call is answered in the new process.
    const restarted = nextTransition(transport.server!, (t) => t.to === 'ready');
    process.kill(pid, 'SIGKILL');
    await restarted;
    expect(text(await client.call('echo', { text: 'n' }))).toMatch(/^n \(pid \d+\)$/);
    expect(client.closes).toBe(0);
    expect(strayMessages(client.seen)).toEqual([]);
  });

  it('setSupportedProtocolVersions: the answer to initialize is a version the Client supports; setProtocolVersion records it', async () => {
    const transport = supervisedTransport({ url: status404.url, ...FAST });
    const client = await open('v2', transport, { v2: { supportedProtocolVersions: ['2025-06-18'] } });
    expect(transport.server!.status().protocolVersion).toBe('2025-11-25'); // the wire speaks the server's
    expect(transport.protocolVersion).toBe('2025-06-18');
    expect(text(await client.call('echo', { text: 'v' }))).toBe('v');
  });
});

describe('the transport seam itself (what a client may pass with a message)', () => {
  async function raw(url: string) {
    const transport = supervisedTransport({ url, ...FAST });
    const got: WireMessage[] = [];
    transport.onmessage = (message) => got.push(message);
    let closes = 0;
    transport.onclose = () => closes++;
    await transport.start();
    await transport.send({ jsonrpc: '2.0', id: 0, method: 'server/discover', params: {} });
    await transport.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await until(() => got.length === 2);
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return { transport, got, closes: () => closes };
  }

  it('per-request headers, requestSignal, onRequestStreamEnd, resumption tokens: the request is answered, nothing else', async () => {
    const { transport, got, closes } = await raw(status404.url);
    expect(got[0]).toMatchObject({ id: 0, error: { code: -32601 } });
    expect(got[1]).toMatchObject({
      id: 1,
      result: { serverInfo: { name: 'sdk-example' }, protocolVersion: '2025-11-25' },
    });
    let ended = 0;
    const tokens: string[] = [];
    await transport.send(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'h' } } },
      {
        headers: { 'Mcp-Param-Text': 'h' },
        requestSignal: new AbortController().signal,
        onRequestStreamEnd: () => ended++,
        onresumptiontoken: (token) => tokens.push(token),
      },
    );
    await until(() => got.length === 3);
    expect(got[2]).toEqual({ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'h' }] } });
    // A resumption token from an earlier connection: that stream cannot be resumed here. A read is
    // sent as itself; a tool call, which the server may have run, is outcome-unknown and not sent.
    const calls = status404.requests()['tools/call'] ?? 0;
    await transport.send(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'r' } } },
      { resumptionToken: 'event-7' },
    );
    await transport.send({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} }, { resumptionToken: 'event-8' });
    await until(() => got.length === 5);
    expect(got[3]).toMatchObject({
      id: 3,
      error: {
        code: SUPERVISOR_ERROR,
        data: { code: 'OUTCOME_UNKNOWN' },
        message: expect.stringContaining('resumptionToken'),
      },
    });
    expect(got[4]).toMatchObject({ id: 4, result: { tools: expect.any(Array) } });
    // A 2026-07-28 client's own listen is not carried: the connection listens itself.
    await transport.send({ jsonrpc: '2.0', id: 5, method: 'subscriptions/listen', params: { notifications: {} } });
    await until(() => got.length === 6);
    expect(got[5]).toMatchObject({
      id: 5,
      error: { code: -32601, message: expect.stringContaining('listens itself') },
    });
    expect(status404.requests()['tools/call']).toBe(calls); // id 3 never reached the server
    expect({ ended, tokens, closes: closes() }).toEqual({ ended: 0, tokens: [], closes: 0 });
    await transport.close();
    expect(closes()).toBe(1);
  });

  it('a response stream that breaks after an event id: the connection resumes it (Last-Event-ID); the Client gets its answer, onresumptiontoken is never called', async () => {
    const fixture = await startHttpFixture({ responseMode: 'sse' });
    try {
      const client = await open('v1', supervisedTransport({ url: fixture.url, ...FAST }));
      fixture.faults.retryMs = 10;
      fixture.faults.sseEndWithoutResponse = 'with-id';
      const tokens: string[] = [];
      const result = await client.call('echo', { text: 'resumed' }, { onresumptiontoken: (t) => tokens.push(t) });
      expect(text(result)).toBe('resumed');
      expect(tokens).toEqual([]);
      const resumes = fixture.requests.filter((r) => r.method === 'GET' && r.headers['last-event-id'] !== undefined);
      expect(resumes).toHaveLength(1);
      expect(fixture.requests.filter((r) => r.rpcMethod === 'tools/call')).toHaveLength(1); // resumed, not sent again
      expect(client.closes).toBe(0);
      expect(strayMessages(client.seen)).toEqual([]);
    } finally {
      await Promise.all(opened.splice(0).map((client) => client.close().catch(() => {})));
      await fixture.close();
    }
  });

  it('requestSignal (v2) and signal (AI SDK) cancel the request at the server; its answer is never delivered', async () => {
    tools.setTools([{ name: 'wait', hang: true }]);
    const { transport, got } = await raw(tools.url);
    const cancelled = tools.cancelled.length;
    const controllers = [new AbortController(), new AbortController()];
    await transport.send(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'wait', arguments: { text: 'rs' } } },
      { requestSignal: controllers[0]!.signal },
    );
    await transport.send(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'wait', arguments: { text: 's' } } },
      { signal: controllers[1]!.signal },
    );
    await until(() => tools.calls.includes('wait(rs)') && tools.calls.includes('wait(s)'));
    for (const controller of controllers) controller.abort();
    await until(() => tools.cancelled.length === cancelled + 2);
    tools.release();
    await transport.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
    await until(() => got.length === 3);
    expect(got[2]).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    await transport.close();
  });
});
