/**
 * Session management and the protocol version header: where the session id comes from, what
 * it may contain, where it is sent, how it is kept secret, expiry and re-initialization, DELETE.
 * docs/client-requirements.md §1.7 (items 36-42) and §1.8 (items 43-45), and item 2 across sessions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, ProtocolError, TransportError, type TransitionEvent } from '../../../src/index.js';
import { INVALID_SESSION_ID } from '../../../servers/http-fixture.js';
import {
  answerBasics,
  call,
  Cleanup,
  deletes,
  fixture,
  gets,
  handshake,
  header,
  initializeResult,
  open,
  posts,
  rejection,
  replyJson,
  requestPosts,
  scriptedServer,
  settle,
  toolResult,
  transportTo,
  until,
} from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

function sessionOf(request: { headers: Record<string, string | string[] | undefined> }): string | undefined {
  return header(request, 'mcp-session-id');
}

describe('the session id (§1.7)', () => {
  it('§36 takes the session id only from a 2xx initialize response (not from an error answer)', async () => {
    let initializes = 0;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.rpcMethod === 'initialize' && ++initializes === 1) {
        replyJson(
          res,
          400,
          { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'not yet' } },
          { 'mcp-session-id': 'sid-from-error' },
        );
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-good' })) return;
      replyJson(res, 200, { jsonrpc: '2.0', id: request.body.id, result: {} });
    });
    const { transport, sink } = transportTo(cleanup, server.url);
    transport.beginSession();
    const refused = await rejection(
      call(
        transport,
        sink,
        'initialize',
        { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
        true,
      ),
    );
    expect(refused).toBeInstanceOf(TransportError);
    expect((refused as TransportError).status).toBe(400);
    expect(transport.hasSession).toBe(false);
    await handshake(transport, sink);
    await call(transport, sink, 'ping');
    expect(server.requests.map(sessionOf)).toEqual([undefined, undefined, 'sid-good', 'sid-good']);
  });

  it('§36 ignores an Mcp-Session-Id header on any response other than initialize', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-A' })) return;
      replyJson(res, 200, toolResult(request.body.id, 'ok'), { 'mcp-session-id': 'sid-B' });
    });
    const { handle } = await open(cleanup, server.url);
    await handle.callTool('echo', { text: '1' });
    await handle.callTool('echo', { text: '2' });
    const later = server.requests.slice(1).map(sessionOf);
    expect(later.every((sid) => sid === 'sid-A')).toBe(true);
  });

  it('§37 rejects a session id that is not visible ASCII: connect fails with ProtocolError that does not quote the id', async () => {
    const f = await fixture(cleanup);
    f.faults.invalidSessionIdOnce = true;
    const error = await rejection(connect({ url: f.url }, { name: 'bad-sid' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/session/i);
    expect(error.message).not.toContain(INVALID_SESSION_ID);
    expect(JSON.stringify(error)).not.toContain(INVALID_SESSION_ID);
    await settle(50);
    expect(f.requests.some((r) => sessionOf(r) === INVALID_SESSION_ID)).toBe(false);
  });

  it('§37 rejects an initialize response with two Mcp-Session-Id headers', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.rpcMethod === 'initialize') {
        res.setHeader('mcp-session-id', ['sid-1', 'sid-2']);
        replyJson(res, 200, initializeResult(request.body.id));
        return;
      }
      answerBasics(request, res);
    });
    const error = await rejection(connect({ url: server.url }, { name: 'two-sids' }));
    expect(error).toBeInstanceOf(ProtocolError);
  });

  it('§38 the session id is redacted in status() and never appears in errors or transition events', async () => {
    const f = await fixture(cleanup);
    const { handle, transitions } = await open(cleanup, f.url);
    const sid = [...f.sessions][0]!;
    expect(handle.status().sessionId).toBe('[redacted]');
    expect(JSON.stringify(handle.status())).not.toContain(sid);
    f.faults.fail500Once = true;
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    f.expireAllSessions(); // a transition: expired -> reinitializing -> ready
    await handle.callTool('echo', { text: 'y' });
    expect(transitions.length).toBeGreaterThan(0);
    const text = JSON.stringify({ error: { ...error, message: error.message }, transitions, status: handle.status() });
    expect(text).not.toContain(sid);
    expect(text).not.toContain([...f.sessions][0]!);
  });

  it('§38 a server that echoes the session id or the bearer token in an error body does not leak them into the error', async () => {
    const sessionId = 'sess-echoed-0123456789';
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId })) return;
      const auth = String(request.headers.authorization ?? '');
      replyJson(res, 500, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: `session ${sessionId} rejected token ${auth}` },
      });
    });
    const handle = await connect(
      { url: server.url, headers: { authorization: 'Bearer tok-very-secret' } },
      { name: 'echoer' },
    );
    cleanup.add(handle, (h) => h.close());
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(TransportError);
    expect(error.message).toContain('[redacted]');
    const text = JSON.stringify({ message: error.message, body: (error as TransportError).body });
    expect(text).not.toContain(sessionId);
    expect(text).not.toContain('tok-very-secret');
  });

  it('§38 the authorization header is sent on every request but never appears in status, errors or transition events', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const transitions: TransitionEvent[] = [];
    const handle = await connect({ url: f.url, headers: { Authorization: 'Bearer secret-token' } }, { name: 'auth' });
    cleanup.add(handle, (h) => h.close());
    handle.on('transition', (e) => transitions.push(e));
    await handle.callTool('echo', { text: 'x' });
    const errors: Error[] = [];
    f.faults.fail500Once = true;
    errors.push(await rejection(handle.callTool('echo', { text: 'x' })));
    f.faults.garbleNextBody = true;
    errors.push(await rejection(handle.callTool('echo', { text: 'x' })));
    f.faults.dropSocketOnce = true;
    errors.push(await rejection(handle.callTool('echo', { text: 'x' })));
    f.expireAllSessions();
    f.faults.notFoundOnInitialize = true; // re-initialize fails: transitions carry an error
    const healed = handle.callTool('echo', { text: 'x' });
    await until(() => transitions.some((t) => t.to === 'reconnecting'));
    f.faults.notFoundOnInitialize = false;
    // the supervisor restarts the connection and the parked call is answered; close once it is
    // ready again, so a DELETE goes out
    await healed;
    await until(() => transitions.at(-1)?.to === 'ready');
    const status = handle.status();
    await handle.close();
    for (const request of f.requests) expect(header(request, 'authorization')).toBe('Bearer secret-token');
    expect(new Set(f.requests.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    const seen = JSON.stringify({
      status,
      transitions,
      errors: errors.map((e) => ({ ...e, message: e.message, stack: e.stack })),
    });
    expect(seen).not.toContain('secret-token');
    expect(transitions.some((t) => t.error !== undefined)).toBe(true);
  });

  it('§39 sends the session id on every later POST, GET, resume GET and DELETE', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 10;
    await handle.callTool('echo', { text: 'resumed' });
    await handle.notify('notifications/roots/list_changed');
    await handle.close();
    const sid = sessionOf(f.requests[1]!);
    expect(sid).toMatch(/^sess-/);
    expect(sessionOf(f.requests[0]!)).toBeUndefined(); // initialize
    const later = f.requests.slice(1);
    expect(new Set(later.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    expect(gets(f.requests).some((r) => header(r, 'last-event-id') !== undefined)).toBe(true);
    for (const request of later) expect(sessionOf(request)).toBe(sid);
  });

  it('§40 never gets a 400 "Missing session ID": the id is on everything after initialize', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    await handle.listTools();
    await handle.request('ping');
    expect(f.requests.slice(1).every((r) => sessionOf(r) !== undefined)).toBe(true);
  });
});

describe('expiry and re-initialization (§41)', () => {
  it('§41 a 404 on a request that carried the session re-initializes once, without the old id, and the call succeeds', async () => {
    const f = await fixture(cleanup);
    const { handle, transitions } = await open(cleanup, f.url);
    const oldSid = [...f.sessions][0]!;
    f.expireAllSessions();
    const results = await Promise.all([1, 2, 3].map((n) => handle.callTool('echo', { text: String(n) })));
    expect(results.map((r) => r.content[0]!.text)).toEqual(['1', '2', '3']);
    const initializes = posts(f.requests, 'initialize');
    expect(initializes).toHaveLength(2); // one coalesced re-initialize for three 404s
    expect(sessionOf(initializes[1]!)).toBeUndefined();
    const newSid = [...f.sessions][0]!;
    expect(newSid).not.toBe(oldSid);
    const replayed = requestPosts(f.requests)
      .filter((r) => r.rpcMethod === 'tools/call')
      .slice(3);
    expect(replayed.map(sessionOf)).toEqual([newSid, newSid, newSid]);
    expect(transitions.map((t) => t.to)).toEqual(['expired', 'reinitializing', 'ready']);
  });

  it('§2 request ids keep increasing across a 404-driven re-initialize, never restarting or reusing an id', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    await handle.callTool('echo', { text: 'before' });
    f.expireAllSessions();
    await handle.callTool('echo', { text: 'after' });
    await handle.request('ping');
    const ids = requestPosts(f.requests).map((r) => r.body.id as number);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
  });

  it('§41 a 404 on a request that carried no session id does not start a re-initialize loop', async () => {
    const f = await fixture(cleanup);
    f.faults.notFoundOnInitialize = true;
    // type 'http': a 404 on initialize would otherwise (rightly) send an `auto` server to the SSE fallback.
    const error = await rejection(connect({ url: f.url, type: 'http' }, { name: 'no-session' }));
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(404);
    // connect() has stopped everything by the time it rejects: the count is final.
    expect(posts(f.requests, 'initialize')).toHaveLength(1);
  });

  it('§41 when the re-initialize fails too, the parked request waits for the restart and is answered once', async () => {
    const f = await fixture(cleanup);
    const { handle, transitions } = await open(cleanup, f.url, {
      restart: { backoff: { initialMs: 20, maxMs: 20, factor: 1, jitter: 0 } },
    });
    f.expireAllSessions();
    f.faults.notFoundOnInitialize = true;
    const call = handle.callTool('echo', { text: 'x' });
    await until(() => transitions.some((t) => t.from === 'reinitializing' && t.to === 'reconnecting'));
    // No loop: the failed re-initialize went through the restart policy.
    expect(posts(f.requests, 'initialize')).toHaveLength(2);
    f.faults.notFoundOnInitialize = false;
    expect((await call).content).toEqual([{ type: 'text', text: 'x' }]);
    expect(posts(f.requests, 'tools/call')).toHaveLength(2); // refused once, answered once
    expect(posts(f.requests, 'initialize')).toHaveLength(3);
  });

  it('§41 a late 404 from the old session does not end the new one (the request is sent again on the new session)', async () => {
    let session = 'sid-1';
    let initializes = 0;
    const server = await scriptedServer(cleanup, async (request, res) => {
      if (request.rpcMethod === 'initialize') {
        session = `sid-${++initializes}`;
        replyJson(res, 200, initializeResult(request.body.id), { 'mcp-session-id': session });
        return;
      }
      if (request.rpcMethod === 'tools/call' && sessionOf(request) !== session) {
        if (request.body.params.arguments.text === 'late') await settle(300);
        replyJson(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
        return;
      }
      if (answerBasics(request, res)) return;
      replyJson(res, 200, toolResult(request.body.id, request.body.params.arguments.text));
    });
    const { handle } = await open(cleanup, server.url);
    session = 'gone'; // the server forgot sid-1
    const late = handle.callTool('echo', { text: 'late' });
    await until(() => posts(server.requests, 'tools/call').length === 1);
    const prompt = await handle.callTool('echo', { text: 'prompt' }); // 404 at once -> re-initialize -> sid-2
    expect(prompt.content[0]!.text).toBe('prompt');
    expect((await late).content[0]!.text).toBe('late');
    expect(posts(server.requests, 'initialize')).toHaveLength(2);
    const lastCall = posts(server.requests, 'tools/call').at(-1)!;
    expect(sessionOf(lastCall)).toBe('sid-2');
    expect(handle.status().state).toBe('ready');
  });
});

describe('DELETE on close (§42)', () => {
  it('§42 close() sends DELETE with the session id', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    const sid = [...f.sessions][0]!;
    await handle.close();
    const del = deletes(f.requests);
    expect(del).toHaveLength(1);
    expect(sessionOf(del[0]!)).toBe(sid);
    expect(f.sessions.has(sid)).toBe(false);
  });

  it('§42 a 404 on DELETE (session already gone) is fine', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    f.expireAllSessions();
    await expect(handle.close()).resolves.toBeUndefined();
    expect(deletes(f.requests)).toHaveLength(1);
  });

  it('§42 a 405 on DELETE (server does not support it) is fine', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'DELETE') {
        replyJson(
          res,
          405,
          { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed' } },
          { allow: 'GET, POST' },
        );
        return;
      }
      answerBasics(request, res, { sessionId: 'sid-405' });
    });
    const { handle } = await open(cleanup, server.url);
    await expect(handle.close()).resolves.toBeUndefined();
    expect(deletes(server.requests)).toHaveLength(1);
  });

  it('§42 close() is bounded when the server never answers the DELETE', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'DELETE') return; // hang
      answerBasics(request, res, { sessionId: 'sid-hang' });
    });
    const { handle } = await open(cleanup, server.url);
    const started = Date.now();
    await handle.close();
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(deletes(server.requests)).toHaveLength(1);
  });

  it('§42 close() is bounded while a slow request is in flight (delayMs)', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    f.faults.delayMs = 5_000;
    const pending = rejection(handle.callTool('echo', { text: 'slow' }));
    await until(() => posts(f.requests, 'tools/call').length === 1);
    const started = Date.now();
    await handle.close();
    expect(Date.now() - started).toBeLessThan(2_500);
    expect((await pending).name).toBe('ConnectionClosedError');
    expect(deletes(f.requests)).toHaveLength(1);
  });

  it('§42 no DELETE when the server gave no session id', async () => {
    const f = await fixture(cleanup, { sessionRequired: false });
    const { handle } = await open(cleanup, f.url);
    await handle.callTool('echo', { text: 'x' });
    await handle.close();
    expect(deletes(f.requests)).toHaveLength(0);
  });
});

describe('MCP-Protocol-Version (§1.8)', () => {
  it('§43 the header is absent on initialize and present on initialized, every later POST, GET, resume GET and DELETE', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 10;
    await handle.callTool('echo', { text: 'resumed' });
    await handle.close();
    expect(header(f.requests[0]!, 'mcp-protocol-version')).toBeUndefined();
    const later = f.requests.slice(1);
    expect(later.map((r) => r.rpcMethod ?? r.method)).toEqual([
      'notifications/initialized',
      'GET',
      'tools/call',
      'GET',
      'DELETE',
    ]);
    for (const request of later) expect(header(request, 'mcp-protocol-version')).toBe('2025-11-25');
  });

  it('§44 the header carries the negotiated version (the server answers 2025-03-26)', async () => {
    const f = await fixture(cleanup, { protocolVersion: '2025-03-26' });
    const { handle } = await open(cleanup, f.url);
    await handle.callTool('echo', { text: 'x' });
    await handle.close();
    expect(posts(f.requests, 'initialize')[0]!.body.params.protocolVersion).toBe('2025-11-25');
    for (const request of f.requests.slice(1)) expect(header(request, 'mcp-protocol-version')).toBe('2025-03-26');
  });

  it('§45 after a re-initialize the header is dropped for the new initialize and restored with the newly negotiated value', async () => {
    let version = '2025-11-25';
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.rpcMethod === 'initialize') {
        replyJson(res, 200, initializeResult(request.body.id, version), { 'mcp-session-id': `sid-${version}` });
        return;
      }
      if (request.rpcMethod === 'tools/call' && sessionOf(request) !== `sid-${version}`) {
        replyJson(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
        return;
      }
      if (answerBasics(request, res)) return;
      replyJson(res, 200, toolResult(request.body.id, 'ok'));
    });
    const { handle } = await open(cleanup, server.url);
    version = '2025-06-18'; // the session expires; the next one negotiates an older version
    await handle.callTool('echo', { text: 'x' });
    const reinit = posts(server.requests, 'initialize')[1]!;
    expect(header(reinit, 'mcp-protocol-version')).toBeUndefined();
    const after = server.requests.slice(server.requests.indexOf(reinit) + 1);
    expect(after.length).toBeGreaterThanOrEqual(3); // initialized, GET, the replayed call
    for (const request of after) expect(header(request, 'mcp-protocol-version')).toBe('2025-06-18');
    expect(handle.status().protocolVersion).toBe('2025-06-18');
  });
});

describe("the session's DELETE (transports/http/session-delete.ts)", () => {
  const initializeParams = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } };

  it('carries the session id; any answer ends the session, one never sent is cut at its bound', async () => {
    let deleteAnswer: 'body' | '405' | 'never' = 'body';
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'DELETE') {
        if (deleteAnswer === 'body') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('gone');
        if (deleteAnswer === '405') return void res.writeHead(405).end();
        return; // never answered
      }
      answerBasics(request, res, { sessionId: 'sid-delete' });
    });
    const { transport, sink } = transportTo(cleanup, server.url, { terminateTimeoutMs: 150 });
    const session = async () => {
      transport.beginSession();
      await call(transport, sink, 'initialize', initializeParams, true);
    };
    for (const answer of ['body', '405', 'never'] as const) {
      deleteAnswer = answer;
      await session();
      const started = Date.now();
      await transport.terminateSession();
      if (answer === 'never') expect(Date.now() - started, 'cut at its bound').toBeGreaterThanOrEqual(140);
      expect(Date.now() - started).toBeLessThan(1_500);
    }
    const sent = deletes(server.requests);
    expect(sent).toHaveLength(3);
    expect(sent.map((r) => header(r, 'mcp-session-id'))).toEqual(['sid-delete', 'sid-delete', 'sid-delete']);
    // The socket of the DELETE cut at its bound is gone; the next request goes on a sound one.
    await session();
    expect(posts(server.requests).at(-1)?.rpcMethod).toBe('initialize');
  });
});
