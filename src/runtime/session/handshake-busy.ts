/**
 * A 429 or 503 to a step of the handshake (`initialize`, `server/discover`) or to the listening
 * stream is backpressure, not a failure: the server is there and asks the client to wait. The
 * server's Retry-After window opens (request-limits.ts: nothing is sent to the server during it,
 * and its other requests wait in the gate as they do for any window), the step waits it out and
 * is sent again. No other era or transport is guessed from it. A window already open (a 429 to a
 * call) is waited out first.
 *
 * Busy answers in a row that ask for no wait (no `Retry-After`, or 0) back off like a restart
 * (`initialMs · factor^n`, capped by `maxRetryAfterMs`): never a loop.
 *
 * A handshake step waits within its bound (the request timeout, from its first send): when the
 * wait asked for would end after it, the step fails with a ServerBusyError naming the status, the
 * Retry-After and the wait, so `connect()` and `start()` settle; the machine then waits the window
 * out in `reconnecting` without spending the restart budget (machines/connection.setup.ts).
 */
import { ConnectionClosedError } from '../../core/errors.js';
import { ServerBusyError } from '../../core/retry-after.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import type { RequestLimits } from '../requests/request-limits.js';

/**
 * Sends `step` (again after each busy answer's window) until the server answers otherwise;
 * with `boundMs`, for at most that long: each send gets the time left (`step(timeoutMs)`).
 */
export async function whileBusy<T>(
  context: ReadOnlyContext,
  limits: RequestLimits,
  step: (timeoutMs: number | undefined) => Promise<T>,
  boundMs?: number,
): Promise<T> {
  const transport = context.transport;
  const deadline = boundMs === undefined ? Infinity : Date.now() + boundMs;
  for (let busy = 0; ; busy++) {
    const until = limits.until;
    if (until !== undefined && until > deadline) throw stayedBusy(context, limits, boundMs!, until);
    await limits.windowClosed();
    // Closed or replaced while it waited: this attempt is over.
    if (context.transport !== transport || context.gate.phase === 'closed')
      throw new ConnectionClosedError('the connection was closed while the server asked to wait', {
        server: context.name,
      });
    if (busy > 0) limits.retried++;
    try {
      return await step(boundMs === undefined ? undefined : Math.max(1, deadline - Date.now()));
    } catch (error) {
      if (!(error instanceof ServerBusyError)) throw error;
      limits.holdFor(error, busyFloorMs(context, busy));
    }
  }
}

/** The least wait after `busy` earlier busy answers in a row: none for the first, then the restart backoff. */
function busyFloorMs(context: ReadOnlyContext, busy: number): number {
  if (busy === 0) return 0;
  const { initialMs, factor } = context.config.restart.backoff;
  return initialMs * factor ** Math.min(busy - 1, 30);
}

/** The window the server asked for ends after the step's bound: the step fails, saying so. */
function stayedBusy(context: ReadOnlyContext, limits: RequestLimits, boundMs: number, until: number): ServerBusyError {
  const answer = limits.lastBusy;
  const status = answer?.status ?? 503;
  const waitMs = Math.max(0, until - Date.now());
  const asked = answer?.retryAfterMs === undefined ? 'no Retry-After' : `Retry-After ${answer.retryAfterMs} ms`;
  return new ServerBusyError(
    `the server is busy (HTTP ${status}, ${asked}): the handshake waits ${waitMs} ms more, beyond its ${boundMs} ms (requestTimeoutMs)`,
    status,
    answer?.retryAfterMs,
    { server: context.name, body: answer?.body, cause: answer, waitMs },
  );
}
