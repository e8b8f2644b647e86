/**
 * Bad input and failed exchanges: each rejects the one call with a typed, clear error, and the
 * connection (and its session) survives for the next call.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ProtocolError, TransportError, OutcomeUnknownError } from '../../../src/index.js';
import {
  answerBasics,
  cancellations,
  Cleanup,
  fixture,
  header,
  open,
  posts,
  rejection,
  scriptedServer,
  sse,
  startSse,
  toolResult,
  until,
} from '../helpers.js';
import type { HttpFixture } from '../../../servers/http-fixture.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** The next call works on the same session, with no new initialize. */
async function expectSurvived(f: HttpFixture, handle: Awaited<ReturnType<typeof open>>['handle']): Promise<void> {
  const sid = header(posts(f.requests, 'notifications/initialized')[0]!, 'mcp-session-id');
  expect((await handle.callTool('echo', { text: 'still here' })).content[0]!.text).toBe('still here');
  expect(posts(f.requests, 'initialize')).toHaveLength(1);
  expect(header(posts(f.requests, 'tools/call').at(-1)!, 'mcp-session-id')).toBe(sid);
  expect(handle.status().state).toBe('ready');
}

describe('bad input from the server', () => {
  it('malformed JSON rejects the call with ProtocolError quoting an excerpt; the connection survives', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    f.faults.garbleNextBody = true;
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/malformed JSON/);
    expect(error.message).toContain('garbage');
    await expectSurvived(f, handle);
  });

  it('§17 a wrong content type rejects the call with ProtocolError naming it; the connection survives', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url);
    f.faults.wrongContentTypeOnce = true;
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain('text/html');
    expect(error.message).toMatch(/application\/json or text\/event-stream/);
    await expectSurvived(f, handle);
  });

  it('a JSON body over maxMessageBytes rejects the call with ProtocolError; the connection survives', async () => {
    const f = await fixture(cleanup);
    const { handle } = await open(cleanup, f.url, { maxMessageBytes: 4_096 });
    f.faults.hugeBodyBytes = 64 * 1024;
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/maxMessageBytes \(4096\)/);
    await expectSurvived(f, handle);
  });

  it('a chunked JSON body (no Content-Length) over maxMessageBytes is refused while reading', async () => {
    let big = true;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-chunked' })) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      if (!big) {
        res.end(JSON.stringify(toolResult(request.body.id, 'small')));
        return;
      }
      big = false;
      const text = 'y'.repeat(1024);
      res.write(`{"jsonrpc":"2.0","id":${request.body.id},"result":{"content":[`);
      for (let i = 0; i < 16; i++) res.write(`${i ? ',' : ''}{"type":"text","text":"${text}"}`);
      res.end(']}}');
    });
    const { handle } = await open(cleanup, server.url, { maxMessageBytes: 4_096 });
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/maxMessageBytes/);
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('small');
  });

  it('an SSE event over maxMessageBytes rejects the call with ProtocolError; the connection survives', async () => {
    let big = true;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-big-event' })) return;
      startSse(res);
      res.end(sse(toolResult(request.body.id, big ? 'z'.repeat(64 * 1024) : 'small')));
      big = false;
    });
    const { handle } = await open(cleanup, server.url, { maxMessageBytes: 4_096 });
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toMatch(/larger than maxMessageBytes/);
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('small');
    expect(handle.status().state).toBe('ready');
  });

  it('a malformed event on a POST stream is reported as a warning and fails that call when no response follows', async () => {
    let first = true;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-bad-event' })) return;
      startSse(res);
      if (first) {
        first = false;
        res.end('event: message\ndata: {not json\n\n');
        return;
      }
      res.end(sse(toolResult(request.body.id, 'fine')));
    });
    const { handle } = await open(cleanup, server.url);
    const warnings: Error[] = [];
    handle.on('warning', (w) => warnings.push(w));
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(warnings.map((w) => w.constructor.name)).toEqual(['ProtocolError']);
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('fine');
  });

  it('a malformed event on the GET stream is a warning; the stream and the connection go on', async () => {
    let getRes: ServerResponse | undefined;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET') {
        startSse(res);
        res.write('id: g-1\ndata: \n\n');
        getRes = res;
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-bad-get' })) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(toolResult(request.body.id, 'ok')));
    });
    const { handle, transitions } = await open(cleanup, server.url);
    const warnings: Error[] = [];
    const notes: unknown[] = [];
    handle.on('warning', (w) => warnings.push(w));
    handle.on('notification', (n) => notes.push(n));
    getRes!.write('data: [1, 2\n\n');
    getRes!.write(
      sse({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'after the bad one' } }),
    );
    await until(() => notes.length === 1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toBeInstanceOf(ProtocolError);
    expect(handle.status().state).toBe('ready');
    expect(transitions).toEqual([]);
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('ok');
  });

  it('an event on the GET stream over maxMessageBytes ends that stream; the listener resumes after its last event id', async () => {
    const gets: Array<string | undefined> = [];
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET') {
        gets.push(request.headers['last-event-id'] as string | undefined);
        startSse(res);
        // The first stream: an id and `retry` in its first chunk, then an event past the bound.
        if (gets.length === 1) res.write(`id: g-1\nretry: 10\ndata: \n\ndata: ${'x'.repeat(5_000)}\n\n`);
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-big-get' })) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(toolResult(request.body.id, 'ok')));
    });
    const { handle } = await open(cleanup, server.url, { maxMessageBytes: 4_096 });
    await until(() => gets.length === 2);
    expect(gets).toEqual([undefined, 'g-1']);
    expect(handle.status().state).toBe('ready');
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('ok');
  });
});

describe('failed exchanges', () => {
  it('a 500 rejects with TransportError status 500 and keeps the session (same id, no new initialize)', async () => {
    const f = await fixture(cleanup);
    const { handle, transitions } = await open(cleanup, f.url);
    f.faults.fail500Once = true;
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(500);
    expect((error as TransportError).retryable).toBe(true);
    expect(error.message).toContain('Internal Server Error');
    await expectSurvived(f, handle);
    expect(transitions).toEqual([]);
  });

  it('§20 a dropped socket: a call not known safe rejects with OutcomeUnknownError (the socket error as its cause), sends no cancellation, one ping checks the session, and the next call works', async () => {
    const f = await fixture(cleanup);
    const { handle, transitions } = await open(cleanup, f.url);
    f.faults.dropSocketOnce = true;
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(TransportError);
    expect((error.cause as TransportError).status).toBeUndefined();
    await expectSurvived(f, handle);
    expect(cancellations(f.requests)).toHaveLength(0);
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual(['ready->probing', 'probing->ready']);
    expect(posts(f.requests, 'ping')).toHaveLength(1);
  });

  it('a JSON body that answers a different id rejects with ProtocolError instead of hanging', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-wrong-id' })) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(toolResult(424242, 'not yours')));
    });
    const { handle } = await open(cleanup, server.url, { requestTimeoutMs: 30_000 });
    const started = Date.now();
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
