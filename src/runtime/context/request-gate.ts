/**
 * Where requests wait while the connection is not serving. The connection machine opens and
 * shuts the gate (its `hold requests`, `release requests` and `reject waiting requests`
 * actions); the gate only keeps the lists:
 *
 * - `held`: never sent (issued while the connection was not serving);
 * - `parked`: sent and refused without being processed (404 or a 400 naming the session, a
 *   401/403, a connection that could not be made) or whose outcome is unknown but safe to
 *   repeat: sent again on release, before the held ones (they were issued earlier);
 * - `doubtful`: answered with a 400 that may be about the session or about the request; a probe
 *   decides, and each is then parked (the session was lost) or fails with its own 400;
 * - `throttled`: issued while the gate was open, waiting for a limit (`maxInFlight`, `rateLimit`)
 *   or the end of a Retry-After window (requests/request-limits.ts sends them, in order);
 * - `retrying`: answered 429 or 503 (not processed), sent again when the window ends, first.
 *
 * All of them together are bounded by `maxQueuedRequests` (a 429'd request is already admitted).
 */
import type { PendingRequest } from '../../protocol/pending.js';

export type GatePhase = 'open' | 'holding' | 'closed';

interface Doubtful {
  request: PendingRequest;
  error: Error;
}

export class RequestGate {
  phase: GatePhase = 'holding';
  private held: PendingRequest[] = [];
  private parked: PendingRequest[] = [];
  private doubtful: Doubtful[] = [];
  private throttled: PendingRequest[] = [];
  private retrying: PendingRequest[] = [];

  constructor(readonly limit: number) {}

  get waiting(): number {
    return this.held.length + this.parked.length + this.doubtful.length + this.throttled.length + this.retrying.length;
  }

  /** Requests waiting for a limit or a Retry-After window (while the gate is open). */
  get limited(): number {
    return this.throttled.length + this.retrying.length;
  }

  /** False when the queue is full. */
  hold(request: PendingRequest): boolean {
    if (this.waiting >= this.limit) return false;
    this.held.push(request);
    return true;
  }

  /** Waits for a limit, behind the others; false when the queue is full. */
  throttle(request: PendingRequest): boolean {
    if (this.waiting >= this.limit) return false;
    this.throttled.push(request);
    return true;
  }

  /** Answered 429/503: sent again before the throttled ones (it was issued before them). */
  retry(request: PendingRequest): void {
    this.retrying.push(request);
  }

  /** The next request a limit let wait: the retried ones first, then in issue order. */
  nextLimited(): PendingRequest | undefined {
    return this.retrying.length > 0 ? this.retrying.shift() : this.throttled.shift();
  }

  /** A limited request settled while waiting (timed out, aborted): it no longer counts. */
  forgetLimited(request: PendingRequest): void {
    const lists = [this.retrying, this.throttled];
    for (const list of lists) {
      const index = list.indexOf(request);
      if (index !== -1) return void list.splice(index, 1);
    }
  }

  park(request: PendingRequest): void {
    this.parked.push(request);
  }

  doubt(request: PendingRequest, error: Error): void {
    this.doubtful.push({ request, error });
  }

  /** Parked, then limited, then held, in release order; the gate is empty of them afterwards. */
  drain(): PendingRequest[] {
    const all =
      this.parked.length === 0 && this.limited === 0
        ? this.held
        : [...this.parked, ...this.retrying, ...this.throttled, ...this.held];
    this.held = [];
    this.parked = [];
    this.retrying = [];
    this.throttled = [];
    return all;
  }

  /** Only the parked requests (a failed authorization fails them; held ones keep waiting). */
  drainParked(): PendingRequest[] {
    const parked = this.parked;
    this.parked = [];
    return parked;
  }

  /** The probe's verdict: a lost session parks them for replay; otherwise they are returned to fail. */
  settleDoubtful(lost: boolean): Doubtful[] {
    const doubtful = this.doubtful;
    this.doubtful = [];
    if (!lost) return doubtful;
    for (const { request } of doubtful) this.parked.push(request);
    return [];
  }

  /** Everything waiting, whatever its list (the server is gone for good). */
  drainAll(): PendingRequest[] {
    const all = [
      ...this.parked,
      ...this.doubtful.map((d) => d.request),
      ...this.retrying,
      ...this.throttled,
      ...this.held,
    ];
    this.held = [];
    this.parked = [];
    this.doubtful = [];
    this.retrying = [];
    this.throttled = [];
    return all;
  }
}
