import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readSseStream } from '../../src/transports/sse-stream.js';

const answer = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';

function handlers(events: string[]) {
  return { onEvent: (data: string) => events.push(data), onEventId: () => {}, onRetry: () => {}, isDone: () => events.length > 0 };
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
