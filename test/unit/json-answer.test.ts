import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readsJsonWhole, requestAnswer, type PostAnswer } from '../../src/transports/json-answer.js';

// A bounded JSON answer is read whole in undici's dispatch handler, which leans on two of
// undici's internals: an upgrade that moves them must fail here, not make every POST slower.
describe('json-answer', () => {
  let server: Server;
  let pool: Pool;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/json') {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { ok: true } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      } else if (req.url === '/sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
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
});
