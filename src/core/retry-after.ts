/**
 * `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date. Read as the wait in
 * milliseconds from `now`; undefined when the header is absent or unreadable (then the caller's
 * backoff applies). A date in the past is no wait.
 */
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
