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
export class EventReader {
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

/**
 * Where one stream is in its text: what `feedChunk` and `feedEnd` need. A Readable body's stream
 * (below) and a POST answer read in undici's dispatch handler (json-answer.ts) both are one: the
 * fields live on the object that reads the stream, nothing is allocated per stream for them.
 */
export interface FeedState {
  readonly handlers: SseHandlers;
  readonly maxEventBytes: number;
  readonly server: string | undefined;
  /** The reader while the stream is inside an event; none between events. */
  reader: EventReader | undefined;
  started: boolean;
  /** The text fed so far ends in CR: the parser holds it back (it may be half of a CRLF). */
  endsInCr: boolean;
  /** The text fed so far ends on an event's blank line (LF LF): nothing is buffered. */
  betweenEvents: boolean;
  endsInLf: boolean;
}

function feedText(state: FeedState, active: EventReader, text: string): void {
  if (!state.started && text) {
    state.started = true;
    if (text.charCodeAt(0) === BOM) text = text.slice(1); // as TextDecoder did
  }
  if (!text) return;
  const last = text.charCodeAt(text.length - 1);
  state.endsInCr = last === CR;
  state.betweenEvents = last === LF && (text.length > 1 ? text.charCodeAt(text.length - 2) === LF : state.endsInLf);
  state.endsInLf = last === LF;
  active.parser.feed(text);
}

function takeFor(state: FeedState): EventReader {
  if (state.reader) return state.reader;
  const reader = (state.reader = takeReader(state.maxEventBytes));
  reader.handlers = state.handlers;
  return reader;
}

/** Hands the stream's reader back (when it settles): nothing of this stream may reach it after that. */
export function dropReader(state: FeedState): void {
  if (state.reader) returnReader(state.reader);
  state.reader = undefined;
}

/**
 * Feeds one chunk to the stream's handlers; returns the error that ends the stream (an event past
 * the limit, a handler that threw), else undefined. Between events the reader goes back.
 */
export function feedChunk(state: FeedState, chunk: Buffer): Error | undefined {
  const active = takeFor(state);
  try {
    feedText(state, active, active.decoder.write(chunk));
  } catch (error) {
    return error as Error; // a handler threw (the parser calls them)
  }
  if (active.tooLarge) return tooLargeError(state.maxEventBytes, state.server);
  if (state.betweenEvents) {
    returnReader(active);
    state.reader = undefined;
  }
  return undefined;
}

/** The end of the stream: what the decoder and a last line ending in CR alone still hold. */
export function feedEnd(state: FeedState): Error | undefined {
  const active = state.reader;
  if (!active) return undefined;
  try {
    feedText(state, active, active.decoder.end());
    // The stream's last line ended in CR alone: end of stream completes it.
    if (state.endsInCr && !active.tooLarge) active.parser.feed('\n');
  } catch (error) {
    return error as Error;
  }
  return active.tooLarge ? tooLargeError(state.maxEventBytes, state.server) : undefined;
}

/** One Readable body being read: its place in the text and its outcome. */
class SseStream implements FeedState {
  reader: EventReader | undefined = undefined;
  started = false;
  settled = false;
  endsInCr = false;
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

  settle(error?: Error): void {
    if (this.settled) return;
    this.settled = true;
    dropReader(this);
    if (error) this.reject(error);
    else this.resolve();
  }

  data(chunk: Buffer): void {
    if (this.settled) return;
    const failure = feedChunk(this, chunk);
    if (failure) {
      this.body.destroy();
      this.settle(failure);
    } else if (this.handlers.isDone?.()) {
      // The end usually arrives with the last chunk and is pushed right after it.
      const body = this.body;
      queueMicrotask(() => release(body));
      this.settle();
    }
  }

  closed(): void {
    if (!this.settled) this.settle(prematureClose());
  }

  end(): void {
    if (!this.settled) this.settle(feedEnd(this));
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
