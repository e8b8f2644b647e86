/**
 * Fuzzing stdio framing: the line reader (src/transports/stdio/line-reader.ts) with lines of any
 * content and size cut anywhere, and a real child process (servers/stdio-server.mjs, its `emit`
 * tool) writing hostile stdout before its answer: partial lines, garbage, huge lines, answers to
 * nobody, `__proto__` keys. Lines come out whole and bounded; the call is answered; everything
 * unusable is a typed warning; the connection stays ready.
 */
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, ProtocolError, type ServerHandle } from '../../src/index.js';
import { LineReader } from '../../src/transports/stdio/line-reader.js';
import { configureFuzz, ErrorLog, expectNoPollution } from './settings.js';

configureFuzz('stdio-lines');
const errors = new ErrorLog();

const STDIO_SERVER = fileURLToPath(new URL('../../servers/stdio-server.mjs', import.meta.url));

/** Line text of any size (characters of 1 to 4 bytes), no newline. */
const lineText = fc
  .oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 300 }).map((n) => 'é'.repeat(n)) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t', '\r', '  \r') },
  )
  .map((text) => text.replace(/\n/g, ''));

function cut(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    if (point > start) out.push(bytes.subarray(start, point));
    start = Math.max(start, point);
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

const cutsArb = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { maxLength: 40 });

describe('the stdio line reader, fuzzed', () => {
  test.prop([fc.array(fc.tuple(lineText, fc.boolean()), { maxLength: 20 }), fc.boolean(), cutsArb])(
    'every line comes out whole, a trailing CR dropped, blank ones skipped, oversize ones reported and skipped',
    (lines, finalNewline, cuts) => {
      const limit = 200;
      const text = lines.map(([line, crlf]) => line + (crlf ? '\r\n' : '\n')).join('');
      const last = finalNewline || lines.length === 0 ? '' : 'tail-without-newline';
      const bytes = Buffer.from(text + last);
      const seen: string[] = [];
      const oversize: number[] = [];
      const reader = new LineReader(limit, { onLine: (line) => seen.push(line), onOversize: (n) => oversize.push(n) });
      const parts = cut(bytes, cuts);
      for (const part of parts) reader.push(part);
      reader.end();

      const expected: string[] = [];
      let tooLong = 0;
      for (const [line, crlf] of [...lines, ...(last ? [[last, false] as const] : [])]) {
        // One CR before the newline is dropped: the CR of a CRLF, or the line's own last character.
        const out = crlf ? line : line.replace(/\r$/, '');
        if (Buffer.byteLength(out) > limit) tooLong++;
        else if (out.trim() !== '') expected.push(out);
      }
      expect(seen).toEqual(expected);
      expect(oversize).toHaveLength(tooLong);
      // Bounded: an oversize line is noticed within the limit, its CR and one chunk.
      const biggest = Math.max(0, ...parts.map((p) => p.length));
      for (const n of oversize) expect(n).toBeLessThanOrEqual(limit + 1 + biggest);
    },
  );
});

describe('a stdio server with hostile stdout, fuzzed', () => {
  let handle: ServerHandle;
  const warnings: Error[] = [];
  beforeAll(async () => {
    handle = await connect(
      { command: process.execPath, args: [STDIO_SERVER], maxMessageBytes: 128 * 1024, requestTimeoutMs: 5_000 },
      { name: 'fuzz-stdio' },
    );
    handle.on('warning', (warning) => warnings.push(warning));
  });
  afterAll(async () => {
    console.log(`fuzz stdio-lines: errors seen ${JSON.stringify(Object.fromEntries(errors.seen))}`);
    await handle.close();
  });

  /** What the server writes before its answer, as separate writes. */
  const junk = fc.oneof(
    fc.string({ maxLength: 80 }).map((s) => s.replace(/\n/g, ' ')),
    fc.constantFrom(
      '{"jsonrpc":"2.0","id":"nobody","result":{}}',
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}',
      '{"jsonrpc":"2.0","id":999999,"result":{"__proto__":{"polluted":1}}}',
      '{"__proto__":{"polluted":1},"jsonrpc":"2.0","method":"x"}',
      '[[[[[[[[[[]]]]]]]]]]',
      `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
      '{"jsonrpc":"2.0","id":1,"result":',
      '\r',
      '',
    ),
    fc.integer({ min: 130_000, max: 200_000 }).map((n) => `{"big":"${'x'.repeat(n)}"}`),
  );

  test.prop([fc.array(fc.tuple(junk, fc.boolean()), { maxLength: 6 })])(
    'the call is answered whatever came before it; what is unusable is a typed warning',
    async (items) => {
      // Each item its own write; `true` ends it with a newline, otherwise it runs into the next.
      const chunks = items.map(([text, newline]) => Buffer.from(text + (newline ? '\n' : '')).toString('base64'));
      warnings.length = 0;
      const result = await handle.callTool('emit', { chunks });
      expect(result.content[0]!.text).toBe('emitted');
      for (const warning of warnings) expect(errors.record(warning)).toBeInstanceOf(ProtocolError);
      expect(handle.status().state).toBe('ready');
      expectNoPollution();
    },
  );

  it('produced only documented errors', () => {
    for (const name of errors.seen.keys()) expect(['ProtocolError']).toContain(name);
  });
});
