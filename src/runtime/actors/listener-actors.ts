/**
 * Binds the listener machine to a server's transport: `follow stream` opens the GET stream
 * (modern era: the `subscriptions/listen`) and sends what happens on it to the listener as its
 * events; `stop following` closes it. A failure to open is reported with what it says about the
 * connection (evidence.ts): refused, or reset while opening; the machine decides what that means.
 *
 * Not a child actor (it was one, ~2 KB per idle connection): one `StreamFollower` per listener
 * actor, made on its first stream. XState runs no exit action when an actor stops, so the
 * follower closes its stream when the listener completes (an observer of the listener).
 */
import type { ActorRef, AnyActorRef, Snapshot } from 'xstate';
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

/** One stream the listener opened: its reports count only while it is the follower's current one. */
class FollowedStream implements ListenerCursorHooks {
  constructor(
    private readonly follower: StreamFollower,
    readonly attempt: number,
  ) {}

  report(event: ListenerEvent): void {
    this.follower.report(this.attempt, event);
  }

  failed(error: unknown, connection: OpenFailure | undefined): void {
    this.report({ type: 'STREAM_FAILED', error: describeError(error), connection });
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
}

/** The streams of one listener actor, one at a time. */
class StreamFollower {
  /** The current stream's number; a stopped one's reports are dropped. */
  private attempt = 0;
  private cancel: (() => void) | undefined = undefined;

  constructor(private readonly listener: Listener) {}

  report(attempt: number, event: ListenerEvent): void {
    if (attempt === this.attempt) this.listener.send(event);
  }

  follow(open: () => Promise<ListenerOpening>): void {
    const stream = new FollowedStream(this, ++this.attempt);
    this.read(stream, open).catch((error: unknown) => stream.failed(error, undefined));
  }

  /** Closes the current stream (one still opening is cancelled when its headers arrive). */
  stop(): void {
    this.attempt++;
    const cancel = this.cancel;
    this.cancel = undefined;
    cancel?.();
  }

  private async read(stream: FollowedStream, open: () => Promise<ListenerOpening>): Promise<void> {
    // No AbortSignal: undici holds it with a listener for the whole life of the stream, ~0.9 KB
    // per idle connection. A GET still opening when the listener stops is cancelled as soon as
    // its headers arrive, and waits at most the listener open timeout for them.
    let opened;
    try {
      opened = await open();
    } catch (error) {
      stream.failed(error, openFailure(error));
      return;
    }
    if (opened.kind === 'unavailable') {
      stream.report({ type: 'STREAM_UNAVAILABLE', status: opened.status });
      return;
    }
    if (stream.attempt !== this.attempt) {
      opened.cancel();
      return;
    }
    this.cancel = opened.cancel;
    stream.report({ type: 'STREAM_OPENED' });
    await opened.read(stream);
    if (this.cancel === opened.cancel) this.cancel = undefined;
    stream.report({ type: 'STREAM_ENDED' });
  }
}

const followers = new WeakMap<AnyActorRef, StreamFollower>();

function followerOf(listener: AnyActorRef): StreamFollower {
  let follower = followers.get(listener);
  if (!follower) {
    const made = new StreamFollower(listener as Listener);
    followers.set(listener, (follower = made));
    listener.subscribe({ complete: () => made.stop(), error: () => made.stop() });
  }
  return follower;
}

/** The listener machine's stream actions, for `listenerMachine.provide({ actions })`. */
export const followStreamActions = {
  'follow stream': ({ self, system }: { self: AnyActorRef; system: object }, input: FollowStreamInput) =>
    followerOf(self).follow(() => runtimeOf(system, input.server).openListener(input.lastEventId)),
  'stop following': ({ self }: { self: AnyActorRef }) => followers.get(self)?.stop(),
};
