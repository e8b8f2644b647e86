/**
 * Reads a `text/event-stream` body with eventsource-parser. Events with an empty `data` field
 * (priming events) only move the cursor; comments are ignored; one event may not exceed
 * `maxEventBytes` or the stream is torn down with a ProtocolError.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { ProtocolError } from '../protocol/errors.js';

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
      maxBufferSize: maxEventBytes,
      onEvent: (message: EventSourceMessage) => {
        const handlers = this.handlers;
        if (!handlers) return;
        if (message.id !== undefined) handlers.onEventId(message.id);
        if (message.data !== '') handlers.onEvent(message.data, message.event);
      },
      onRetry: (ms) => this.handlers?.onRetry(ms),
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.tooLarge = true;
      },
    });
  }
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
 */
export function readSseStream(body: Readable, handlers: SseHandlers, maxEventBytes: number, server?: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const reader = takeReader(maxEventBytes);
    reader.handlers = handlers;
    let started = false;
    let settled = false;
    const feed = (text: string) => {
      if (!started && text) {
        started = true;
        if (text.charCodeAt(0) === BOM) text = text.slice(1); // as TextDecoder did
      }
      if (text) reader.parser.feed(text);
    };
    // Settling hands the reader back: nothing of this stream may reach it after that.
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      returnReader(reader);
      if (error) reject(error);
      else resolve();
    };
    // The listeners stay until the body is gone: an 'error' after we settled must not go unhandled.
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      feed(reader.decoder.write(chunk));
      if (reader.tooLarge) {
        body.destroy();
        settle(tooLargeError(maxEventBytes, server));
      } else if (handlers.isDone?.()) {
        // The end usually arrives with the last chunk and is pushed right after it.
        queueMicrotask(() => release(body));
        settle();
      }
    });
    body.on('end', () => {
      if (settled) return;
      feed(reader.decoder.end());
      settle(reader.tooLarge ? tooLargeError(maxEventBytes, server) : undefined);
    });
    body.on('error', (error: Error) => settle(error));
    body.on('close', () => {
      if (!settled) settle(prematureClose());
    });
  });
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
