/**
 * The listener child's `opening`: the GET stream (legacy era), or the modern
 * `subscriptions/listen` that stands for it (modern-listening.ts). A refused stream needs the
 * same one authorization as a refused request. A 429/503 is backpressure (session/handshake-busy.ts).
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import { probeTimeoutMs } from '../../core/probe-timeout.js';
import { ConnectionClosedError, type AuthorizationRequiredError } from '../../core/errors.js';
import type { ServerContext } from '../context/server-context.js';
import type { ModernListening } from './modern-listening.js';
import type { RequestLimits } from '../requests/request-limits.js';
import { whileBusy } from '../session/handshake-busy.js';

export async function openListener(
  context: ServerContext,
  lastEventId: string | undefined,
  /** Builds the modern listening on first use (a legacy server never needs it). */
  modern: () => ModernListening,
  requestAuthorization: (refusal: AuthorizationRequiredError) => void,
  /** A 429/503 to the stream opens the server's Retry-After window; the stream waits it out. */
  limits: RequestLimits,
): Promise<ListenerOpening> {
  return whileBusy(context, limits, () => openOnce(context, lastEventId, modern, requestAuthorization));
}

async function openOnce(
  context: ServerContext,
  lastEventId: string | undefined,
  modern: () => ModernListening,
  requestAuthorization: (refusal: AuthorizationRequiredError) => void,
): Promise<ListenerOpening> {
  const { transport, authorization } = context;
  if (!transport) throw new ConnectionClosedError('no transport: the connection is not open', { server: context.name });
  const envelope = context.facts?.envelope;
  try {
    if (!envelope) return await transport.openListener(lastEventId);
    return await modern().open(transport, envelope, probeTimeoutMs(context.config));
  } catch (error) {
    if (authorization.isFixable(error) && !authorization.isOutdated(error)) requestAuthorization(error);
    throw error;
  }
}
