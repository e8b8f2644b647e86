/**
 * Binds the listener machine to a server's transport: `follow stream` opens the GET stream and
 * reports what happens on it as listener events.
 */
import { fromCallback, type AnyEventObject } from 'xstate';
import type { FollowStreamInput, ListenerEvent } from '../../machines/listener.machine.js';
import { runtimeOf } from './runtime-registry.js';

export function followStream() {
  return fromCallback<AnyEventObject, FollowStreamInput>(({ input, system, sendBack }) => {
    const controller = new AbortController();
    const report = (event: ListenerEvent) => {
      if (!controller.signal.aborted) sendBack(event);
    };
    (async () => {
      const opened = await runtimeOf(system, input.server).openListener(input.lastEventId, controller.signal);
      if (opened.kind === 'unavailable') {
        report({ type: 'STREAM_UNAVAILABLE', status: opened.status });
        return;
      }
      if (controller.signal.aborted) {
        opened.cancel();
        return;
      }
      controller.signal.addEventListener('abort', () => opened.cancel(), { once: true });
      report({ type: 'STREAM_OPENED' });
      await opened.read({
        onEventId: (id) => report({ type: 'EVENT_ID', id }),
        onRetry: (ms) => report({ type: 'RETRY', ms }),
      });
      report({ type: 'STREAM_ENDED' });
    })().catch((error: unknown) => {
      report({ type: 'STREAM_FAILED', error: error instanceof Error ? error.message : String(error) });
    });
    return () => controller.abort();
  });
}
