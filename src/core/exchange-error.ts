/**
 * What an HTTP exchange that failed says to the caller: always one of the typed errors. undici
 * rejects with its own classes (SocketError "other side closed" when a body is cut short of its
 * Content-Length, BodyTimeoutError, …); a request released at its deadline rejects with the
 * typed error its caller already got, which passes through unchanged.
 */
import { McpSupervisorError, TransportError } from './errors.js';

/** `error` as a typed error of the exchange `what` (e.g. `POST 'tools/call'`): ours pass through. */
export function exchangeError(what: string, error: unknown, server: string | undefined): McpSupervisorError {
  if (error instanceof McpSupervisorError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const reason =
    code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
      ? 'timed out'
      : typeof code === 'string'
        ? `${code}${error instanceof Error && error.message ? ` (${error.message})` : ''}`
        : error instanceof Error
          ? error.message
          : String(error);
  return new TransportError(`${what} failed: ${reason}`, undefined, { server, cause: error });
}
