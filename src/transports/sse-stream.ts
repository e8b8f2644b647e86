/**
 * Reads a `text/event-stream` body with eventsource-parser. Events with an empty `data` field
 * (priming events) only move the cursor; comments are ignored; one event may not exceed
 * `maxEventBytes` or the stream is torn down with a ProtocolError.
 */
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
  /** Checked after each chunk: true stops parsing; a body the server already ended is read to its end, any other is released. */
  isDone?(): boolean;
}

const BOM = 0xfeff;

export async function readSseStream(
  body: AsyncIterable<Uint8Array>,
  handlers: SseHandlers,
  maxEventBytes: number,
  server?: string,
): Promise<void> {
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
  let done = false;
  for await (const chunk of body) {
    if (done) continue;
    let text = decoder.write(chunk);
    if (!started && text) {
      started = true;
      if (text.charCodeAt(0) === BOM) text = text.slice(1); // as TextDecoder did
    }
    parser.feed(text);
    if (failure) throw failure;
    if (handlers.isDone?.()) {
      if (!hasReceivedEnd(body)) return;
      done = true;
    }
  }
  if (done) return;
  const rest = decoder.end();
  if (rest) parser.feed(started || rest.charCodeAt(0) !== BOM ? rest : rest.slice(1));
  if (failure) throw failure;
}

/**
 * The server already ended the stream (its last bytes may still be buffered). Reading on to the
 * end then costs nothing and keeps the socket; breaking off would destroy the body with an AbortError.
 */
function hasReceivedEnd(body: AsyncIterable<Uint8Array>): boolean {
  const state = (body as { _readableState?: { ended?: boolean; destroyed?: boolean } })._readableState;
  return state?.ended === true && state.destroyed !== true;
}
