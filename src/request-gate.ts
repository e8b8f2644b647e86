/**
 * Where requests wait while the connection is not serving. `held` requests were never sent;
 * `parked` ones were sent and answered 404 (the server never processed them), so they may be
 * sent again. On release, parked go first: they were issued earlier.
 */
import type { PendingRequest } from './protocol/pending.js';

export type GatePhase = 'open' | 'holding' | 'closed';

export class RequestGate {
  phase: GatePhase = 'holding';
  private held: PendingRequest[] = [];
  private parked: PendingRequest[] = [];

  constructor(private readonly limit: number) {}

  get waiting(): number {
    return this.held.length + this.parked.length;
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

  /** Everything waiting, in release order; the gate is empty afterwards. */
  drain(): PendingRequest[] {
    const all = this.parked.length === 0 ? this.held : [...this.parked, ...this.held];
    this.held = [];
    this.parked = [];
    return all;
  }

  /** Only the parked requests (a failed re-initialize fails them; held ones keep waiting). */
  drainParked(): PendingRequest[] {
    const parked = this.parked;
    this.parked = [];
    return parked;
  }
}
