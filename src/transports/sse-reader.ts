/**
 * Reads a `text/event-stream` body with eventsource-parser. Events with an empty `data` field
 * (priming events) only move the cursor; comments are ignored; one event's data may not exceed
 * `maxEventBytes` (UTF-8 bytes, however the stream is chunked) or the stream is torn down with a
 * ProtocolError. A stream whose lines end in CR alone delivers its last event at end of stream.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { ProtocolError } from '../core/errors.js';

export interface SseHandlers {
  /** An event with data. `event` is undefined or 'message' for JSON-RPC payloads. */
  onEvent(data: string, event: string | undefined): void;
  /** Every event id the server sent, including those of priming events. */
  onEventId(id: string): void;
  /** The server's `retry` field, in milliseconds. */
  onRetry(ms: number): void;
  /** Checked after each chunk: true stops parsing and releases the body. */
  isDone?(): boolean;
}

const BOM = 0xfeff;
const CR = 0x0d;
const LF = 0x0a;
/**
 * The parser's own limit counts the characters it buffers, which include the field name of the
 * line in progress (`data: `) and a deferred CR: a little over the event limit, so that an event
 * of exactly `maxEventBytes` is never refused by it. The exact check is on each dispatched event.
 */
const LINE_SLACK = 16;

/**
 * An eventsource-parser and a StringDecoder, reused from one stream to the next: building them
 * per POST answered with SSE (seven closures, a native decoder buffer) was a few percent of the
 * client's CPU per call. A reader serves one stream at a time. A StringDecoder, not a
 * TextDecoder: that costs an ICU converter each.
 */
class EventReader {
  readonly decoder = new StringDecoder('utf8');
  readonly parser: EventSourceParser;
  /** The handlers of the stream being read; none while the reader is free. */
  handlers: SseHandlers | undefined;
  /** The stream being read sent an event past the limit. */
  tooLarge = false;

  constructor(readonly maxEventBytes: number) {
    this.parser = createParser({
      maxBufferSize: maxEventBytes + LINE_SLACK,
      onEvent: (message: EventSourceMessage) => {
        const handlers = this.handlers;
        if (!handlers || this.tooLarge) return;
        if (exceeds(message.data, maxEventBytes)) {
          this.tooLarge = true;
          return;
        }
        if (message.id !== undefined) handlers.onEventId(message.id);
        if (message.data !== '') handlers.onEvent(message.data, message.event);
      },
      onRetry: (ms) => {
        if (!this.tooLarge) this.handlers?.onRetry(ms);
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.tooLarge = true;
      },
    });
  }
}

/**
 * Whether `data` is longer than `max` UTF-8 bytes. A UTF-16 unit is 1 to 3 bytes (a surrogate
 * pair 4), so only lengths between max/3 and max need counting.
 */
function exceeds(data: string, max: number): boolean {
  if (data.length * 3 <= max) return false;
  if (data.length > max) return true;
  return Buffer.byteLength(data, 'utf8') > max;
}

/**
 * Free readers, per event size limit (the parser's limit is fixed when it is built). Bounded:
 * past the cap a finished reader is left to the garbage collector, so a burst of streams does
 * not pin readers for the life of the process.
 */
const freeReaders = new Map<number, EventReader[]>();
const MAX_FREE_READERS = 128;

function takeReader(maxEventBytes: number): EventReader {
  return freeReaders.get(maxEventBytes)?.pop() ?? new EventReader(maxEventBytes);
}

function returnReader(reader: EventReader): void {
  reader.handlers = undefined;
  reader.tooLarge = false;
  reader.parser.reset();
  reader.decoder.end(); // drops a partial character left by a stream that broke mid-way
  let free = freeReaders.get(reader.maxEventBytes);
  if (!free) freeReaders.set(reader.maxEventBytes, (free = []));
  if (free.length < MAX_FREE_READERS) free.push(reader);
}

/** Readers waiting for a stream (for tests: a reader is back once its stream settled). */
export function freeReaderCount(maxEventBytes: number): number {
  return freeReaders.get(maxEventBytes)?.length ?? 0;
}

/**
 * Resolves when the stream ended or the handlers are done; rejects when it broke or an event was
 * too large. Read with 'data' events: an async iterator per stream costs a generator, a promise
 * per chunk and ~4 KB held for as long as an idle GET stream lives.
 *
 * A stream holds a reader only while it is inside an event: a chunk that ends on an event's
 * blank line (LF LF) leaves the parser and the decoder empty, so the reader goes back to the free
 * list and the next chunk takes one. An idle GET stream (a priming event, then nothing for
 * minutes) holds none.
 */
export function readSseStream(
  body: Readable,
  handlers: SseHandlers,
  maxEventBytes: number,
  server?: string,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const stream = new SseStream(body, handlers, maxEventBytes, server, resolve, reject);
    // The listeners stay until the body is gone: an 'error' after we settled must not go unhandled.
    // The stream's own methods, bound (the body's shape is undici's: nothing is added to it), not
    // the seven closures and context that an idle GET stream held for its whole life (~1 KB).
    body.on('data', stream.data.bind(stream));
    body.on('end', stream.end.bind(stream));
    body.on('error', stream.settle.bind(stream));
    body.on('close', stream.closed.bind(stream));
  });
}

/** One stream being read: its place in the text and its outcome. */
class SseStream {
  reader: EventReader | undefined = undefined;
  started = false;
  settled = false;
  /** The text fed so far ends in CR: the parser holds it back (it may be half of a CRLF). */
  endsInCr = false;
  /** The text fed so far ends on an event's blank line (LF LF): nothing is buffered. */
  betweenEvents = false;
  endsInLf = false;

  constructor(
    readonly body: Readable,
    readonly handlers: SseHandlers,
    readonly maxEventBytes: number,
    readonly server: string | undefined,
    readonly resolve: () => void,
    readonly reject: (error: Error) => void,
  ) {}

  feed(active: EventReader, text: string): void {
    if (!this.started && text) {
      this.started = true;
      if (text.charCodeAt(0) === BOM) text = text.slice(1); // as TextDecoder did
    }
    if (!text) return;
    const last = text.charCodeAt(text.length - 1);
    this.endsInCr = last === CR;
    this.betweenEvents = last === LF && (text.length > 1 ? text.charCodeAt(text.length - 2) === LF : this.endsInLf);
    this.endsInLf = last === LF;
    active.parser.feed(text);
  }

  take(): EventReader {
    if (this.reader) return this.reader;
    const reader = (this.reader = takeReader(this.maxEventBytes));
    reader.handlers = this.handlers;
    return reader;
  }

  /** Settling hands the reader back: nothing of this stream may reach it after that. */
  settle(error?: Error): void {
    if (this.settled) return;
    this.settled = true;
    if (this.reader) returnReader(this.reader);
    this.reader = undefined;
    if (error) this.reject(error);
    else this.resolve();
  }

  data(chunk: Buffer): void {
    if (this.settled) return;
    const active = this.take();
    const body = this.body;
    try {
      this.feed(active, active.decoder.write(chunk));
    } catch (error) {
      // A handler threw (the parser calls them): this stream is done, the error is its outcome.
      body.destroy();
      this.settle(error as Error);
      return;
    }
    if (active.tooLarge) {
      body.destroy();
      this.settle(tooLargeError(this.maxEventBytes, this.server));
    } else if (this.handlers.isDone?.()) {
      // The end usually arrives with the last chunk and is pushed right after it.
      queueMicrotask(() => release(body));
      this.settle();
    } else if (this.betweenEvents) {
      returnReader(active);
      this.reader = undefined;
    }
  }

  closed(): void {
    if (!this.settled) this.settle(prematureClose());
  }

  end(): void {
    if (this.settled) return;
    const active = this.reader;
    if (active) {
      try {
        this.feed(active, active.decoder.end());
        // The stream's last line ended in CR alone: end of stream completes it.
        if (this.endsInCr && !active.tooLarge) active.parser.feed('\n');
      } catch (error) {
        this.settle(error as Error);
        return;
      }
      if (active.tooLarge) {
        this.settle(tooLargeError(this.maxEventBytes, this.server));
        return;
      }
    }
    this.settle();
  }
}

/**
 * A body the server already ended is read to its end (it costs nothing and keeps the socket);
 * breaking one off would make undici build an AbortError. Any other is destroyed.
 */
function release(body: Readable): void {
  const state = (body as { _readableState?: { ended?: boolean } })._readableState;
  if (state?.ended !== true) body.destroy();
}

function tooLargeError(maxEventBytes: number, server: string | undefined): ProtocolError {
  return new ProtocolError(`server-sent event larger than maxMessageBytes (${maxEventBytes} bytes)`, { server });
}

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}
