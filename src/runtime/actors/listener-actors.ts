/**
 * Binds the listener machine to a server's transport: `follow stream` opens the GET stream
 * (modern era: the `subscriptions/listen`) and reports what happens on it as listener events.
 * A failure to open is reported with what it says about the connection (evidence.ts): refused,
 * or reset while opening; the machine decides what that means.
 */
import { fromCallback, type EventObject } from 'xstate';
import type { FollowStreamInput, ListenerEvent, OpenFailure } from '../../../machines/listener.machine.js';
import { describeError } from '../../core/errors.js';
import { readEvidence } from '../recovery/evidence.js';
import { runtimeOf } from './runtime-registry.js';

/** What an open that failed says about the connection to the server. */
function openFailure(error: unknown): OpenFailure | undefined {
  const evidence = readEvidence(error);
  if (evidence.kind === 'unreachable') return 'refused';
  if (evidence.kind === 'broken') return 'reset';
  return undefined;
}

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
    const failed = (error: unknown, connection: OpenFailure | undefined) =>
      report({ type: 'STREAM_FAILED', error: describeError(error), connection });
    (async () => {
      let opened;
      try {
        opened = await runtimeOf(system, input.server).openListener(input.lastEventId);
      } catch (error) {
        failed(error, openFailure(error));
        return;
      }
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
        onProgress: () => report({ type: 'STREAM_PROGRESSED' }),
      });
      report({ type: 'STREAM_ENDED' });
    })().catch((error: unknown) => failed(error, undefined));
    return () => {
      stopped = true;
      cancel?.();
    };
  });
}
