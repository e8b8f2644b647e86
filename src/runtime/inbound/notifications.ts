/**
 * What a server's notification means to its runtime: a cancelled server request is aborted,
 * progress reaches the pending request that asked for it, and every notification becomes events
 * (by kind, then raw).
 */
import type { Emitter } from '../../core/emitter.js';
import type { JsonRpcNotification } from '../../protocol/jsonrpc.js';
import type { PendingRequests, Progress } from '../../protocol/pending.js';
import type { LogMessage, ResourceUpdated, RuntimeEvents } from '../context/events.js';
import type { ServerRequests } from '../server-input/server-requests.js';

export function dispatchNotification(
  notification: JsonRpcNotification,
  events: Emitter<RuntimeEvents>,
  /** Undefined before any server request was served: nothing to cancel. */
  serverRequests: Pick<ServerRequests, 'cancel'> | undefined,
  pending: Pick<PendingRequests, 'progress'>,
): void {
  const params = notification.params ?? {};
  switch (notification.method) {
    case 'notifications/cancelled':
      serverRequests?.cancel(params.requestId, params.reason);
      break;
    case 'notifications/progress':
      events.emit('progress', pending.progress(params as unknown as Progress));
      break;
    case 'notifications/message':
      events.emit('log', params as unknown as LogMessage);
      break;
    case 'notifications/resources/updated':
      if (typeof params.uri === 'string') events.emit('resourceUpdated', params as ResourceUpdated);
      break;
    case 'notifications/elicitation/complete':
      if (typeof params.elicitationId === 'string')
        events.emit('elicitationComplete', { elicitationId: params.elicitationId });
      break;
    case 'notifications/tools/list_changed':
    case 'notifications/resources/list_changed':
    case 'notifications/prompts/list_changed':
      events.emit('listChanged', { list: notification.method.split('/')[1] as 'tools' | 'resources' | 'prompts' });
      break;
  }
  events.emit('notification', notification);
}
