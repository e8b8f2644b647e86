/**
 * The listener child's `opening`: the GET stream (legacy era), or the modern
 * `subscriptions/listen` that stands for it (modern-listening.ts). A refused stream needs the
 * same one authorization as a refused request. A 429/503 is backpressure (session/handshake-busy.ts).
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import { probeTimeoutMs } from '../../protocol/deadlines.js';
import { ConnectionClosedError, type AuthorizationRequiredError } from '../../core/errors.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import { listenFilter } from './listen.js';
import type { ModernListening } from './modern-listening.js';
import type { RequestLimits } from '../requests/request-limits.js';
import { whileBusy } from '../session/handshake-busy.js';

type Modern = (build: boolean) => ModernListening | undefined;

const NOTHING_TO_LISTEN_FOR: ListenerOpening = { kind: 'unavailable', reason: 'nothing to listen for' };

/** The server offers something of what the client wants: its list changes, a subscribed resource. */
function wantsListen(context: ReadOnlyContext): boolean {
  const capabilities = context.session()?.capabilities ?? {};
  return listenFilter(capabilities, context.savedSessionState?.subscribedUris() ?? []) !== undefined;
}

export async function openListener(
  context: ReadOnlyContext,
  lastEventId: string | undefined,
  /** The modern listening: built (`build`) on first use, or the one built before (a legacy server never needs it). */
  modern: Modern,
  requestAuthorization: (refusal: AuthorizationRequiredError) => void,
  /** A 429/503 to the stream opens the server's Retry-After window; the stream waits it out. */
  limits: RequestLimits,
): Promise<ListenerOpening> {
  return whileBusy(context, limits, () => openOnce(context, lastEventId, modern, requestAuthorization));
}

async function openOnce(
  context: ReadOnlyContext,
  lastEventId: string | undefined,
  modern: Modern,
  requestAuthorization: (refusal: AuthorizationRequiredError) => void,
): Promise<ListenerOpening> {
  const { transport, authorization } = context;
  if (!transport) throw new ConnectionClosedError('no transport: the connection is not open', { server: context.name });
  const envelope = context.facts?.envelope;
  try {
    if (!envelope) return await transport.openListener(lastEventId);
    // Nothing built yet and nothing to listen for: none is built (an idle modern server, the usual case).
    const listening = modern(false) ?? (wantsListen(context) ? modern(true) : undefined);
    if (!listening) return NOTHING_TO_LISTEN_FOR;
    return await listening.open(transport, envelope, probeTimeoutMs(context.config));
  } catch (error) {
    if (authorization.isFixable(error) && !authorization.isOutdated(error)) requestAuthorization(error);
    throw error;
  }
}
