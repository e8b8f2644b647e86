/**
 * Follows a POST response stream until the response arrives. When the stream ends (or breaks)
 * first, it is resumed with GET + `Last-Event-ID` after the server's `retry` delay; without an
 * event id it cannot be resumed and the request fails at once with StreamEndedError.
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { mayReconnectStream, streamReconnectDelay } from '../../../machines/stream-policy.js';
import { AuthorizationRequiredError, ProtocolError, StreamEndedError } from '../../core/errors.js';
import type { RequestId } from '../../protocol/jsonrpc.js';
import type { ExchangeSignal } from '../../protocol/pending.js';
import type { StreamProgress } from '../json-answer.js';
import { readSseStream } from '../sse-reader.js';
import type { EventStreamResult } from '../http-requests.js';
import type { Timers, TransportSink } from '../transport.js';

type Body = Dispatcher.ResponseData['body'];

/** What following a response stream needs from its transport, and nothing more. */
export interface ResponseStreamSource {
  readonly server: string;
  readonly maxMessageBytes: number;
  readonly timers: Timers;
  readonly sink: Pick<TransportSink, 'isAwaiting' | 'onStreamError' | 'renewCredentials'>;
  /** Bumped on every new session: a stream of an ended session is not resumed. */
  readonly sessionGeneration: number;
  /** Routes the messages of one event; true when one answered `requestId`. */
  deliver(text: string, requestId: RequestId): boolean;
  /** GET + `Last-Event-ID` on the session. */
  getStream(
    lastEventId: string,
    signal: ExchangeSignal | undefined,
    headersTimeout: number,
    bodyTimeout: number,
  ): Promise<EventStreamResult>;
}

/** Reads a request's response stream (a POST's answer, then its resumes) until the response arrives. */
export function followResponseStream(
  transport: ResponseStreamSource,
  firstBody: Body,
  requestId: RequestId,
  generation: number,
  signal: ExchangeSignal | undefined,
  timeoutMs: number,
): Promise<void> {
  const progress: StreamState = {
    answered: false,
    lastEventId: undefined,
    retryMs: undefined,
    progressed: false,
    badEvent: undefined,
    failure: undefined,
  };
  return follow(transport, firstBody, progress, requestId, generation, signal, timeoutMs);
}

/**
 * Goes on from a POST's response stream read in undici's dispatch handler (json-answer.ts) that
 * ended, or broke, before its response: resumes it as followResponseStream would have.
 */
export function resumeResponseStream(
  transport: ResponseStreamSource,
  first: StreamProgress,
  requestId: RequestId,
  generation: number,
  signal: ExchangeSignal | undefined,
  timeoutMs: number,
): Promise<void> {
  const { answered, lastEventId, retryMs, progressed, badEvent, failure } = first;
  const progress: StreamState = { answered, lastEventId, retryMs, progressed, badEvent, failure };
  return follow(transport, undefined, progress, requestId, generation, signal, timeoutMs);
}

type StreamState = { -readonly [K in keyof StreamProgress]: StreamProgress[K] };

/** `body` undefined: the first stream was read already, `progress` says how it went. */
async function follow(
  transport: ResponseStreamSource,
  firstBody: Body | undefined,
  progress: StreamState,
  requestId: RequestId,
  generation: number,
  signal: ExchangeSignal | undefined,
  timeoutMs: number,
): Promise<void> {
  let stalledAttempts = 0;
  const handlers = {
    onEvent(data: string) {
      try {
        if (transport.deliver(data, requestId)) progress.answered = true;
      } catch (error) {
        progress.badEvent = error as Error;
        transport.sink.onStreamError(progress.badEvent);
      }
    },
    onEventId(id: string) {
      progress.lastEventId = id;
      progress.progressed = true;
    },
    onRetry(ms: number) {
      progress.retryMs = ms;
    },
    // A request settled elsewhere (timeout, abort, an answer on another stream) releases its stream.
    isDone() {
      return progress.answered || !transport.sink.isAwaiting(requestId);
    },
  };

  let body = firstBody;
  for (;;) {
    let failure: unknown = progress.failure;
    if (body !== undefined) {
      try {
        await readSseStream(body, handlers, transport.maxMessageBytes, transport.server);
      } catch (error) {
        failure = error;
      }
    }
    const { answered, badEvent, lastEventId, retryMs } = progress;
    if (answered || !transport.sink.isAwaiting(requestId)) return;
    if (failure instanceof ProtocolError) throw failure;
    if (badEvent) throw badEvent;
    if (lastEventId === undefined) {
      throw new StreamEndedError(
        `${streamLabel(requestId)} ${failure ? 'broke' : 'ended'} before the response, with no event id to resume from`,
        { server: transport.server, cause: failure },
      );
    }
    if (!transport.sink.isAwaiting(requestId)) return;
    if (progress.progressed) stalledAttempts = 0;
    else stalledAttempts++;
    progress.progressed = false;
    progress.failure = undefined;
    if (!mayReconnectStream(stalledAttempts)) {
      throw new StreamEndedError(
        `gave up resuming ${streamLabel(requestId)} after ${stalledAttempts} attempts that brought no new event`,
        { server: transport.server },
      );
    }
    await sleep(transport.timers, streamReconnectDelay(retryMs, stalledAttempts));
    if (!transport.sink.isAwaiting(requestId)) return;
    if (transport.sessionGeneration !== generation) {
      throw new StreamEndedError(`${streamLabel(requestId)} belongs to a session that has ended`, {
        server: transport.server,
      });
    }
    let resumed: EventStreamResult | undefined;
    for (let renewals = 0; resumed === undefined; renewals++) {
      try {
        // Idle longer than the request's timeout means the request has timed out: release the stream.
        resumed = await transport.getStream(lastEventId, signal, timeoutMs, timeoutMs);
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        // Refused credentials are not a stall: authorize (one flight with every other refusal), then resume.
        if (!(error instanceof AuthorizationRequiredError) || !transport.sink.renewCredentials) break;
        if (renewals >= MAX_RENEWALS || !(await transport.sink.renewCredentials(error, signal))) {
          throw new StreamEndedError(
            `cannot resume ${streamLabel(requestId)}: the server refused the credentials (HTTP ${error.status}) and no new ones came`,
            { server: transport.server, cause: error },
          );
        }
        if (!transport.sink.isAwaiting(requestId)) return;
      }
    }
    // A failed resume counts as an attempt without progress.
    if (resumed === undefined) {
      body = emptyBody();
      continue;
    }
    if (resumed.kind === 'unavailable') {
      throw new StreamEndedError(
        `cannot resume ${streamLabel(requestId)}: the server answered ${resumed.status} to GET with Last-Event-ID`,
        { server: transport.server, refusedStatus: resumed.status },
      );
    }
    body = resumed.body;
  }
}

/** Authorizations for one resume in a row; the provider's own attempt limit usually ends it sooner. */
const MAX_RENEWALS = 3;

/** Built only for an error: the hot path never needs it. */
function streamLabel(requestId: RequestId): string {
  return `the response stream of request ${String(requestId)}`;
}

function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => {
    timers.setTimeout(resolve, ms);
  });
}

function emptyBody(): Body {
  return Readable.from([]) as unknown as Body;
}
