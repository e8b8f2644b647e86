/**
 * Fuzzing the SSE reader (src/transports/sse-reader.ts): generated event streams with every line
 * ending (LF, CRLF, CR), a byte order mark, comments, multi-line data, unknown fields, ids,
 * `retry`, events over the size limit, cut into chunks anywhere (between the bytes of a
 * character too). Valid streams deliver exactly the modelled events; oversize ones a typed error
 * with nothing after; garbage resolves or fails typed; nothing hangs; memory stays bounded.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { test } from '@fast-check/vitest';
import { afterAll, describe, expect } from 'vitest';
import { ProtocolError } from '../../src/index.js';
import { readSseStream } from '../../src/transports/sse-reader.js';
import { configureFuzz, ErrorLog } from './settings.js';

configureFuzz('sse');
const errors = new ErrorLog();

// ---------------------------------------------------------------- the model

interface ModelEvent {
  /** `data:` lines in order (an event with none is not dispatched). */
  data: string[];
  id?: string | undefined;
  event?: string | undefined;
  retry?: number | undefined;
  comments: string[];
  unknown: Array<[field: string, value: string]>;
  /** Lines of the event in the order written: indexes into the parts above. */
  order: number[];
}

type Delivered = ['event', string, string | undefined] | ['id', string] | ['retry', number];

/** A field value: any text without a line break (characters of 1 to 4 bytes, NUL included). */
const value = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('a', ' ', ':', '{', '"', 'é', '€', '😀', '\t', '\0'),
      fc.string({ unit: 'grapheme', maxLength: 1 }),
    ),
    maxLength: 40,
  })
  .map((text) => text.replace(/[\r\n]/g, ''));

const unknownField = fc
  .string({ unit: fc.constantFrom('a', 'b', 'x', 'y', 'z', '-'), minLength: 1, maxLength: 6 })
  .filter((name) => !['data', 'event', 'id', 'retry'].includes(name));

const modelEvent: fc.Arbitrary<ModelEvent> = fc
  .record({
    data: fc.array(value, { maxLength: 4 }),
    id: fc.option(value, { nil: undefined }),
    event: fc.option(value, { nil: undefined }),
    retry: fc.option(fc.nat({ max: 100_000 }), { nil: undefined }),
    comments: fc.array(value, { maxLength: 2 }),
    unknown: fc.array(fc.tuple(unknownField, value), { maxLength: 2 }),
    seed: fc.nat(),
  })
  .map(({ seed, ...event }) => {
    // Data lines keep their order; the other lines go anywhere among them.
    const others = [
      ...(event.id === undefined ? [] : [-1]),
      ...(event.event === undefined ? [] : [-2]),
      ...(event.retry === undefined ? [] : [-3]),
      ...event.comments.map((_, i) => -10 - i),
      ...event.unknown.map((_, i) => -20 - i),
    ];
    const order = event.data.map((_, i) => i);
    let s = seed;
    for (const other of others) {
      s = (s * 1103515245 + 12345) >>> 0;
      order.splice(s % (order.length + 1), 0, other);
    }
    return { ...event, order };
  });

/** The lines of one event, without line ends, then its blank line. */
function lines(event: ModelEvent): string[] {
  const out: string[] = [];
  for (const index of event.order) {
    if (index >= 0) out.push(`data: ${event.data[index]!}`);
    else if (index === -1) out.push(`id: ${event.id!}`);
    else if (index === -2) out.push(`event: ${event.event!}`);
    else if (index === -3) out.push(`retry: ${event.retry!}`);
    else if (index <= -20) out.push(`${event.unknown[-20 - index]![0]}: ${event.unknown[-20 - index]![1]}`);
    else out.push(`:${event.comments[-10 - index]!}`);
  }
  out.push('');
  return out;
}

/** The stream's text: each line ended by LF, CRLF or CR (never a CR before a blank line's LF: that is one CRLF). */
function serialize(events: ModelEvent[], endings: number[], bom: boolean): string {
  let text = bom ? '\uFEFF' : '';
  let previous = '';
  let k = 0;
  for (const event of events) {
    for (const line of lines(event)) {
      let ending = ['\n', '\r\n', '\r'][endings[k++ % endings.length]! % 3]!;
      if (previous === '\r' && line === '' && ending === '\n') ending = '\r\n';
      text += line + ending;
      previous = ending;
    }
  }
  return text;
}

/** What the reader must deliver (eventsource-parser's rules, and ours: empty data only moves the cursor). */
function expected(events: ModelEvent[]): Delivered[] {
  const out: Delivered[] = [];
  for (const event of events) {
    if (event.retry !== undefined) out.push(['retry', event.retry]);
    if (event.data.length === 0) continue;
    if (event.id !== undefined && !event.id.includes('\0')) out.push(['id', event.id]);
    const data = event.data.join('\n');
    if (data !== '') out.push(['event', data, event.event || undefined]);
  }
  return out;
}

/** The bytes cut at the given points (relative positions in [0, 1)). */
function chunks(bytes: Buffer, cuts: number[]): Buffer[] {
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

/** Reads the chunks; the retries sorted into place by when they were seen. */
async function read(parts: Buffer[], limit: number): Promise<{ delivered: Delivered[]; error?: unknown }> {
  const delivered: Delivered[] = [];
  const body = Readable.from(parts);
  try {
    await withDeadline(
      readSseStream(
        body,
        {
          onEvent: (data, event) => delivered.push(['event', data, event]),
          onEventId: (id) => delivered.push(['id', id]),
          onRetry: (ms) => delivered.push(['retry', ms]),
        },
        limit,
      ),
    );
    return { delivered };
  } catch (error) {
    return { delivered, error };
  }
}

/** Nothing hangs: a read that neither settles nor fails within 2 s fails the property. */
function withDeadline<T>(promise: Promise<T>, ms = 2_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung for ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const cutsArb = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { maxLength: 30 });
const endingsArb = fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 8 });
const LIMIT = 64 * 1024;

describe('SSE framing, fuzzed', () => {
  test.prop([fc.array(modelEvent, { maxLength: 8 }), endingsArb, fc.boolean(), cutsArb])(
    'a valid stream delivers exactly its events, however it is cut and whatever its line ends',
    async (events, endings, bom, cuts) => {
      const bytes = Buffer.from(serialize(events, endings, bom));
      const { delivered, error } = await read(chunks(bytes, cuts), LIMIT);
      expect(error).toBeUndefined();
      expect(delivered).toEqual(expected(events));
    },
  );

  test.prop([fc.array(modelEvent, { minLength: 1, maxLength: 3 }), endingsArb, fc.boolean()])(
    'a small valid stream split at every byte delivers exactly its events',
    async (events, endings, bom) => {
      const bytes = Buffer.from(serialize(events, endings, bom));
      const everyByte = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
      const { delivered, error } = await read(everyByte, LIMIT);
      expect(error).toBeUndefined();
      expect(delivered).toEqual(expected(events));
    },
  );

  test.prop([
    fc.array(modelEvent, { maxLength: 3 }),
    fc.integer({ min: 1, max: 300 }),
    fc.nat({ max: 2 }),
    endingsArb,
    cutsArb,
  ])(
    'an event over the limit fails the stream with a ProtocolError, delivering the events before it and none after',
    async (before, over, filler, endings, cuts) => {
      const limit = 256;
      const big: ModelEvent = {
        data: ['x'.repeat(limit - 10), ['y', 'é', '😀'][filler]!.repeat(over)],
        comments: [],
        unknown: [],
        order: [0, 1],
      };
      const after: ModelEvent = { data: ['{"after":1}'], comments: [], unknown: [], order: [0] };
      const size = Buffer.byteLength(big.data.join('\n'));
      const stream = serialize([...before, big, after], endings, false);
      const { delivered, error } = await read(chunks(Buffer.from(stream), cuts), limit);
      const events = (list: Delivered[]) => list.filter((d) => d[0] === 'event');
      const fitting = before.every((e) => Buffer.byteLength(e.data.join('\n')) <= limit);
      if (size <= limit) {
        expect(error).toBeUndefined();
        return;
      }
      expect(errors.record(error)).toBeInstanceOf(ProtocolError);
      if (fitting) expect(events(delivered)).toEqual(events(expected(before)));
      expect(delivered.some((d) => d[0] === 'event' && d[1] === '{"after":1}')).toBe(false);
    },
  );

  test.prop([fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 20 })])(
    'any bytes at all: the read settles, delivering or failing with a typed error',
    async (parts) => {
      const { error } = await read(
        parts.map((p) => Buffer.from(p)),
        128,
      );
      if (error !== undefined) expect(errors.record(error)).toBeInstanceOf(ProtocolError);
    },
  );

  test.prop([
    fc.integer({ min: 1, max: 4096 }),
    fc.constantFrom('data: ', 'id: ', ':', 'foo: ', ''),
    fc.nat({ max: 2 }),
  ])(
    'memory is bounded: a line that never ends is refused once it passes the limit',
    async (chunkSize, prefix, which) => {
      const limit = 1024;
      const filler = ['x', 'é', '😀'][which]!;
      const chunk = Buffer.from(filler.repeat(chunkSize));
      let produced = 0;
      const body = new Readable({
        read() {
          const bytes = produced === 0 ? Buffer.concat([Buffer.from(prefix), chunk]) : chunk;
          produced += bytes.length;
          this.push(produced > 10 * 1024 * 1024 ? null : bytes);
        },
      });
      const reading = readSseStream(body, { onEvent: () => {}, onEventId: () => {}, onRetry: () => {} }, limit);
      let consumed = 0;
      body.on('data', (bytes: Buffer) => (consumed += bytes.length));
      const error = await withDeadline(
        reading.then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
      expect(errors.record(error)).toBeInstanceOf(ProtocolError);
      // The parser holds characters: the limit and its slack (16) at most, 2 bytes a character at
      // most here, plus the chunk that crossed it (two, when the stream handed over two at once).
      expect(consumed).toBeLessThanOrEqual(2 * (limit + 16) + prefix.length + 2 * chunk.length);
    },
  );
});

afterAll(() => {
  console.log(`fuzz sse: errors seen ${JSON.stringify(Object.fromEntries(errors.seen))}`);
});
