/**
 * Binds the listener machine to a server's transport: `follow stream` opens the GET stream
 * (modern era: the `subscriptions/listen`) and sends what happens on it to the listener as its
 * events; `stop following` closes it. A failure to open is reported with what it says about the
 * connection (evidence.ts): refused, or reset while opening; the machine decides what that means.
 *
 * Not a child actor (it was one, ~2 KB per idle connection): a `FollowedStream` per `connected`
 * of the listener, dropped when it is left. A listener with nothing to listen to is itself
 * stopped by the connection (NOTHING_TO_LISTEN), and started again by LISTEN_WANTED.
 *
 * Once the stream opened the listener hands it over (`hand over stream`) and is stopped: the
 * stream then keeps the listener's cursor itself (last event id, retry, progress, when it opened)
 * and, when it ends or fails, tells the connection LISTEN_WANTED with it (`resume`), which starts
 * a listener to decide. The connection closes it as `ready` is left (`stop followed stream`).
 */
import type { ActorRef, AnyActorRef, Snapshot, Subscription } from 'xstate';
import type { ListenerCursorHooks, ListenerOpening } from '../../../machines/connection-host.js';
import type { ConnectionEvent } from '../../../machines/connection.types.js';
import {
  cursorChange,
  endsOpenStream,
  type FollowStreamInput,
  type ListenerEvent,
  type OpenFailure,
  type StreamCursor,
} from '../../../machines/listener.machine.js';
import { DEFAULT_STREAM_RECONNECT_POLICY } from '../../../machines/stream-policy.js';
import { describeError } from '../../core/errors.js';
import { readEvidence } from '../recovery/evidence.js';
import { runtimeOf } from './runtime-registry.js';
import { parentOf } from './xstate-internals.js';

type Listener = ActorRef<Snapshot<unknown>, ListenerEvent>;
type Connection = ActorRef<Snapshot<unknown>, ConnectionEvent>;

/** The listener's cursor while the stream is handed over, and when it opened (for `stable`). */
interface HandedOver extends StreamCursor {
  connection: Connection;
  /** Milliseconds since this module loaded: a small integer, held inline (an epoch time is a 16-byte heap number). */
  openedAt: number;
}

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
  private subscription: Subscription | undefined;
  /** Set once the listener handed the stream over: what it reports then goes to the connection. */
  private handedOver: HandedOver | undefined = undefined;

  /** Dropped once the stream is handed over: a stopped listener must not stay reachable from its stream. */
  private listener: Listener | undefined;

  constructor(listener: Listener) {
    this.listener = listener;
    this.subscription = listener.subscribe(this);
  }

  /** The listener is about to be stopped: the stream is followed without it, for its connection. */
  handOver(cursor: StreamCursor, connection: Connection): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    if (this.listener && followers.get(this.listener) === this) followers.delete(this.listener);
    this.listener = undefined;
    if (this.stopped) return;
    // Written out, not spread: a spread gave each object a map of its own (~0.3 KB per connection).
    const { lastEventId, retryMs, stalledAttempts, reopens, progressed } = cursor;
    this.handedOver = { lastEventId, retryMs, stalledAttempts, reopens, progressed, connection, openedAt: sinceLoad() };
    handedOver.get(connection)?.stop();
    handedOver.set(connection, this);
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
    if (this.listener && followers.get(this.listener) === this) followers.delete(this.listener);
    const connection = this.handedOver?.connection;
    if (connection && handedOver.get(connection) === this) handedOver.delete(connection);
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
    if (this.stopped) return;
    const cursor = this.handedOver;
    if (cursor) follow(cursor, event, this);
    else this.listener?.send(event);
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

/**
 * An event of a handed-over stream, taken as the listener's `connected` takes it
 * (listener.machine.ts: `cursorChange`, `endsOpenStream`); its end goes back to the connection.
 */
function follow(cursor: HandedOver, event: ListenerEvent, stream: FollowedStream): void {
  const change = cursorChange(event);
  // Assigned onto the cursor, not spread: it keeps its one shape (~0.3 KB per connection).
  if (change) Object.assign(cursor, change);
  if (!endsOpenStream(event)) return;
  stream.stop();
  const { connection, openedAt, lastEventId, retryMs, stalledAttempts, reopens, progressed } = cursor;
  if (connection.getSnapshot().status !== 'active') return;
  const stable = sinceLoad() - openedAt >= DEFAULT_STREAM_RECONNECT_POLICY.stableAfterMs;
  const error = event.type === 'STREAM_FAILED' ? event.error : undefined;
  const resume = { lastEventId, retryMs, stalledAttempts, reopens, progressed, stable, error };
  connection.send({ type: 'LISTEN_WANTED', resume });
}

const LOADED_AT = Date.now();
const sinceLoad = () => Date.now() - LOADED_AT;

/** Each listener's stream while `connected`: `stop following` finds it here. */
const followers = new WeakMap<AnyActorRef, FollowedStream>();
/** Each connection's handed-over stream: `stop followed stream` (leaving `ready`) finds it here. */
const handedOver = new WeakMap<AnyActorRef, FollowedStream>();

/** The listener machine's stream actions, for `listenerMachine.provide({ actions })`. */
export const followStreamActions = {
  'follow stream': ({ self, system }: { self: AnyActorRef; system: object }, input: FollowStreamInput) => {
    followers.get(self)?.stop();
    // A new stream (a reopen, a new listen) replaces the one handed over before.
    const connection = parentOf(self);
    if (connection) handedOver.get(connection)?.stop();
    const stream = new FollowedStream(self as Listener);
    followers.set(self, stream);
    stream.follow(() => runtimeOf(system, input.server).openListener(input.lastEventId));
  },
  'stop following': ({ self }: { self: AnyActorRef }) => followers.get(self)?.stop(),
  'hand over stream': ({ self }: { self: AnyActorRef }, cursor: StreamCursor) => {
    const connection = parentOf<Connection>(self);
    if (connection) followers.get(self)?.handOver(cursor, connection);
  },
};

/** The connection's action: leaving `ready` closes the stream its listener handed over. */
export const stopFollowedStream = ({ self }: { self: AnyActorRef }): void => handedOver.get(self)?.stop();
