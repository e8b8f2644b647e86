/**
 * A 429 or 503 to a step of the handshake (`initialize`, `server/discover`) or to the listening
 * stream is backpressure, not a failure: the server is there and asks the client to wait. The
 * server's Retry-After window opens (request-limits.ts: nothing is sent to the server during it,
 * and its other requests wait in the gate as they do for any window), the step waits it out and
 * is sent again. The attempt does not fail, so no restart budget is spent and no other era or
 * transport is guessed from it. A window already open (a 429 to a call) is waited out first.
 *
 * Busy answers in a row that ask for no wait (no `Retry-After`, or 0) back off like a restart
 * (`initialMs · factor^n`, capped by `maxRetryAfterMs`): never a loop.
 */
import { ConnectionClosedError } from '../../core/errors.js';
import { ServerBusyError } from '../../core/retry-after.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import type { RequestLimits } from '../requests/request-limits.js';

/** Sends `step` (again after each busy answer's window) until the server answers otherwise. */
export async function whileBusy<T>(
  context: ReadOnlyContext,
  limits: RequestLimits,
  step: () => Promise<T>,
): Promise<T> {
  const transport = context.transport;
  for (let busy = 0; ; busy++) {
    await limits.windowClosed();
    // Closed or replaced while it waited: this attempt is over.
    if (context.transport !== transport || context.gate.phase === 'closed')
      throw new ConnectionClosedError('the connection was closed while the server asked to wait', {
        server: context.name,
      });
    if (busy > 0) limits.retried++;
    try {
      return await step();
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
