/**
 * Binds the listener machine to a server's transport: `follow stream` opens the GET stream and
 * reports what happens on it as listener events.
 */
import { fromCallback, type EventObject } from 'xstate';
import type { FollowStreamInput, ListenerEvent } from '../../../machines/listener.machine.js';
import { runtimeOf } from './runtime-registry.js';

export function followStream() {
  return fromCallback<EventObject, FollowStreamInput>(({ input, system, sendBack }) => {
    // No AbortSignal: undici holds it with a listener for the whole life of the stream, ~0.9 KB
    // per idle connection. A GET still opening when the listener stops is cancelled as soon as
    // its headers arrive, and waits at most the listener open timeout for them.
    let stopped = false;
    let cancel: (() => void) | undefined;
    const report = (event: ListenerEvent) => {
      if (!stopped) sendBack(event);
    };
    (async () => {
      const opened = await runtimeOf(system, input.server).openListener(input.lastEventId);
      if (opened.kind === 'unavailable') {
        report({ type: 'STREAM_UNAVAILABLE', status: opened.status });
        return;
      }
      if (stopped) {
        opened.cancel();
        return;
      }
      cancel = opened.cancel;
      report({ type: 'STREAM_OPENED' });
      await opened.read({
        onEventId: (id) => report({ type: 'EVENT_ID', id }),
        onRetry: (ms) => report({ type: 'RETRY', ms }),
      });
      report({ type: 'STREAM_ENDED' });
    })().catch((error: unknown) => {
      report({ type: 'STREAM_FAILED', error: error instanceof Error ? error.message : String(error) });
    });
    return () => {
      stopped = true;
      cancel?.();
    };
  });
}
