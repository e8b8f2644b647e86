/**
 * `subscribeResource` / `unsubscribeResource` in each era. Legacy: `resources/subscribe` and
 * `resources/unsubscribe` on the session, recorded for every later session (session-state.ts).
 * Modern (2026-07-28): neither exists; the URI joins (or leaves) the set the listener's
 * `subscriptions/listen` asks for, the listen is issued again, and a subscription is accepted
 * once the server acknowledged a listen that carries it (listen.ts).
 */
import { ProtocolError } from '../../core/errors.js';
import { EmptyResultSchema, parseResult } from '../../protocol/results.js';
import type { RequestOptions } from '../context/events.js';
import type { ListenControl } from './listen.js';
import type { SessionState } from '../context/session-state.js';

/** What subscriptions ask of their server: its runtime, as its port (server-port.ts) shows it. */
export interface SubscriptionHost {
  readonly context: {
    readonly name: string;
    readonly sessionState: SessionState;
    readonly config: { requestTimeoutMs: number };
  };
  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown>;
  listenControl(): ListenControl | undefined;
}

export async function subscribeResource(host: SubscriptionHost, uri: string, options?: RequestOptions): Promise<void> {
  const listen = host.listenControl();
  if (!listen) {
    const raw = await host.request('resources/subscribe', { uri }, options);
    parseResult(EmptyResultSchema, 'resources/subscribe', raw, host.context.name);
    host.context.sessionState.subscribed(uri);
    return;
  }
  const resources = listen.capabilities?.['resources'] as Record<string, unknown> | undefined;
  if (listen.capabilities && resources?.['subscribe'] !== true)
    throw new ProtocolError(`cannot subscribe to ${uri}: the server does not offer resources.subscribe`, {
      server: host.context.name,
    });
  const known = host.context.sessionState.subscribedUris().includes(uri);
  host.context.sessionState.subscribed(uri);
  const generation = listen.changed();
  try {
    const timeoutMs = options?.timeoutMs ?? host.context.config.requestTimeoutMs;
    const honored = await listen.acknowledgedSince(generation, timeoutMs, options?.signal);
    if (!honored.resourceSubscriptions?.includes(uri))
      throw new ProtocolError(`the server did not acknowledge the subscription to ${uri}`, {
        server: host.context.name,
      });
  } catch (error) {
    // Not accepted: not kept (as a refused `resources/subscribe`).
    if (!known) {
      host.context.sessionState.unsubscribed(uri);
      listen.changed();
    }
    throw error;
  }
}

export async function unsubscribeResource(
  host: SubscriptionHost,
  uri: string,
  options?: RequestOptions,
): Promise<void> {
  // Forgotten first: a session replaced meanwhile must not subscribe again.
  host.context.sessionState.unsubscribed(uri);
  const listen = host.listenControl();
  if (listen) {
    listen.changed(); // the listen is issued again without it: nothing to wait for
    return;
  }
  const raw = await host.request('resources/unsubscribe', { uri }, options);
  parseResult(EmptyResultSchema, 'resources/unsubscribe', raw, host.context.name);
}
