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
 *   decides, and each is then parked (the session was lost) or fails with its own 400.
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

  constructor(private readonly limit: number) {}

  get waiting(): number {
    return this.held.length + this.parked.length + this.doubtful.length;
  }

  /** False when the queue is full. */
  hold(request: PendingRequest): boolean {
    if (this.waiting >= this.limit) return false;
    this.held.push(request);
    return true;
  }

  park(request: PendingRequest): void {
    this.parked.push(request);
  }

  doubt(request: PendingRequest, error: Error): void {
    this.doubtful.push({ request, error });
  }

  /** Parked then held, in release order; the gate is empty of them afterwards. */
  drain(): PendingRequest[] {
    const all = this.parked.length === 0 ? this.held : [...this.parked, ...this.held];
    this.held = [];
    this.parked = [];
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
    const all = [...this.parked, ...this.doubtful.map((d) => d.request), ...this.held];
    this.held = [];
    this.parked = [];
    this.doubtful = [];
    return all;
  }
}
