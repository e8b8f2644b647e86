/**
 * Requests whose effect is session state: the logging level and resource subscriptions the
 * client sets. They go through the handle's own methods, which set them again on every new
 * session (and, in the 2026-07-28 era, carry them the way that era does), so what the client
 * established stays true across the connection's re-initializations.
 */
import type { LoggingLevel, RequestOptions, ServerHandle } from '../../index.js';
import { isObject } from '../../core/is-object.js';

const EMPTY = Object.freeze({});
const answered = () => EMPTY;

/** The request sent as session state; undefined when it is an ordinary one. */
export function keptRequest(
  handle: ServerHandle,
  method: string,
  params: Record<string, unknown> | undefined,
  options: RequestOptions,
): Promise<unknown> | undefined {
  switch (method) {
    case 'logging/setLevel':
      return handle.setLoggingLevel(params?.level as LoggingLevel, options).then(answered);
    case 'resources/subscribe':
      return handle.subscribeResource(uriOf(params), options).then(answered);
    case 'resources/unsubscribe':
      return handle.unsubscribeResource(uriOf(params), options).then(answered);
    default:
      return undefined;
  }
}

function uriOf(params: Record<string, unknown> | undefined): string {
  return isObject(params) && typeof params.uri === 'string' ? params.uri : '';
}
