/**
 * A POST response stream that ends (or breaks) before its response: resumed through GET with
 * Last-Event-ID after the stream's own `retry`; when it cannot be resumed its outcome is unknown:
 * replayed at once if repeating it is safe, otherwise failed at once with OutcomeUnknownError.
 * The retry delay is driven by hand through the transport's `timers`.
 * docs/client-requirements.md §1.3 (items 20-21), §1.5 (29-31) and §1.6 (33-35) for POST streams.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  OutcomeUnknownError,
  RequestAbortedError,
  RequestTimeoutError,
  StreamEndedError,
  type JsonRpcNotification,
} from '../../../src/index.js';
import {
  answerBasics,
  call,
  cancellations,
  Cleanup,
  fixture,
  gets,
  handshake,
  header,
  ManualTimers,
  open,
  posts,
  rejection,
  scriptedServer,
  settle,
  sse,
  startSse,
  toolResult,
  transportTo,
  until,
} from '../helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const echo = (text: string) => ({ name: 'echo', arguments: { text } });

describe('streams that cannot be resumed (§21)', () => {
  it('§21 a POST stream that ends without a response and without an event id: a call not known safe rejects at once with OutcomeUnknownError', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url, { requestTimeoutMs: 30_000 });
    f.faults.sseEndWithoutResponse = 'without-id';
    const started = Date.now();
    const error = await rejection(handle.callTool('echo', { text: 'lost' }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(StreamEndedError);
    expect((error.cause as Error).message).toMatch(/no event id/);
    expect(posts(f.requests, 'tools/call')).toHaveLength(1); // not repeated
    expect(Date.now() - started).toBeLessThan(1_000); // well before the 30 s request timeout
    expect(gets(f.requests)).toHaveLength(1); // no resume attempt
    expect((await handle.callTool('echo', { text: 'next' })).content[0]!.text).toBe('next');
  });

  it('§21 a POST stream that breaks without any event id rejects with StreamEndedError', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-break' })) return;
      startSse(res);
      res.write(': working\n\n');
      setTimeout(() => res.destroy(), 20);
    });
    const { handle } = await open(cleanup, server.url, { requestTimeoutMs: 30_000 });
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(StreamEndedError);
    await until(() => handle.status().state === 'ready');
  });

  it('§21 a read that loses its response stream without an event id is sent again and answered once', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url, { requestTimeoutMs: 30_000 });
    f.faults.sseEndWithoutResponse = 'without-id';
    const { tools } = await handle.listTools();
    expect(tools.map((t) => t.name)).toContain('echo');
    expect(posts(f.requests, 'tools/list')).toHaveLength(2);
  });
});

describe('resuming a POST stream through GET (§1.5)', () => {
  it('§30 a POST stream that ends with an event id is resumed by GET with Last-Event-ID and the call resolves', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 20;
    const result = await handle.callTool('echo', { text: 'resumed' });
    expect(result.content[0]!.text).toBe('resumed');
    const resumes = gets(f.requests).slice(1);
    expect(resumes).toHaveLength(1);
    // events: initialize response (1), the listener's priming event (2), the POST stream's priming event (3)
    expect(header(resumes[0]!, 'last-event-id')).toBe('3');
    expect(header(resumes[0]!, 'accept')).toContain('text/event-stream');
    await until(() => f.getStreamCount() === 1); // the resume stream is released
  });

  it('§20 §34 a POST stream that breaks after an event id is resumed, not cancelled, and reports no error', async () => {
    let pendingId: unknown;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET' && header(request, 'last-event-id') === 'post-1') {
        startSse(res);
        res.end(
          sse(toolResult(999_999, 'unrelated')) +
            sse({ id: 'post-2', event: 'message', data: JSON.stringify(toolResult(pendingId, 'after the break')) }),
        );
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-broken' })) return;
      pendingId = request.body.id;
      startSse(res);
      res.write('id: post-1\nretry: 10\ndata: \n\n');
      setTimeout(() => res.destroy(), 20);
    });
    const { handle, transitions } = await open(cleanup, server.url);
    const warnings: Error[] = [];
    handle.on('warning', (w) => warnings.push(w));
    expect((await handle.callTool('echo', { text: 'x' })).content[0]!.text).toBe('after the break');
    await settle(30);
    expect(cancellations(server.requests)).toHaveLength(0);
    expect(warnings).toEqual([]);
    expect(transitions).toEqual([]);
  });

  it("§29 event ids are per stream: the POST resume uses the POST stream's id and the listener resumes with its own", async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    const listenerId = '2'; // initialize response (1), then the listener's priming event (2)
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 10;
    await handle.callTool('echo', { text: 'x' }); // POST priming (3), its response on the resume GET (4)
    expect(header(gets(f.requests)[1]!, 'last-event-id')).toBe('3');
    f.closeGetStreams();
    await until(() => gets(f.requests).length === 3);
    expect(header(gets(f.requests)[2]!, 'last-event-id')).toBe(listenerId);
  });

  it('§31 a resume GET answered 405 fails the request at once instead of hanging', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url, { requestTimeoutMs: 30_000 });
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 10;
    f.faults.getMode = 405; // the listener is already open; only the resume sees this
    const started = Date.now();
    const error = await rejection(handle.callTool('echo', { text: 'x' }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error.cause as Error).message).toContain('405');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('§31 an aborted request releases its resume GET', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 10;
    const controller = new AbortController();
    const call = rejection(handle.callTool('slow', { ms: 5_000 }, { signal: controller.signal }));
    await until(() => gets(f.requests).length === 2 && f.getStreamCount() === 2);
    controller.abort();
    expect(await call).toBeInstanceOf(RequestAbortedError);
    await until(() => f.getStreamCount() === 1, 1_000);
  });

  it('§31 a resume whose response never comes ends with the request timeout (requestTimeoutMs), and the resume GET is released', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url, { requestTimeoutMs: 400 });
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 10;
    const call = rejection(handle.callTool('slow', { ms: 5_000 }));
    await until(() => gets(f.requests).length === 2 && f.getStreamCount() === 2);
    expect(await call).toBeInstanceOf(RequestTimeoutError);
    await until(() => f.getStreamCount() === 1, 2_000);
  });

  it('§31 a resume whose response never comes ends with the per-request timeout, and the resume GET is released', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const { handle } = await open(cleanup, f.url);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 10;
    const call = rejection(handle.callTool('slow', { ms: 5_000 }, { timeoutMs: 300 }));
    await until(() => gets(f.requests).length === 2 && f.getStreamCount() === 2);
    expect(await call).toBeInstanceOf(RequestTimeoutError);
    // The timed-out request's resume GET should be closed by the client. Today it stays open until the
    // server writes to it (5 s here): the runtime does not pass the per-request timeoutMs (nor a signal
    // that fires on timeout) to transport.send, so the transport bounds it by requestTimeoutMs (60 s).
    await until(() => f.getStreamCount() === 1, 1_000).catch(() => undefined);
    expect(f.getStreamCount(), 'resume GET still open after its request timed out').toBe(1);
  });

  it('a request that settled elsewhere releases its POST stream at the next chunk', async () => {
    let closed = false;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (answerBasics(request, res, { sessionId: 'sid-held' })) return;
      startSse(res);
      res.write('id: held-1\ndata: \n\n');
      res.on('close', () => (closed = true));
      setTimeout(() => res.write(': still working\n\n'), 200);
    });
    const { handle } = await open(cleanup, server.url);
    expect(await rejection(handle.callTool('echo', { text: 'x' }, { timeoutMs: 50 }))).toBeInstanceOf(
      RequestTimeoutError,
    );
    await until(() => closed, 2_000);
  });
});

describe('the retry delay, driven by hand (§1.6)', () => {
  it("§33 waits exactly the stream's retry before the resume GET, and not a moment less", async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const timers = new ManualTimers();
    const { transport, sink } = transportTo(cleanup, f.url, { timers });
    await handshake(transport, sink);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 5_000; // longer than the test would wait on a real clock
    const pending = call(transport, sink, 'tools/call', echo('hand-timed'));
    const delay = await timers.nth(0);
    expect(delay.ms).toBe(5_000);
    await settle(30);
    expect(gets(f.requests)).toHaveLength(0); // nothing before the delay has passed
    delay.fire();
    const response = (await pending) as { result: { content: Array<{ text: string }> } };
    expect(response.result.content[0]!.text).toBe('hand-timed');
    expect(gets(f.requests)).toHaveLength(1);
    expect(timers.scheduled).toHaveLength(1);
  });

  it('§33 without a retry field the first resume waits the default delay', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const timers = new ManualTimers();
    const { transport, sink } = transportTo(cleanup, f.url, { timers });
    await handshake(transport, sink);
    f.faults.sseEndWithoutResponse = 'with-id';
    const pending = call(transport, sink, 'tools/call', echo('default'));
    const delay = await timers.nth(0);
    expect(delay.ms).toBe(1_000);
    delay.fire();
    await pending;
  });

  it('§35 retry applies to the stream that sent it, not to later streams', async () => {
    const f = await fixture(cleanup, { responseMode: 'sse' });
    const timers = new ManualTimers();
    const { transport, sink } = transportTo(cleanup, f.url, { timers });
    await handshake(transport, sink);
    f.faults.sseEndWithoutResponse = 'with-id';
    f.faults.retryMs = 5_000;
    const first = call(transport, sink, 'tools/call', echo('first'));
    const firstDelay = await timers.nth(0);
    expect(firstDelay.ms).toBe(5_000);
    firstDelay.fire();
    await first;
    f.faults.retryMs = undefined; // the next stream sends no retry
    f.faults.sseEndWithoutResponse = 'with-id';
    const second = call(transport, sink, 'tools/call', echo('second'));
    const secondDelay = await timers.nth(1);
    expect(secondDelay.ms).toBe(1_000);
    secondDelay.fire();
    await second;
  });

  it('§35 resumes that bring no new event are capped: the request fails with StreamEndedError', async () => {
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET') {
        startSse(res);
        res.end(); // nothing new, ever
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-stall' })) return;
      startSse(res);
      res.end('id: stall-1\nretry: 7\ndata: \n\n');
    });
    const timers = new ManualTimers();
    const { transport, sink } = transportTo(cleanup, server.url, { timers });
    await handshake(transport, sink);
    const pending = rejection(call(transport, sink, 'tools/call', echo('never')));
    for (let n = 0; n < 5; n++) (await timers.nth(n)).fire();
    const error = await pending;
    expect(error).toBeInstanceOf(StreamEndedError);
    expect(error.message).toMatch(/gave up/);
    expect(timers.scheduled.map((t) => t.ms)).toEqual([7, 7, 7, 7, 7]);
    const resumes = gets(server.requests);
    expect(resumes).toHaveLength(5);
    for (const get of resumes) expect(header(get, 'last-event-id')).toBe('stall-1');
  });

  it('§35 the cap resets whenever a resume brings new events', async () => {
    let resumes = 0;
    let requestId: unknown;
    const server = await scriptedServer(cleanup, (request, res) => {
      if (request.method === 'GET') {
        startSse(res);
        resumes++;
        // eight resumes that each bring one new event (a notification), then the response
        if (resumes <= 8)
          res.end(
            sse({
              id: `ev-${resumes}`,
              event: 'message',
              data: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { n: resumes } }),
            }),
          );
        else
          res.end(
            sse({ id: `ev-${resumes}`, event: 'message', data: JSON.stringify(toolResult(requestId, 'finally')) }),
          );
        return;
      }
      if (answerBasics(request, res, { sessionId: 'sid-progress' })) return;
      requestId = request.body.id;
      startSse(res);
      res.end('id: ev-0\nretry: 3\ndata: \n\n');
    });
    const timers = new ManualTimers();
    const { transport, sink } = transportTo(cleanup, server.url, { timers });
    await handshake(transport, sink);
    const pending = call(transport, sink, 'tools/call', echo('patient'));
    for (let n = 0; n < 9; n++) (await timers.nth(n)).fire();
    const response = (await pending) as { result: { content: Array<{ text: string }> } };
    expect(response.result.content[0]!.text).toBe('finally');
    const progress = sink.messages.filter(
      (m): m is JsonRpcNotification => 'method' in m && m.method === 'notifications/progress',
    );
    expect(progress).toHaveLength(8);
    expect(gets(server.requests).map((g) => header(g, 'last-event-id'))).toEqual([
      'ev-0',
      'ev-1',
      'ev-2',
      'ev-3',
      'ev-4',
      'ev-5',
      'ev-6',
      'ev-7',
      'ev-8',
    ]);
    expect(posts(server.requests, 'notifications/cancelled')).toHaveLength(0);
  });
});
