/**
 * One server's request limits, on the request path while the gate is open:
 *
 * - `maxInFlight`: requests sent and not answered, at most; more wait in order;
 * - `rateLimit`: a token bucket (token-bucket.ts);
 * - backpressure: a 429 or 503 answer means the server did not process the request (RFC 9110
 *   §15.6.4, RFC 6585 §4), whatever its method, so it is sent again. Its `Retry-After` (capped
 *   by `maxRetryAfterMs`; without one, a backoff) opens a window during which nothing is sent to
 *   the server: the answered requests and every later one wait in the gate, and go in order when
 *   it ends, each within its own timeout.
 *
 * A 429/503 to the handshake (`initialize`, `server/discover`) or to the listening stream opens the
 * same window (`holdFor`): the handshake or the stream waits it out (`windowClosed`) and tries again.
 *
 * What waits is in the gate (`throttled`, `retrying`), bounded by `maxQueuedRequests` with the
 * rest. While nothing limits (`free`) the request path sends at once: the hot path reads one
 * field and the in-flight count, and this part allocates nothing per request.
 */
import type { ServerBusyError } from '../../core/retry-after.js';
import type { PendingRequest } from '../../protocol/pending.js';
import { realTimers, type Timers } from '../../transports/transport.js';
import type { BackpressureEvent } from '../context/events.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import { TokenBucket } from './token-bucket.js';

/** What the limits send with: the request path's `put` (straight to the transport). */
type Put = (request: PendingRequest) => void;

/** A new `Retry-After` later than the window's end by less than this extends it silently. */
const EVENT_STEP_MS = 1_000;

export class RequestLimits {
  /** Nothing limits now (no window, no rate limit, nobody waiting): the hot path sends at once below `maxInFlight`. */
  free: boolean;
  readonly maxInFlight: number;
  private readonly bucket: TokenBucket | undefined;
  /** While a Retry-After window is open: when it ends (epoch ms). */
  private windowEnd = 0;
  private windowTimer: unknown = undefined;
  /** The rate limit's wait for its next token. */
  private tokenTimer: unknown = undefined;
  /** Windows opened by 429/503 answers without Retry-After in a row (the backoff's exponent). */
  private streak = 0;
  private lastBackoffMs = 0;
  /** When the last window ended (epoch ms). */
  private closedAt = 0;
  /** The last 429/503 answer: its status for events, its Retry-After for a handshake that gives up waiting. */
  lastBusy: ServerBusyError | undefined = undefined;
  /** Requests answered 429/503 and waiting to be sent again (created by the first: most servers never answer one). */
  private answeredBusy: WeakSet<PendingRequest> | undefined = undefined;
  /** Totals: requests held by a 429/503 answer, and sent again after one. */
  held = 0;
  retried = 0;
  /** The settle hook, built while requests first wait (a closure per idle server otherwise). */
  private settledHook: ((request: PendingRequest) => void) | undefined = undefined;
  /** Waiting for the window to end: a handshake or a listening stream answered 429/503. */
  private windowWaiters: Array<() => void> | undefined = undefined;

  constructor(
    private readonly context: ReadOnlyContext,
    private readonly put: Put,
  ) {
    const { maxInFlight, rateLimit } = context.config;
    this.maxInFlight = maxInFlight;
    this.bucket = rateLimit ? new TokenBucket(rateLimit.perSecond, rateLimit.burst) : undefined;
    this.free = this.bucket === undefined;
  }

  /** Requests on the wire (or about to be): pending, and not waiting in the gate. */
  inFlight(): number {
    return this.context.pending.size - this.context.gate.waiting;
  }

  /** When the Retry-After window ends (epoch ms); undefined when none is open. */
  get until(): number | undefined {
    return this.windowEnd > 0 ? this.windowEnd : undefined;
  }

  /**
   * The slow path (something limits, or `maxInFlight` is reached): the request goes now if it
   * may, else waits its turn behind the others; false when the queue is full.
   */
  admit(request: PendingRequest): boolean {
    const gate = this.context.gate;
    if (this.windowEnd === 0 && gate.limited === 0 && this.inFlight() <= this.maxInFlight) {
      if (this.bucket === undefined) {
        this.free = true;
        this.put(request);
        return true;
      }
      if (this.bucket.take()) {
        this.put(request);
        return true;
      }
    }
    if (!gate.throttle(request)) return false;
    this.free = false;
    this.context.telemetry?.onThrottled(request, this.windowEnd > 0 ? 'retry_after' : this.reason());
    this.drain();
    return true;
  }

  /**
   * A 429/503 answer: the request waits for the window (false when its timeout ends first: the
   * caller gets the error), and so does everything after it.
   */
  onBusy(request: PendingRequest, error: ServerBusyError): boolean {
    const { pending, gate } = this.context;
    if (!pending.isPending(request)) return true; // timed out or aborted meanwhile: already settled
    const now = Date.now();
    const waitMs = this.waitFor(error, now);
    const held = Math.max(now + waitMs, this.windowEnd) < request.dueAt;
    if (held) {
      request.sent = false;
      gate.retry(request);
      (this.answeredBusy ??= new WeakSet()).add(request);
      this.held++;
      this.free = false;
      pending.onSettled = this.settled();
      this.context.telemetry?.onThrottled(request, 'retry_after');
    }
    this.openWindow(now + waitMs, waitMs);
    return held;
  }

  /**
   * A 429/503 to something that is not a queued request (the handshake, the listening stream):
   * the window opens for the whole server, counted as held; `floorMs`, the least wait (busy
   * answers in a row asking for none). Returns the wait.
   */
  holdFor(error: ServerBusyError, floorMs = 0): number {
    const now = Date.now();
    const waitMs = Math.max(this.waitFor(error, now), Math.min(floorMs, this.context.config.maxRetryAfterMs));
    this.held++;
    this.openWindow(now + waitMs, waitMs);
    return waitMs;
  }

  /** Resolves when no Retry-After window is open (at once when none is), or the limits stop. */
  windowClosed(): Promise<void> {
    if (this.windowEnd === 0) return Promise.resolve();
    return new Promise((resolve) => (this.windowWaiters ??= []).push(resolve));
  }

  /** The wait a 429/503 asks for: its `Retry-After` (capped), else a backoff step (0 inside an open window). */
  private waitFor(error: ServerBusyError, now: number): number {
    const config = this.context.config;
    const asked = error.retryAfterMs;
    let waitMs = 0;
    if (asked !== undefined) {
      this.streak = 0;
      waitMs = Math.min(asked, config.maxRetryAfterMs);
    } else if (this.windowEnd === 0) {
      // No Retry-After: the restart backoff's curve, one step per window (the answers to one
      // burst open one window), capped like a Retry-After; a server calm for a while starts over.
      if (now - this.closedAt > 2 * this.lastBackoffMs) this.streak = 0;
      const { initialMs, factor, jitter } = config.restart.backoff;
      const base = Math.min(config.maxRetryAfterMs, initialMs * factor ** this.streak++);
      waitMs = this.lastBackoffMs = Math.round(base * (1 - jitter + Math.random() * 2 * jitter));
    }
    this.lastBusy = error;
    return waitMs;
  }

  /** Sends what may go now, in order: none during a window, up to `maxInFlight`, as tokens allow. */
  drain(): void {
    const { gate, pending } = this.context;
    if (gate.phase !== 'open' || this.windowEnd > 0) return this.watch();
    while (gate.limited > 0) {
      if (this.inFlight() >= this.maxInFlight) return this.watch();
      if (this.bucket && this.bucket.waitMs() > 0) return this.waitForToken();
      const request = gate.nextLimited()!;
      if (!pending.isPending(request)) continue;
      this.bucket?.take();
      if (this.answeredBusy?.delete(request)) {
        this.retried++;
        pending.renumber(request);
        this.context.telemetry?.onRetry(request, this.lastBusy?.status ?? 429);
      }
      this.put(request);
    }
    this.free = this.bucket === undefined;
    pending.onSettled = undefined;
  }

  /** The server is gone for good, or closing: no timer outlives it. */
  stop(): void {
    this.timers.clearTimeout(this.windowTimer);
    this.timers.clearTimeout(this.tokenTimer);
    this.windowTimer = this.tokenTimer = undefined;
    this.windowEnd = 0;
    this.context.pending.onSettled = undefined;
    this.free = this.bucket === undefined;
    this.wakeWindowWaiters();
  }

  /** Counts for status(). */
  counts(): { held: number; retried: number; until: number | undefined } {
    return { held: this.held, retried: this.retried, until: this.until };
  }

  private get timers(): Timers {
    return this.context.timers ?? realTimers;
  }

  private reason(): 'max_in_flight' | 'rate_limit' {
    return this.inFlight() >= this.maxInFlight ? 'max_in_flight' : 'rate_limit';
  }

  /** Settles of requests on the wire free a slot; a waiting one that settled (timed out, aborted) leaves the queue. */
  private onSettled(request: PendingRequest): void {
    if (!request.sent) this.context.gate.forgetLimited(request);
    this.drain();
  }

  /** While requests wait, each settle may free a slot. */
  private watch(): void {
    if (this.context.gate.limited > 0) this.context.pending.onSettled = this.settled();
  }

  private waitForToken(): void {
    this.watch();
    if (this.tokenTimer !== undefined) return;
    this.tokenTimer = this.timers.setTimeout(() => {
      this.tokenTimer = undefined;
      this.drain();
    }, this.bucket!.waitMs());
  }

  private openWindow(until: number, waitMs: number): void {
    const previous = this.windowEnd;
    if (until <= previous) return;
    this.windowEnd = until;
    this.free = false;
    this.timers.clearTimeout(this.windowTimer);
    this.windowTimer = this.timers.setTimeout(() => this.closeWindow(), Math.max(1, until - Date.now()));
    if (previous === 0 || until - previous >= EVENT_STEP_MS) this.emit('hold', waitMs);
  }

  private closeWindow(): void {
    this.windowTimer = undefined;
    this.windowEnd = 0;
    this.closedAt = Date.now();
    this.emit('resume', 0);
    this.wakeWindowWaiters();
    this.drain();
  }

  private settled(): (request: PendingRequest) => void {
    return (this.settledHook ??= (request) => this.onSettled(request));
  }

  private wakeWindowWaiters(): void {
    const waiters = this.windowWaiters;
    this.windowWaiters = undefined;
    for (const resolve of waiters ?? []) resolve();
  }

  private emit(phase: BackpressureEvent['phase'], waitMs: number): void {
    const event: BackpressureEvent = {
      server: this.context.name,
      phase,
      status: this.lastBusy?.status ?? 429,
      waitMs,
      until: this.until,
      waiting: this.context.gate.limited,
      held: this.held,
      retried: this.retried,
      at: Date.now(),
    };
    this.context.events.emit('backpressure', event);
  }
}
