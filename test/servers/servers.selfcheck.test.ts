// Throwaway self-check for the test fixtures, using plain fetch.
import { describe, it, expect, afterEach } from 'vitest';
import { startHttpFixture, INVALID_SESSION_ID } from '../../servers/http-fixture.js';
import type { HttpFixture, FixtureOptions } from '../../servers/http-fixture.js';
import { startSdkServer } from '../../servers/sdk-servers.js';
import type { SdkServer } from '../../servers/sdk-servers.js';

const ACCEPT = 'application/json, text/event-stream';
let rpcId = 0;

function rpc(method: string, params?: object): object {
  return { jsonrpc: '2.0', id: ++rpcId, method, ...(params ? { params } : {}) };
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { accept: ACCEPT, 'content-type': 'application/json', ...extra };
}

async function json(res: Response | Promise<Response>): Promise<any> {
  return (await res).json();
}

async function post(url: string, body: unknown, extra: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: headers(extra), body: JSON.stringify(body) });
}

interface ParsedEvent {
  id?: string;
  event?: string;
  retry?: number;
  data: string;
}

/** Minimal SSE parser over a full text (test only). */
function parseSse(text: string): ParsedEvent[] {
  const events: ParsedEvent[] = [];
  for (const block of text.split(/\n\n/)) {
    if (!block.trim()) continue;
    const ev: ParsedEvent = { data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const idx = line.indexOf(':');
      const field = idx === -1 ? line : line.slice(0, idx);
      const value = idx === -1 ? '' : line.slice(idx + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'id') ev.id = value;
      else if (field === 'event') ev.event = value;
      else if (field === 'retry') ev.retry = Number(value);
    }
    ev.data = data.join('\n');
    events.push(ev);
  }
  return events;
}

/** Read an open SSE body until `predicate` holds on the parsed events, then cancel. */
async function readSseUntil(
  res: Response,
  predicate: (evs: ParsedEvent[]) => boolean,
  timeoutMs = 3000,
): Promise<ParsedEvent[]> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), Math.max(1, deadline - Date.now())));
      const chunk = await Promise.race([reader.read(), timer]);
      if (chunk === 'timeout') break;
      if (chunk.done) return parseSse(text);
      text += dec.decode(chunk.value, { stream: true });
      const evs = parseSse(text.slice(0, text.lastIndexOf('\n\n') + 2));
      if (predicate(evs)) return evs;
    }
    throw new Error(`SSE predicate not met; got: ${JSON.stringify(text)}`);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

async function initialize(
  url: string,
  protocolVersion = '2025-11-25',
): Promise<{ res: Response; sid: string | null; body: any }> {
  const res = await post(
    url,
    rpc('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '0' } }),
  );
  const sid = res.headers.get('mcp-session-id');
  const ct = res.headers.get('content-type') ?? '';
  const text = await res.text();
  const body = ct.startsWith('text/event-stream')
    ? JSON.parse(parseSse(text).find((e) => e.data)!.data)
    : text
      ? JSON.parse(text)
      : undefined;
  return { res, sid, body };
}

describe('http-fixture', () => {
  let fx: HttpFixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });
  const start = async (o?: FixtureOptions): Promise<HttpFixture> => (fx = await startHttpFixture(o));

  it('initialize, initialized, tools/list, tools/call echo, unknown method, DELETE', async () => {
    const f = await start();
    expect(f.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const init = await initialize(f.url, '2025-06-18');
    expect(init.res.status).toBe(200);
    expect(init.sid).toMatch(/^sess-[\x21-\x7e]+$/);
    expect(init.body.result.protocolVersion).toBe('2025-06-18');
    expect(init.body.result.serverInfo).toEqual({ name: 'fixture', version: '1.0.0' });
    const h = { 'mcp-session-id': init.sid!, 'mcp-protocol-version': '2025-06-18' };
    const n = await post(f.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
    expect(n.status).toBe(202);
    expect(await n.text()).toBe('');
    const list = await json(post(f.url, rpc('tools/list'), h));
    expect(list.result.tools[0].name).toBe('echo');
    const call = await post(f.url, rpc('tools/call', { name: 'echo', arguments: { text: 'hi' } }), h);
    expect(call.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json(call)).result).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect((await json(post(f.url, rpc('nope'), h))).error.code).toBe(-32601);
    expect((await json(post(f.url, rpc('ping'), h))).result).toEqual({});
    const resp = await post(f.url, { jsonrpc: '2.0', id: 'srv-1', result: {} }, h);
    expect(resp.status).toBe(202);
    expect(f.requests.map((r) => r.rpcMethod)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/call',
      'nope',
      'ping',
      undefined,
    ]);
    expect(f.requests[1]!.headers['mcp-session-id']).toBe(init.sid);
    expect((await fetch(f.url, { method: 'DELETE', headers: h })).status).toBe(200);
    expect(f.sessions.size).toBe(0);
    expect((await fetch(f.url, { method: 'DELETE', headers: h })).status).toBe(404);
  });

  it('unknown version falls back to 2025-11-25; forced protocolVersion option', async () => {
    const f = await start();
    expect((await initialize(f.url, '1999-01-01')).body.result.protocolVersion).toBe('2025-11-25');
    const g = await startHttpFixture({ protocolVersion: '2025-03-26' });
    try {
      expect((await initialize(g.url, '2025-11-25')).body.result.protocolVersion).toBe('2025-03-26');
    } finally {
      await g.close();
    }
  });

  it('400 without session, 404 after expireAllSessions, 406 without Accept, 415 wrong content-type', async () => {
    const f = await start();
    const { sid } = await initialize(f.url);
    const noSid = await post(f.url, rpc('ping'));
    expect(noSid.status).toBe(400);
    expect(await noSid.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Bad Request: Missing session ID' },
      id: null,
    });
    expect((await post(f.url, rpc('ping'), { 'mcp-session-id': sid! })).status).toBe(200);
    f.expireAllSessions();
    expect((await post(f.url, rpc('ping'), { 'mcp-session-id': sid! })).status).toBe(404);
    const noAccept = await fetch(f.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rpc('ping')),
    });
    expect(noAccept.status).toBe(406);
    const jsonOnly = await post(f.url, rpc('ping'), { accept: 'application/json' });
    expect(jsonOnly.status).toBe(406);
    const badCt = await post(f.url, rpc('ping'), { 'content-type': 'text/plain' });
    expect(badCt.status).toBe(415);
  });

  it('sessionRequired: false gives no session id and accepts requests without one', async () => {
    const f = await start({ sessionRequired: false });
    const init = await initialize(f.url);
    expect(init.sid).toBeNull();
    expect((await post(f.url, rpc('ping'))).status).toBe(200);
  });

  it('faults: 500 once, garbled body, wrong content type, huge body, drop socket, delay', async () => {
    const f = await start();
    const { sid } = await initialize(f.url);
    const h = { 'mcp-session-id': sid! };
    f.faults.fail500Once = true;
    expect((await post(f.url, rpc('ping'), h)).status).toBe(500);
    expect(f.faults.fail500Once).toBe(false);
    expect((await post(f.url, rpc('ping'), h)).status).toBe(200);

    f.faults.garbleNextBody = true;
    const garbled = await post(f.url, rpc('ping'), h);
    expect(garbled.headers.get('content-type')).toBe('application/json');
    await expect(garbled.json()).rejects.toThrow();
    expect((await json(post(f.url, rpc('ping'), h))).result).toEqual({});

    f.faults.wrongContentTypeOnce = true;
    const html = await post(f.url, rpc('ping'), h);
    expect(html.headers.get('content-type')).toBe('text/html');
    expect(await html.text()).toBe('<html>oops</html>');

    f.faults.hugeBodyBytes = 200_000;
    const huge = await post(f.url, rpc('ping'), h);
    const hugeText = await huge.text();
    expect(Math.abs(Buffer.byteLength(hugeText) - 200_000)).toBeLessThan(100);
    expect(JSON.parse(hugeText).result.content[0].type).toBe('text');

    f.faults.dropSocketOnce = true;
    await expect(post(f.url, rpc('ping'), h)).rejects.toThrow();
    expect((await post(f.url, rpc('ping'), h)).status).toBe(200);

    f.faults.delayMs = 150;
    const t0 = Date.now();
    await json(post(f.url, rpc('ping'), h));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    f.faults.delayMs = 0;

    const t1 = Date.now();
    const slow = await json(post(f.url, rpc('tools/call', { name: 'slow', arguments: { ms: 100 } }), h));
    expect(Date.now() - t1).toBeGreaterThanOrEqual(90);
    expect(slow.result.content[0].text).toBe('slept 100ms');
  });

  it('faults: notFoundOnInitialize, invalidSessionIdOnce', async () => {
    const f = await start();
    f.faults.notFoundOnInitialize = true;
    expect((await initialize(f.url)).res.status).toBe(404);
    f.faults.notFoundOnInitialize = false;
    f.faults.invalidSessionIdOnce = true;
    const bad = await initialize(f.url);
    expect(bad.res.status).toBe(200);
    expect(bad.sid).toBe(INVALID_SESSION_ID);
    expect(bad.sid).not.toMatch(/^[\x21-\x7e]+$/);
    expect((await initialize(f.url)).sid).toMatch(/^sess-/);
  });

  it('sse response mode: one message event with id; notifyBeforeResponse; retry', async () => {
    const f = await start({ responseMode: 'sse' });
    const init = await initialize(f.url);
    expect(init.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(init.body.result.capabilities).toEqual({ tools: {} });
    const h = { 'mcp-session-id': init.sid! };
    const res = await post(f.url, rpc('tools/call', { name: 'echo', arguments: { text: 'sse' } }), h);
    const evs = parseSse(await res.text());
    expect(evs).toHaveLength(1);
    expect(evs[0]!.event).toBe('message');
    expect(evs[0]!.id).toMatch(/^\d+$/);
    expect(JSON.parse(evs[0]!.data).result.content[0].text).toBe('sse');

    f.faults.notifyBeforeResponse = true;
    f.faults.retryMs = 250;
    const res2 = await post(f.url, rpc('ping'), h);
    const evs2 = parseSse(await res2.text()).map((e) => ({ ...e, msg: JSON.parse(e.data) }));
    expect(evs2.map((e) => e.msg.method ?? 'response')).toEqual(['notifications/message', 'ping', 'response']);
    expect(evs2[1]!.msg.id).toBe('srv-1');
    expect(evs2.every((e) => e.retry === 250)).toBe(true);
    expect(new Set(evs2.map((e) => e.id)).size).toBe(3);
  });

  it('GET standalone stream: priming, push, closeGetStreams, getMode statuses', async () => {
    const f = await start();
    const { sid } = await initialize(f.url);
    const h = { 'mcp-session-id': sid!, accept: 'text/event-stream' };
    expect(f.push({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })).toBe(false);
    const get = await fetch(f.url, { headers: h });
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('text/event-stream');
    expect(f.getStreamCount()).toBe(1);
    setTimeout(() => f.push({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }), 50);
    const evs = await readSseUntil(get, (e) => e.length >= 2);
    expect(evs[0]!.data).toBe('');
    expect(evs[0]!.id).toMatch(/^\d+$/);
    expect(JSON.parse(evs[1]!.data).method).toBe('notifications/tools/list_changed');

    const get2 = await fetch(f.url, { headers: h });
    await new Promise((r) => setTimeout(r, 20));
    expect(f.getStreamCount()).toBe(1);
    f.closeGetStreams();
    expect(f.getStreamCount()).toBe(0);
    const rest = parseSse(await get2.text()); // ends cleanly
    expect(rest[0]!.id).toMatch(/^\d+$/);

    expect((await fetch(f.url, { headers: { accept: 'text/event-stream' } })).status).toBe(400);
    expect((await fetch(f.url, { headers: { 'mcp-session-id': sid!, accept: 'application/json' } })).status).toBe(406);
    for (const status of [405, 404, 406, 400, 409] as const) {
      f.faults.getMode = status;
      const r = await fetch(f.url, { headers: h });
      expect(r.status).toBe(status);
      await r.text();
    }
    const g405 = await startHttpFixture({ getMode: 405 });
    try {
      const r = await fetch(g405.url, { headers: h });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toContain('POST');
    } finally {
      await g405.close();
    }
  });

  it('sseEndWithoutResponse with-id: priming then end; Last-Event-ID GET gets the response', async () => {
    const f = await start({ responseMode: 'sse' });
    const { sid } = await initialize(f.url);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 100;
    const req = rpc('tools/call', { name: 'echo', arguments: { text: 'resumed' } }) as { id: number };
    const res = await post(f.url, req, { 'mcp-session-id': sid! });
    const evs = parseSse(await res.text());
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({ data: '', retry: 100 });
    const lastId = evs[0]!.id!;
    expect(f.faults.sseEndWithoutResponse).toBeNull();

    // a GET without Last-Event-ID does not get it
    const plain = await fetch(f.url, { headers: { 'mcp-session-id': sid!, accept: 'text/event-stream' } });
    const plainEvs = await readSseUntil(plain, (e) => e.length >= 1);
    expect(plainEvs[0]!.data).toBe('');

    const resume = await fetch(f.url, {
      headers: { 'mcp-session-id': sid!, accept: 'text/event-stream', 'last-event-id': lastId },
    });
    expect(resume.status).toBe(200);
    const got = await readSseUntil(resume, (e) => e.some((x) => x.data !== ''));
    const msg = JSON.parse(got.find((x) => x.data !== '')!.data);
    expect(msg.id).toBe(req.id);
    expect(msg.result.content[0].text).toBe('resumed');
    expect(f.requests.filter((r) => r.method === 'GET').at(-1)!.headers['last-event-id']).toBe(lastId);
  });

  it('sseEndWithoutResponse without-id: stream ends with no events', async () => {
    const f = await start({ responseMode: 'sse' });
    const { sid } = await initialize(f.url);
    f.faults.sseEndWithoutResponse = 'without-id';
    const res = await post(f.url, rpc('ping'), { 'mcp-session-id': sid! });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toBe('');
  });

  it('close() is fast with an open GET stream', async () => {
    const f = await startHttpFixture();
    const { sid } = await initialize(f.url);
    const get = await fetch(f.url, { headers: { 'mcp-session-id': sid!, accept: 'text/event-stream' } });
    expect(get.status).toBe(200);
    const t0 = Date.now();
    await f.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    await get.text().catch(() => undefined);
  });
});

describe('sdk-servers', () => {
  let srv: SdkServer | undefined;
  afterEach(async () => {
    await srv?.close();
    srv = undefined;
  });

  async function callTool(url: string, h: Record<string, string>, name: string, args: object): Promise<any> {
    const res = await post(url, rpc('tools/call', { name, arguments: args }), h);
    expect(res.status).toBe(200);
    const ct = res.headers.get('content-type') ?? '';
    const text = await res.text();
    return ct.startsWith('text/event-stream') ? JSON.parse(parseSse(text).find((e) => e.data)!.data) : JSON.parse(text);
  }

  it('stateful (SSE responses): initialize, echo, add, unknown session 404, terminateAllSessions, DELETE', async () => {
    srv = await startSdkServer({ stateful: true });
    const init = await initialize(srv.url);
    expect(init.res.status).toBe(200);
    expect(init.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(init.sid).toBeTruthy();
    expect(init.body.result.protocolVersion).toBe('2025-11-25');
    expect(srv.sessionCount()).toBe(1);
    const h = { 'mcp-session-id': init.sid!, 'mcp-protocol-version': '2025-11-25' };
    expect((await post(srv.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status).toBe(202);
    const echo = await callTool(srv.url, h, 'echo', { text: 'yo' });
    expect(echo.result.content).toEqual([{ type: 'text', text: 'yo' }]);
    const add = await callTool(srv.url, h, 'add', { a: 2, b: 3 });
    expect(add.result.content[0].text).toBe('5');

    expect((await post(srv.url, rpc('ping'), { ...h, 'mcp-session-id': 'nope' })).status).toBe(404);
    expect((await post(srv.url, rpc('ping'), { 'mcp-protocol-version': '2025-11-25' })).status).toBe(400);
    expect((await post(srv.url, rpc('ping'), { ...h, accept: 'application/json' })).status).toBe(406);
    expect((await post(srv.url, rpc('ping'), { ...h, 'content-type': 'text/plain' })).status).toBe(415);

    await srv.terminateAllSessions();
    expect(srv.sessionCount()).toBe(0);
    expect((await post(srv.url, rpc('ping'), h)).status).toBe(404);

    const again = await initialize(srv.url);
    const h2 = { 'mcp-session-id': again.sid!, 'mcp-protocol-version': '2025-11-25' };
    expect((await fetch(srv.url, { method: 'DELETE', headers: h2 })).status).toBe(200);
    expect(srv.sessionCount()).toBe(0);
    expect((await post(srv.url, rpc('ping'), h2)).status).toBe(404);
  });

  it('stateful with jsonResponse and unknownSessionStatus 400', async () => {
    srv = await startSdkServer({ stateful: true, jsonResponse: true, unknownSessionStatus: 400 });
    const init = await initialize(srv.url);
    expect(init.res.headers.get('content-type')).toMatch(/^application\/json/);
    const h = { 'mcp-session-id': init.sid!, 'mcp-protocol-version': '2025-11-25' };
    expect((await callTool(srv.url, h, 'echo', { text: 'j' })).result.content[0].text).toBe('j');
    expect((await post(srv.url, rpc('ping'), { ...h, 'mcp-session-id': 'nope' })).status).toBe(400);
  });

  it('stateful GET stream opens', async () => {
    srv = await startSdkServer({ stateful: true });
    const init = await initialize(srv.url);
    const get = await fetch(srv.url, {
      headers: { 'mcp-session-id': init.sid!, 'mcp-protocol-version': '2025-11-25', accept: 'text/event-stream' },
    });
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await get.body!.cancel();
  });

  it('stateless: initialize + tools/call without session; GET/DELETE 405', async () => {
    srv = await startSdkServer({ stateful: false });
    const init = await initialize(srv.url);
    expect(init.res.status).toBe(200);
    expect(init.sid).toBeNull();
    const h = { 'mcp-protocol-version': '2025-11-25' };
    const add = await callTool(srv.url, h, 'add', { a: 40, b: 2 });
    expect(add.result.content[0].text).toBe('42');
    const echo = await callTool(srv.url, h, 'echo', { text: 'stateless' });
    expect(echo.result.content[0].text).toBe('stateless');
    expect((await fetch(srv.url, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
    expect((await fetch(srv.url, { method: 'DELETE' })).status).toBe(405);
    expect(srv.sessionCount()).toBe(0);
  });

  it('stateless with jsonResponse', async () => {
    srv = await startSdkServer({ stateful: false, jsonResponse: true });
    const init = await initialize(srv.url);
    expect(init.res.headers.get('content-type')).toMatch(/^application\/json/);
    const echo = await callTool(srv.url, { 'mcp-protocol-version': '2025-11-25' }, 'echo', { text: 'j' });
    expect(echo.result.content[0].text).toBe('j');
  });
});
