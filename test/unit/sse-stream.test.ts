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
