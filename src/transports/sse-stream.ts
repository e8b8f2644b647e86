/**
 * Reads a `text/event-stream` body with eventsource-parser. Events with an empty `data` field
 * (priming events) only move the cursor; comments are ignored; one event may not exceed
 * `maxEventBytes` or the stream is torn down with a ProtocolError.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ProtocolError } from '../protocol/errors.js';

export interface SseHandlers {
  /** An event with data. `event` is undefined or 'message' for JSON-RPC payloads. */
  onEvent(data: string, event: string | undefined): void;
  /** Every event id the server sent, including those of priming events. */
  onEventId(id: string): void;
  /** The server's `retry` field, in milliseconds. */
  onRetry(ms: number): void;
  /** Checked after each chunk: true stops reading and releases the body. */
  isDone?(): boolean;
}

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
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    if (handlers.isDone?.()) return;
  }
  const rest = decoder.decode();
  if (rest) parser.feed(rest);
  if (failure) throw failure;
}
