/**
 * Binds the listener machine to a server's transport: `follow stream` opens the GET stream
 * (modern era: the `subscriptions/listen`) and sends what happens on it to the listener as its
 * events; `stop following` closes it. A failure to open is reported with what it says about the
 * connection (evidence.ts): refused, or reset while opening; the machine decides what that means.
 *
 * Not a child actor (it was one, ~2 KB per idle connection): a `FollowedStream` per `connected`
 * of the listener, dropped when it is left. A listener with nothing to listen to is itself
 * stopped by the connection (NOTHING_TO_LISTEN), and started again by LISTEN_WANTED.
 */
import type { ActorRef, AnyActorRef, Snapshot, Subscription } from 'xstate';
import type { ListenerCursorHooks, ListenerOpening } from '../../../machines/connection-host.js';
import type { FollowStreamInput, ListenerEvent, OpenFailure } from '../../../machines/listener.machine.js';
import { describeError } from '../../core/errors.js';
import { readEvidence } from '../recovery/evidence.js';
import { runtimeOf } from './runtime-registry.js';

type Listener = ActorRef<Snapshot<unknown>, ListenerEvent>;

/** What an open that failed says about the connection to the server. */
function openFailure(error: unknown): OpenFailure | undefined {
  const evidence = readEvidence(error);
  if (evidence.kind === 'unreachable') return 'refused';
  if (evidence.kind === 'broken') return 'reset';
  return undefined;
}

/**
 * One stream a listener opened (one `connected` of it): what it hears goes to the listener until
 * it is stopped. It observes the listener while it may hold a stream: XState runs no exit action
 * when an actor stops, and a stopped listener's stream must close all the same.
 */
class FollowedStream implements ListenerCursorHooks {
  private stopped = false;
  private cancel: (() => void) | undefined = undefined;
  private readonly subscription: Subscription | undefined;

  constructor(private readonly listener: Listener) {
    this.subscription = listener.subscribe(this);
  }

  /** The listener stopped (or failed): observer methods. */
  complete(): void {
    this.stop();
  }

  error(): void {
    this.stop();
  }

  /** Closes the stream (one still opening is cancelled when its headers arrive). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.subscription?.unsubscribe();
    if (followers.get(this.listener) === this) followers.delete(this.listener);
    const cancel = this.cancel;
    this.cancel = undefined;
    cancel?.();
  }

  follow(open: () => Promise<ListenerOpening>): void {
    this.read(open).catch((error: unknown) => this.failed(error, undefined));
  }

  onEventId(id: string): void {
    this.report({ type: 'EVENT_ID', id });
  }

  onRetry(ms: number): void {
    this.report({ type: 'RETRY', ms });
  }

  onProgress(): void {
    this.report({ type: 'STREAM_PROGRESSED' });
  }

  private report(event: ListenerEvent): void {
    if (!this.stopped) this.listener.send(event);
  }

  private failed(error: unknown, connection: OpenFailure | undefined): void {
    this.report({ type: 'STREAM_FAILED', error: describeError(error), connection });
  }

  private async read(open: () => Promise<ListenerOpening>): Promise<void> {
    // No AbortSignal: undici holds it with a listener for the whole life of the stream, ~0.9 KB
    // per idle connection. A GET still opening when the listener stops is cancelled as soon as
    // its headers arrive, and waits at most the listener open timeout for them.
    let opened;
    try {
      opened = await open();
    } catch (error) {
      this.failed(error, openFailure(error));
      return;
    }
    if (opened.kind === 'unavailable') {
      this.report({ type: 'STREAM_UNAVAILABLE', status: opened.status });
      return;
    }
    if (this.stopped) {
      opened.cancel();
      return;
    }
    this.cancel = opened.cancel;
    this.report({ type: 'STREAM_OPENED' });
    // Chained, not awaited: an async function suspended for the life of the stream holds its
    // generator, registers and context (~0.4 KB per idle connection more than two reactions).
    opened.read(this).then(
      () => {
        this.cancel = undefined;
        this.report({ type: 'STREAM_ENDED' });
      },
      (error: unknown) => this.failed(error, undefined),
    );
  }
}

/** Each listener's stream while `connected`: `stop following` finds it here. */
const followers = new WeakMap<AnyActorRef, FollowedStream>();

/** The listener machine's stream actions, for `listenerMachine.provide({ actions })`. */
export const followStreamActions = {
  'follow stream': ({ self, system }: { self: AnyActorRef; system: object }, input: FollowStreamInput) => {
    followers.get(self)?.stop();
    const stream = new FollowedStream(self as Listener);
    followers.set(self, stream);
    stream.follow(() => runtimeOf(system, input.server).openListener(input.lastEventId));
  },
  'stop following': ({ self }: { self: AnyActorRef }) => followers.get(self)?.stop(),
};
