import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/core/errors.js';
import { readsJsonWhole, requestAnswer, type AnswerEvents, type PostAnswer } from '../../src/transports/json-answer.js';
import { freeReaderCount } from '../../src/transports/sse-reader.js';

// A bounded JSON answer is read whole in undici's dispatch handler, which leans on two of
// undici's internals: an upgrade that moves them must fail here, not make every POST slower.
describe('json-answer', () => {
  let server: Server;
  let pool: Pool;
  const closedByClient: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/json') {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { ok: true } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      } else if (req.url === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
      } else if (req.url === '/events') {
        // A notification first, the answer split across two chunks, then an event after it.
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        res.write('retry: 250\nid: a\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n');
        res.write('id: b\ndata: {"jsonrpc":"2.0","id":7,');
        res.end('"result":{"ok":true}}\n\n');
      } else if (req.url === '/open-after-answer') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"jsonrpc":"2.0","id":7,"result":{}}\n\n');
        res.on('close', () => closedByClient.push(req.url!));
      } else if (req.url === '/ends-early') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('retry: 40\nid: 5\ndata:\n\n');
      } else if (req.url === '/too-large') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          `data: {"jsonrpc":"2.0","method":"n"}\n\ndata: ${'x'.repeat(200)}\n\ndata: {"jsonrpc":"2.0","id":7,"result":{}}\n\n`,
        );
      } else if (req.url === '/refused') {
        // A 2025-era server's answer to the era probe: 404 with a JSON-RPC error, its length declared.
        const body = '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}';
        res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      } else if (req.url === '/refused-chunked') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.write('{"jsonrpc":"2.0","id":1,');
        res.end('"error":{"code":-32000,"message":"Bad Request"}}');
      } else if (req.url === '/refused-large') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(`{"error":{"code":-32000,"message":"${'x'.repeat(9_000)}"}}`);
      } else if (req.url === '/failing') {
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': 2 });
        res.end('{}');
      } else {
        res.writeHead(202);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    await pool.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (path: string, maxBytes = 1_000_000) =>
    new Promise<PostAnswer>((resolve, reject) =>
      requestAnswer(pool, { path, method: 'POST', body: '{}' }, undefined, maxBytes, (error, answer) =>
        error ? reject(error) : resolve(answer!),
      ),
    );

  it('finds undici’s internals', () => {
    expect(readsJsonWhole).toBe(true);
  });

  it('reads a bounded JSON answer whole, and leaves any other answer a body', async () => {
    const json = await post('/json');
    expect(json.text).toBe('{"jsonrpc":"2.0","id":1,"result":{"ok":true}}');
    expect(json.body).toBeUndefined();
    const tooLarge = await post('/json', 10);
    expect(tooLarge.text).toBeUndefined();
    expect(await tooLarge.body!.text()).toContain('"ok":true');
    const stream = await post('/sse');
    expect(stream.text).toBeUndefined();
    expect(await stream.body!.text()).toContain('data: ');
    const accepted = await post('/accepted');
    expect(accepted.statusCode).toBe(202);
    await accepted.body!.dump();
  });

  it('reads a small JSON refusal (4xx) whole, declared or chunked; a larger one is described by its status, a 5xx left a body', async () => {
    const refused = await post('/refused');
    expect(refused).toMatchObject({ statusCode: 404, refused: true });
    expect(refused.body).toBeUndefined();
    expect(refused.text).toContain('"code":-32001');
    const chunked = await post('/refused-chunked');
    expect(chunked).toMatchObject({ statusCode: 400, refused: true });
    expect(chunked.text).toBe('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Bad Request"}}');
    const large = await post('/refused-large');
    expect(large).toMatchObject({ statusCode: 400, refused: true, text: '' });
    const failing = await post('/failing');
    expect(failing.refused).toBeUndefined();
    expect(await failing.body!.text()).toBe('{}');
  });

  /** Where a stream's events go: recorded, answered by the event whose id is 7. */
  function recorder(maxMessageBytes = 1_000_000) {
    const delivered: string[] = [];
    const events: AnswerEvents = {
      server: 'test',
      maxMessageBytes,
      sink: { isAwaiting: () => !delivered.some((data) => data.includes('"id":7')), onStreamError: () => {} },
      deliver(text) {
        delivered.push(text);
        return text.includes('"id":7');
      },
    };
    const post = (path: string) =>
      new Promise<PostAnswer>((resolve, reject) =>
        requestAnswer(
          pool,
          { path, method: 'POST', body: '{}' },
          undefined,
          1_000_000,
          (error, answer) => (error ? reject(error) : resolve(answer!)),
          events,
          7,
        ),
      );
    return { delivered, post };
  }

  it('reads a request’s event stream in the handler: events in order, the answer, where a resume would start', async () => {
    const { delivered, post } = recorder(4096);
    const answer = await post('/events');
    expect(answer.body).toBeUndefined();
    expect(delivered).toEqual([
      '{"jsonrpc":"2.0","method":"notifications/message","params":{}}',
      '{"jsonrpc":"2.0","id":7,"result":{"ok":true}}',
    ]);
    expect(answer.stream).toMatchObject({ answered: true, lastEventId: 'b', retryMs: 250, failure: undefined });
    expect(freeReaderCount(4096), 'the parser is back for the next stream').toBe(1);
  });

  it('a stream that ends before its answer says how far it came', async () => {
    const { delivered, post } = recorder();
    const answer = await post('/ends-early');
    expect(delivered).toEqual([]);
    expect(answer.stream).toMatchObject({ answered: false, lastEventId: '5', retryMs: 40, progressed: true });
    expect(answer.stream!.failure).toBeUndefined();
  });

  it('a stream still open after its answer is released, its socket with it', async () => {
    const { post } = recorder();
    const answer = await post('/open-after-answer');
    expect(answer.stream?.answered).toBe(true);
    await expect.poll(() => closedByClient).toContain('/open-after-answer');
  });

  it('an event past the limit fails the stream with a ProtocolError; nothing after it is delivered', async () => {
    const { delivered, post } = recorder(100);
    const answer = await post('/too-large');
    expect(delivered).toEqual(['{"jsonrpc":"2.0","method":"n"}']);
    expect(answer.stream?.answered).toBe(false);
    expect(answer.stream?.failure).toBeInstanceOf(ProtocolError);
  });
});
