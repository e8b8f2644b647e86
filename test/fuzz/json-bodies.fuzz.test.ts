/**
 * Fuzzing the answers of a Streamable HTTP server (a real node:http server on 127.0.0.1, the
 * real client): JSON bodies valid and not (truncated, deeply nested, huge numbers, `__proto__` and
 * `constructor` keys, wrong ids and versions, result and error together, batches), other statuses
 * and content types. A valid answer gives its result; anything else a documented, typed error;
 * no call hangs; the connection survives; Object.prototype is untouched.
 */
import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpError, RequestTimeoutError, type ServerHandle } from '../../src/index.js';
import { answerBasics, Cleanup, open, scriptedServer } from '../transports/helpers.js';
import { configureFuzz, ErrorLog, expectNoPollution } from './settings.js';

configureFuzz('json-bodies');
const errors = new ErrorLog();
const cleanup = new Cleanup();

/** How the server answers the next tools/call. */
interface Answer {
  status: number;
  contentType: string;
  /** The body text; `{id}` stands for the request's id. */
  body: string;
  /** Cut the body after this many bytes: `declared` keeps the full Content-Length and drops the socket. */
  cut?: { at: number; declared: boolean } | undefined;
}

let next: Answer = { status: 200, contentType: 'application/json', body: '{}' };
let handle: ServerHandle;

function answer(res: ServerResponse, id: unknown, socket: { destroy(): void }): void {
  const body = Buffer.from(next.body.replaceAll('{id}', JSON.stringify(id)));
  const cut = next.cut;
  if (!cut) {
    res.writeHead(next.status, { 'content-type': next.contentType, 'content-length': String(body.length) });
    res.end(body);
    return;
  }
  const part = body.subarray(0, Math.min(cut.at, body.length - 1));
  if (cut.declared) {
    res.writeHead(next.status, { 'content-type': next.contentType, 'content-length': String(body.length) });
    res.write(part, () => socket.destroy());
  } else {
    res.writeHead(next.status, { 'content-type': next.contentType });
    res.end(part);
  }
}

beforeAll(async () => {
  const server = await scriptedServer(cleanup, (request, res, req) => {
    if (answerBasics(request, res, { sessionId: 'fuzz-session' })) return;
    // The session probe after an unknown outcome is answered plainly: the fuzz is for the tool call.
    if (request.body.method === 'ping') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: request.body.id, result: {} }));
      return;
    }
    answer(res, request.body.id, req.socket);
  });
  ({ handle } = await open(cleanup, server.url, { requestTimeoutMs: 3_000, maxMessageBytes: 4 * 1024 * 1024 }));
});
afterAll(async () => {
  console.log(`fuzz json-bodies: errors seen ${JSON.stringify(Object.fromEntries(errors.seen))}`);
  await cleanup.run();
});

/** Calls once with `answer`; the result, or the typed error (an untyped one fails the property). */
async function callWith(a: Answer): Promise<{ result?: unknown; error?: Error }> {
  next = a;
  try {
    return { result: await handle.callTool('echo', {}) };
  } catch (error) {
    // Every answer here settles the call at once: waiting for the timeout means it hung.
    if (error instanceof RequestTimeoutError) throw new Error('the call hung until its timeout', { cause: error });
    return { error: errors.record(error) };
  } finally {
    expectNoPollution();
  }
}

// ---------------------------------------------------------------- generators

/** JSON text with `__proto__` and `constructor` keys as JSON has them (own keys, not prototypes). */
const hostileObject = fc
  .record({
    value: fc.jsonValue({ maxDepth: 3 }),
    proto: fc.boolean(),
    ctor: fc.boolean(),
  })
  .map(({ value, proto, ctor }) => {
    const parts = [`"content":[{"type":"text","text":"ok"}]`, `"value":${JSON.stringify(value)}`];
    if (proto) parts.push(`"__proto__":{"polluted":1,"isAdmin":true}`);
    if (ctor) parts.push(`"constructor":{"prototype":{"polluted":1}}`);
    return `{${parts.join(',')}}`;
  });

const hugeNumber = fc.constantFrom('1e400', '-1e400', '123456789012345678901234567890', '-0', '1e-400', '0.1e999999');

const deep = fc
  .record({ depth: fc.integer({ min: 1, max: 150_000 }), kind: fc.constantFrom('[', '{"a":') })
  .map(({ depth, kind }) =>
    kind === '[' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

const idText = fc.oneof(
  fc.constant('{id}'),
  fc.constant('null'),
  fc.constant('"other"'),
  fc.integer().map(String),
  hugeNumber,
);

/** A body: a response in many shapes, right and wrong. */
const body = fc.oneof(
  hostileObject.map((result) => `{"jsonrpc":"2.0","id":{id},"result":${result}}`),
  fc.tuple(idText, hostileObject).map(([id, result]) => `{"jsonrpc":"2.0","id":${id},"result":${result}}`),
  fc
    .tuple(fc.constantFrom('"1.0"', '2', 'null', '"2.0 "'), hostileObject)
    .map(([version, result]) => `{"jsonrpc":${version},"id":{id},"result":${result}}`),
  fc
    .tuple(fc.integer(), fc.string(), hostileObject)
    .map(
      ([code, message, result]) =>
        `{"jsonrpc":"2.0","id":{id},"result":${result},"error":{"code":${code},"message":${JSON.stringify(message)}}}`,
    ),
  fc
    .tuple(fc.oneof(fc.integer().map(String), hugeNumber), fc.string(), fc.jsonValue({ maxDepth: 2 }))
    .map(
      ([code, message, data]) =>
        `{"jsonrpc":"2.0","id":{id},"error":{"code":${code},"message":${JSON.stringify(message)},"data":${JSON.stringify(data) ?? 'null'}}}`,
    ),
  fc
    .tuple(fc.array(fc.constantFrom('note', 'answer', 'other', 'junk', 'request'), { maxLength: 5 }), hostileObject)
    .map(
      ([items, result]) =>
        `[${items
          .map((item) =>
            item === 'note'
              ? '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
              : item === 'answer'
                ? `{"jsonrpc":"2.0","id":{id},"result":${result}}`
                : item === 'other'
                  ? `{"jsonrpc":"2.0","id":"nobody","result":{}}`
                  : item === 'request'
                    ? '{"jsonrpc":"2.0","id":"srv-1","method":"ping"}'
                    : '42',
          )
          .join(',')}]`,
    ),
  deep,
  deep.map((nested) => `{"jsonrpc":"2.0","id":{id},"result":{"content":[],"deep":${nested}}}`),
  hugeNumber.map((n) => `{"jsonrpc":"2.0","id":{id},"result":{"content":[],"n":${n}}}`),
  fc.string({ maxLength: 200 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);

describe('JSON bodies, fuzzed', () => {
  test.prop([hostileObject])('a valid answer gives exactly its result, prototypes untouched', async (result) => {
    const outcome = await callWith({
      status: 200,
      contentType: 'application/json',
      body: `{"jsonrpc":"2.0","id":{id},"result":${result}}`,
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.result).toEqual(JSON.parse(result));
    expect(Object.getPrototypeOf(outcome.result)).toBe(Object.prototype);
  });

  test.prop([body, fc.option(fc.record({ at: fc.nat({ max: 400 }), declared: fc.boolean() }), { nil: undefined })])(
    'any body, whole or cut short: a result or a typed error, and the connection goes on',
    async (text, cut) => {
      const outcome = await callWith({ status: 200, contentType: 'application/json', body: text, cut });
      if (outcome.error instanceof McpError) expect(outcome.error.rpcCode).toEqual(expect.any(Number));
      // A body cut short leaves the outcome unknown: one probe of the session, then ready again.
      await expect.poll(() => handle.status().state, { timeout: 5_000 }).toBe('ready');
    },
  );

  test.prop([
    fc.constantFrom(200, 400, 405, 406, 409, 413, 415, 422, 429, 500, 502, 503),
    fc.constantFrom('application/json', 'text/event-stream', 'text/html', 'application/json; charset=utf-8', ''),
    body,
  ])('any status and content type: a result or a typed error', async (status, contentType, text) => {
    const sse = contentType === 'text/event-stream' ? `event: message\ndata: ${text.replace(/\n/g, ' ')}\n\n` : text;
    await callWith({ status, contentType, body: sse });
    // A 400 on the session is checked by one probe first.
    await expect.poll(() => handle.status().state, { timeout: 5_000 }).toBe('ready');
  });

  it('produced only documented errors, each with a code and retryable', () => {
    expect(errors.seen.size).toBeGreaterThan(0);
    for (const name of errors.seen.keys())
      expect([
        'McpError',
        'ProtocolError',
        'TransportError',
        'ServerBusyError', // a 429/503 whose wait would outlast the call's timeout
        'StreamEndedError',
        'OutcomeUnknownError',
      ]).toContain(name);
  });
});
