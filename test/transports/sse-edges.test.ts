/**
 * SSE framing edges (issue #21): lines ended by CR alone, an event's size limit counted exactly
 * whatever the chunking, and a handler that throws. The fuzz suite (test/fuzz/sse.fuzz.test.ts)
 * covers the same ground with generated streams; these are the cases named in the issue.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/index.js';
import { readSseStream } from '../../src/transports/sse-reader.js';

/** Reads `chunks` as one stream; resolves with the events' data, or rejects as the reader does. */
async function read(chunks: Array<string | Buffer>, limit = 1024): Promise<string[]> {
  const events: string[] = [];
  await readSseStream(
    Readable.from(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk))),
    { onEvent: (data) => events.push(data), onEventId: () => {}, onRetry: () => {} },
    limit,
  );
  return events;
}

/** The stream cut into pieces of `size` bytes (1: split at every byte). */
function pieces(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('SSE lines ended by CR alone', () => {
  const stream = 'id: 1\rdata: {"a":1}\r\rid: 2\rdata: {"b":2}\r\r';

  it('delivers every event, the last one included, at end of stream', async () => {
    expect(await read([stream])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('delivers the last event whatever the split, at every byte too', async () => {
    for (const size of [1, 2, 3, 7, stream.length - 1]) {
      expect(await read(pieces(stream, size)), `pieces of ${size}`).toEqual(['{"a":1}', '{"b":2}']);
    }
  });

  it('does not deliver an event whose blank line never came (as with LF)', async () => {
    expect(await read(['data: {"a":1}\r\rdata: {"cut":1}\r'])).toEqual(['{"a":1}']);
    expect(await read(['data: {"a":1}\n\ndata: {"cut":1}\n'])).toEqual(['{"a":1}']);
  });

  it('reads a CR then an LF in the next chunk as one line end, not two', async () => {
    expect(await read(['data: {"x":1}\r', '\ndata: {"y":2}\r\n\r\n'])).toEqual(['{"x":1}\n{"y":2}']);
  });
});

describe('maxMessageBytes bounds each event exactly', () => {
  const limit = 4096;
  const event = (bytes: number) => `data: ${'x'.repeat(bytes)}\n\n`;

  it('accepts an event of exactly the limit however it is chunked', async () => {
    for (const size of [1, 100, 4096, 8192]) {
      const events = await read(pieces(event(limit), size), limit);
      expect(
        events.map((e) => e.length),
        `pieces of ${size}`,
      ).toEqual([limit]);
    }
  });

  it('refuses an event one byte over the limit however it is chunked, in one chunk too', async () => {
    for (const size of [1, 100, 4096, 8192, 64 * 1024]) {
      await expect(read(pieces(event(limit + 1), size), limit), `pieces of ${size}`).rejects.toThrow(
        /larger than maxMessageBytes \(4096 bytes\)/,
      );
    }
  });

  it('refuses an event a few KB over the limit that arrives in large chunks', async () => {
    const error = await read([event(limit + 3_000)], limit).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const wide = 'é'.repeat(limit / 2); // 2 bytes each: exactly the limit
    expect(await read([`data: ${wide}\n\n`], limit)).toEqual([wide]);
    await expect(read([`data: ${wide}é\n\n`], limit)).rejects.toThrow(/larger than maxMessageBytes/);
  });

  it('counts the lines of a multi-line event with the newlines that join them', async () => {
    const half = 'y'.repeat(limit / 2 - 1);
    // two halves and one joining newline: limit - 1 bytes
    expect(await read([`data: ${half}\ndata: ${half}\n\n`], limit)).toEqual([`${half}\n${half}`]);
    await expect(read([`data: ${half}\ndata: ${half}yy\n\n`], limit)).rejects.toThrow(/larger than maxMessageBytes/);
  });

  it('delivers nothing after the event that was too large', async () => {
    const seen: string[] = [];
    const reading = readSseStream(
      Readable.from([Buffer.from(`data: {"before":1}\n\n${event(limit + 1)}data: {"after":1}\n\n`)]),
      { onEvent: (data) => seen.push(data), onEventId: () => {}, onRetry: () => {} },
      limit,
    );
    await expect(reading).rejects.toThrow(/larger than maxMessageBytes/);
    expect(seen).toEqual(['{"before":1}']);
  });
});

describe('a handler that throws', () => {
  it('ends the read with its error instead of an uncaught exception', async () => {
    const body = Readable.from([Buffer.from('data: {"a":1}\n\ndata: {"b":2}\n\n')]);
    const reading = readSseStream(
      body,
      {
        onEvent: () => {
          throw new Error('handler bug');
        },
        onEventId: () => {},
        onRetry: () => {},
      },
      1024,
    );
    await expect(reading).rejects.toThrow('handler bug');
    expect(body.destroyed).toBe(true);
  });
});
