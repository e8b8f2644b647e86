import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { freeReaderCount, readSseStream } from '../../src/transports/sse-reader.js';

const answer = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';

function handlers(events: string[]) {
  return {
    onEvent: (data: string) => events.push(data),
    onEventId: () => {},
    onRetry: () => {},
    isDone: () => events.length > 0,
  };
}

describe('readSseStream, once the handlers are done', () => {
  it('reads a stream the server already ended to its end instead of destroying it', async () => {
    const body = new Readable({ read() {} });
    body.push(Buffer.from(answer));
    body.push(Buffer.from(': trailing comment\n\n'));
    body.push(null);
    const events: string[] = [];
    await readSseStream(body, handlers(events), 1024);
    expect(events).toHaveLength(1);
    expect(body.readableEnded).toBe(true);
    expect(body.errored).toBeNull();
  });

  it('releases a stream that is still open', async () => {
    const body = new Readable({ read() {} });
    body.push(Buffer.from(answer));
    const events: string[] = [];
    await readSseStream(body, handlers(events), 1024);
    expect(events).toHaveLength(1);
    expect(body.destroyed).toBe(true);
    expect(body.readableEnded).toBe(false);
  });
});

describe('readSseStream decoding', () => {
  it('drops a leading byte order mark and joins characters split across chunks', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: {"text":"héllo"}\n\n')]);
    const events: string[] = [];
    const body = Readable.from([bytes.subarray(0, 1), bytes.subarray(1, 20), bytes.subarray(20)]);
    await readSseStream(body, { onEvent: (data) => events.push(data), onEventId: () => {}, onRetry: () => {} }, 1024);
    expect(events).toEqual(['{"text":"héllo"}']);
  });
});

describe('readSseStream reuses its parser and decoder', () => {
  const noHooks = { onEventId: () => {}, onRetry: () => {} };

  it('hands the reader back when a stream settles and takes it again for the next', async () => {
    const limit = 4321; // a limit of its own: no other test shares these readers
    expect(freeReaderCount(limit)).toBe(0);
    const events: string[] = [];
    await readSseStream(Readable.from([Buffer.from(answer)]), handlers(events), limit);
    expect(freeReaderCount(limit)).toBe(1);
    let whileReading = -1;
    await readSseStream(
      Readable.from([Buffer.from(answer)]),
      { ...noHooks, onEvent: () => (whileReading = freeReaderCount(limit)), isDone: () => whileReading >= 0 },
      limit,
    );
    expect(whileReading, 'the free reader is taken').toBe(0);
    expect(freeReaderCount(limit)).toBe(1);
  });

  it('carries nothing from a stream that broke mid-event and mid-character into the next one', async () => {
    const limit = 4322;
    const broken = new Readable({ read() {} });
    // Half an event, ending in the first byte of a two-byte character.
    broken.push(Buffer.concat([Buffer.from('id: 7\nevent: other\ndata: {"half":'), Buffer.from([0xc3])]));
    const first = readSseStream(broken, { ...noHooks, onEvent: () => {} }, limit);
    await new Promise((resolve) => setImmediate(resolve));
    broken.destroy(new Error('socket hang up'));
    await expect(first).rejects.toThrow('socket hang up');
    expect(freeReaderCount(limit)).toBe(1);

    const seen: Array<{ data: string; event: string | undefined; ids: string[] }> = [];
    const ids: string[] = [];
    await readSseStream(
      Readable.from([Buffer.from('data: {"whole":"é"}\n\n')]),
      {
        onEventId: (id) => ids.push(id),
        onRetry: () => {},
        onEvent: (data, event) => seen.push({ data, event, ids: [...ids] }),
      },
      limit,
    );
    expect(seen).toEqual([{ data: '{"whole":"é"}', event: undefined, ids: [] }]);
  });

  it('parses the next stream after one whose event was too large', async () => {
    const limit = 64;
    const tooLarge = readSseStream(
      Readable.from([Buffer.from(`data: ${'x'.repeat(200)}`)]),
      { ...noHooks, onEvent: () => {} },
      limit,
    );
    await expect(tooLarge).rejects.toThrow('larger than maxMessageBytes (64 bytes)');
    const events: string[] = [];
    await readSseStream(Readable.from([Buffer.from(answer)]), handlers(events), limit);
    expect(events).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}']);
  });

  it('holds no reader between events: an idle stream after its priming event hands it back', async () => {
    const limit = 4324;
    const body = new Readable({ read() {} });
    const ids: string[] = [];
    const reading = readSseStream(body, { ...noHooks, onEventId: (id) => ids.push(id), onEvent: () => {} }, limit);
    body.push(Buffer.from('id: prime-1\ndata: \n\n'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(ids).toEqual(['prime-1']);
    expect(freeReaderCount(limit), 'back on the free list while the stream stays open').toBe(1);
    // Half an event keeps it; the rest of the event hands it back again.
    body.push(Buffer.from('id: 2\ndata: {"a"'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(freeReaderCount(limit)).toBe(0);
    body.push(Buffer.from(':1}\n\n'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(freeReaderCount(limit)).toBe(1);
    body.push(null);
    await reading;
    expect(ids).toEqual(['prime-1', '2']);
  });

  it('gives each of several streams read at once a reader of its own', async () => {
    const limit = 4323;
    const bodies = [0, 1, 2].map(() => new Readable({ read() {} }));
    const events: string[][] = [[], [], []];
    const reads = bodies.map((body, i) =>
      readSseStream(body, { ...noHooks, onEvent: (data) => events[i]!.push(data) }, limit),
    );
    // Interleaved halves, each read before the next is pushed: a shared parser would mix them.
    bodies.forEach((body, i) => body.push(Buffer.from(`data: {"stream":${i},`)));
    await new Promise((resolve) => setImmediate(resolve));
    bodies.forEach((body) => body.push(Buffer.from(`"part":2}\n\n`)));
    bodies.forEach((body) => body.push(null));
    await Promise.all(reads);
    expect(events).toEqual([['{"stream":0,"part":2}'], ['{"stream":1,"part":2}'], ['{"stream":2,"part":2}']]);
    expect(freeReaderCount(limit)).toBe(3);
  });
});
