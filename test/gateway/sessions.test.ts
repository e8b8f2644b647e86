/**
 * The gateway's 2025 host sessions over HTTP: the common call answered on the direct path (one
 * JSON body when the host takes no server requests, else SSE primed for resumption, as the SDK's
 * transport writes it); 100 host sessions over one upstream
 * session, unless the config isolates a stateful server (a connection per host session, closed
 * with it); sessions left idle closed after the configured time, while a session whose host keeps
 * its GET stream open stays.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serveGatewayHttp, type HttpService } from '../../src/gateway/http.js';
import { KeptSessions } from '../../src/gateway/kept-sessions.js';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { startGateway, text, TOKEN, v1Client, type RunningGateway } from './helpers.js';

const close = (url: string, id: string) =>
  fetch(url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': id } }).then((r) => r.text());

let upstream: SdkExampleServer;
let gw: RunningGateway;

beforeAll(async () => {
  upstream = await startSdkExampleServer({ unknownSessionStatus: 404 });
  gw = await startGateway({ servers: { example: { url: upstream.url, keepalive: false } } });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const headers = {
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A raw 2025 session (no GET stream): its id. */
async function rawSession(url: string, capabilities: object = {}): Promise<string> {
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  const id = init.headers.get('mcp-session-id')!;
  await init.text();
  const session = { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
  const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
  await (await fetch(url, { method: 'POST', headers: session, body: JSON.stringify(initialized) })).text();
  return id;
}

function call(url: string, id: string, requestId: number): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: requestId,
      method: 'tools/call',
      params: { name: 'example__echo', arguments: { text: 'direct' } },
    }),
  });
}

describe('gateway sessions over HTTP', () => {
  it('answers a call of a host that takes no server requests as one JSON body', async () => {
    const id = await rawSession(gw.http.url);
    const response = await call(gw.http.url, id, 6);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('mcp-session-id')).toBe(id);
    const answer = (await response.json()) as { result: unknown };
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 6 });
    expect(text(answer.result)).toBe('direct');
    await (await fetch(gw.http.url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': id } })).text();
  });

  it('answers a call of a host that takes server requests on an SSE stream primed with an event id and retry, the answer with its own id', async () => {
    const id = await rawSession(gw.http.url, { elicitation: {} });
    const response = await call(gw.http.url, id, 7);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events[0]).toMatch(/^id: \S+\nretry: 1000\ndata: $/);
    expect(events[1]).toMatch(/^event: message\nid: \S+\ndata: /);
    const answer = JSON.parse(events[1]!.split('data: ')[1]!);
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7 });
    expect(text(answer.result)).toBe('direct');
    await (await fetch(gw.http.url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': id } })).text();
  });

  it('100 host sessions share the one upstream session', async () => {
    const upstreamSessions = upstream.sessionCount();
    const initializes = upstream.requests().initialize ?? 0;
    const ids = await Promise.all(Array.from({ length: 100 }, () => rawSession(gw.http.url)));
    const answers = await Promise.all(ids.map(async (id, i) => (await call(gw.http.url, id, i)).text()));
    expect(answers.every((answer) => answer.includes('direct'))).toBe(true);
    expect(upstream.sessionCount()).toBe(upstreamSessions);
    expect(upstream.requests().initialize ?? 0).toBe(initializes);
    await Promise.all(ids.map((id) => close(gw.http.url, id)));
  });

  it('gives each host session its own connection to an isolated server, closed with the session', async () => {
    const isolating = await startGateway({
      servers: { example: { url: upstream.url, keepalive: false } },
      isolate: ['example'],
    });
    try {
      const shared = upstream.sessionCount();
      const ids = await Promise.all([1, 2, 3].map(() => rawSession(isolating.http.url)));
      for (const [i, id] of ids.entries())
        expect(await (await call(isolating.http.url, id, i)).text()).toContain('direct');
      expect(await (await call(isolating.http.url, ids[0]!, 9)).text()).toContain('direct'); // the same connection again
      expect(upstream.sessionCount()).toBe(shared + 3);
      await close(isolating.http.url, ids[0]!);
      await expect.poll(() => upstream.sessionCount()).toBe(shared + 2);
    } finally {
      await isolating.close();
    }
    await expect.poll(() => upstream.sessionCount()).toBe(1);
  });

  it("answers a host's GET stream with its headers at once, before any event (a quiet stream does not hold up the host)", async () => {
    const id = await rawSession(gw.http.url);
    const stream = new AbortController();
    try {
      // fetch resolves at the headers: held until the first event, it would wait past the test's timeout.
      const response = await fetch(gw.http.url, {
        headers: {
          ...headers,
          accept: 'text/event-stream',
          'mcp-session-id': id,
          'mcp-protocol-version': '2025-11-25',
        },
        signal: stream.signal,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
    } finally {
      stream.abort();
      await close(gw.http.url, id);
    }
  });

  it('closes a session left idle and forgets its record (strictSessions: the host gets 404); one with its GET stream open stays', async () => {
    // Only the sweep's interval and the clock are fake: the HTTP exchanges run in real time.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    const idle: HttpService = await serveGatewayHttp(gw.gateway, {
      token: TOKEN,
      sessionIdleMs: 60_000,
      strictSessions: true,
    });
    const kept = new KeptSessions(gw.gateway.sessionStore, 0, () => {});
    const client = await v1Client(idle.url); // opens its GET stream
    try {
      const id = await rawSession(idle.url);
      await expect.poll(() => gw.gateway.sessions.size).toBe(2);
      await expect.poll(() => kept.find(id)).toBeDefined();
      vi.advanceTimersByTime(59_000);
      expect(gw.gateway.sessions.size).toBe(2);
      vi.advanceTimersByTime(16_000);
      await expect.poll(() => gw.gateway.sessions.size).toBe(1);
      await expect.poll(() => kept.find(id)).toBeUndefined();
      expect((await call(idle.url, id, 1)).status).toBe(404);
      expect(text(await client.callTool({ name: 'example__echo', arguments: { text: 'still here' } }))).toBe(
        'still here',
      );
    } finally {
      vi.useRealTimers();
      await client.close();
      await idle.close();
    }
  });
});
