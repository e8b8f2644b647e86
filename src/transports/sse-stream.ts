/**
 * Reads a `text/event-stream` body with eventsource-parser. Events with an empty `data` field
 * (priming events) only move the cursor; comments are ignored; one event may not exceed
 * `maxEventBytes` or the stream is torn down with a ProtocolError.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
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
 * Resolves when the stream ended or the handlers are done; rejects when it broke or an event was
 * too large. Read with 'data' events: an async iterator per stream costs a generator, a promise
 * per chunk and ~4 KB held for as long as an idle GET stream lives.
 */
export function readSseStream(body: Readable, handlers: SseHandlers, maxEventBytes: number, server?: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let failure: Error | undefined;
    const parser = createParser({
      maxBufferSize: maxEventBytes,
      onEvent(message: EventSourceMessage) {
        if (message.id !== undefined) handlers.onEventId(message.id);
        if (message.data !== '') handlers.onEvent(message.data, message.event);
      },
      onRetry: handlers.onRetry,
      onError(error) {
        if (error.type === 'max-buffer-size-exceeded') {
          failure = new ProtocolError(`server-sent event larger than maxMessageBytes (${maxEventBytes} bytes)`, { server });
        }
      },
    });
    // StringDecoder: a TextDecoder per stream costs an ICU converter per response.
    const decoder = new StringDecoder('utf8');
    let started = false;
    let settled = false;
    const feed = (text: string) => {
      if (!started && text) {
        started = true;
        if (text.charCodeAt(0) === BOM) text = text.slice(1); // as TextDecoder did
      }
      if (text) parser.feed(text);
    };
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve();
    };
    // The listeners stay until the body is gone: an 'error' after we settled must not go unhandled.
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      feed(decoder.write(chunk));
      if (failure) {
        body.destroy();
        settle(failure);
      } else if (handlers.isDone?.()) {
        // The end usually arrives with the last chunk and is pushed right after it.
        queueMicrotask(() => release(body));
        settle();
      }
    });
    body.on('end', () => {
      if (settled) return;
      feed(decoder.end());
      settle(failure);
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

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}
