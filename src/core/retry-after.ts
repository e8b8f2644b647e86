/**
 * `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date. Read as the wait in
 * milliseconds from `now`; undefined when the header is absent or unreadable (then the caller's
 * backoff applies). A date in the past is no wait.
 */
import { TransportError, type ErrorDetails } from './errors.js';
import { headerValue } from './headers.js';

const SECONDS = /^\d+$/;

export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = headerValue(header)?.trim();
  if (value === undefined || value === '') return undefined;
  if (SECONDS.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/**
 * The server answered 429 Too Many Requests or 503 Service Unavailable: it did not process the
 * request (RFC 9110 §15.6.4, RFC 6585 §4), so the request is sent again after `retryAfterMs`
 * (its `Retry-After`, capped by `maxRetryAfterMs`; without one, a backoff) within its own timeout.
 * A caller sees this error only when that wait would outlast the request's timeout (for the
 * handshake: the request timeout, so `connect()` and `start()` settle while the server is busy). A
 * TransportError with that status, so `status === 429` checks hold.
 */
export class ServerBusyError extends TransportError {
  constructor(
    message: string,
    status: 429 | 503,
    /** The wait the server asked for (`Retry-After`, in ms), before any cap; undefined when it named none. */
    readonly retryAfterMs: number | undefined,
    details?: ErrorDetails & { body?: string | undefined; waitMs?: number | undefined },
  ) {
    super(message, status, details);
    this.waitMs = details?.waitMs;
  }
  declare readonly status: 429 | 503;
  /**
   * Set when a handshake gave up waiting within its bound (`connect()`, `start()`): how long the
   * client still holds the server (its Retry-After, capped, or the backoff) before the next attempt.
   */
  readonly waitMs: number | undefined;
}
