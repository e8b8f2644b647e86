/**
 * Reconnects coordinated per origin (scheme, host, port): when the connections to one origin
 * cannot connect, they back off together. The first failed attempt marks the origin down; from
 * then on a connection that wants to try again waits for the origin's turn. At most one attempt
 * per backoff slot goes out per origin, across every connection in the process; the others wait
 * for its verdict: an attempt that reaches `ready` opens the origin for all of them at once, one
 * that fails sets the next slot. Slots grow like the restart backoff (`initialMs · factor^n`,
 * capped at `maxMs`) with full jitter; while requests wait at the origin the slot is capped at
 * the waiting cap (default 1 s), so a server that is back is answered within about a second.
 *
 * A connection's first attempt takes a turn too (`firstTurn`): at an origin not heard from yet in
 * this process, the first attempt scouts and the others wait for its verdict, so a cold start of
 * 200 servers on an origin that is down knocks once, then once per slot, like a reconnect.
 *
 * The machine decides when a connection waits (its `waiting for origin` and `reviving` states);
 * this only says when its turn comes. An origin that is up costs nothing: no entry, no timer.
 */
import type { BackoffPolicy } from '../../../machines/restart-policy.js';

/** A connection taking turns at its origin: whether someone waits for it, and its backoff. */
export interface OriginMember {
  /** Requests are held for this server now. */
  hasWaitingRequests(): boolean;
  readonly backoff: BackoffPolicy;
  /** The backoff cap while requests wait. */
  readonly waitingReconnectMs: number;
}

/** A turn's holder that gives no verdict this long (its connection went elsewhere) loses the turn. */
const VERDICT_TIMEOUT_MS = 120_000;

/** A first attempt waiting for the scout's verdict: it goes when the origin answers, else fails without knocking. */
interface FirstWaiter {
  go: () => void;
  down: () => void;
}

/** One origin that could not be connected to, or not heard from yet while its first attempt scouts. */
class DownOrigin {
  /** Failed slots in a row: the backoff exponent. */
  private failures = 0;
  private nextSlotAt = 0;
  private holder: OriginMember | undefined = undefined;
  /** In queue order (a Map keeps insertion order): O(1) to join, leave or rejoin at the end. */
  private readonly waiters = new Map<OriginMember, () => void>();
  private readonly firstWaiters = new Map<OriginMember, FirstWaiter>();
  /**
   * Waiters that had requests waiting when they joined or were hurried: the only ones the waiting
   * cap can come from (requests start to wait through `hurry`), so it is not a walk of the whole
   * queue per wait. Pruned as they are read.
   */
  private readonly urgent = new Set<OriginMember>();
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    private readonly backoff: BackoffPolicy,
    private readonly random: () => number,
  ) {}

  get idle(): boolean {
    return this.holder === undefined && this.waiters.size === 0 && this.firstWaiters.size === 0;
  }

  /**
   * An attempt failed: the turn's holder's (the next slot grows), or the first news of the outage.
   * Other connections finding the same outage change nothing.
   */
  failed(member: OriginMember): void {
    // Another connection holds the turn (a scout included): only its verdict counts.
    if (this.holder !== undefined ? this.holder !== member : this.failures > 0) return;
    this.holder = undefined;
    this.clearTimer();
    this.failures++;
    this.nextSlotAt = Date.now() + this.slotDelay(member);
    // The first attempts that waited for the scout take its verdict: down, without knocking.
    const firstWaiters = [...this.firstWaiters.values()];
    this.firstWaiters.clear();
    for (const waiter of firstWaiters) waiter.down();
    this.schedule();
  }

  wait(member: OriginMember): Promise<void> {
    return new Promise((go) => {
      // One place per connection: a wait it left (a reconnect request) is replaced by this one.
      this.drop(member);
      this.waiters.set(member, go);
      this.hurry(member);
      this.schedule();
    });
  }

  /**
   * A connection's first attempt: undefined when it goes now (it scouts: nobody holds or waits
   * for the turn, and the slot has come), else a wait. While an attempt is out or a slot is
   * coming, it takes that attempt's verdict: the origin answered, go; it did not, rejected
   * without knocking (the connection then waits for a turn like any reconnect).
   */
  first(member: OriginMember): Promise<void> | undefined {
    if (this.holder === undefined && this.waiters.size === 0) {
      if (Date.now() < this.nextSlotAt) return this.wait(member);
      this.hold(member);
      return undefined;
    }
    return new Promise((go, fail) => {
      this.drop(member);
      this.firstWaiters.set(member, { go, down: () => fail(new Error('down')) });
    });
  }

  /** Stops waiting without touching the turn (its connection goes at once: `reconnect()`). */
  stopWaiting(member: OriginMember): void {
    this.drop(member);
    if (this.idle) this.clearTimer();
  }

  /**
   * Someone now waits: a slot further away than the waiting cap is brought forward. `member`:
   * whose requests started to wait (without it, every waiter is asked again).
   */
  hurry(member?: OriginMember): void {
    if (member === undefined) {
      for (const waiter of this.waiters.keys()) if (waiter.hasWaitingRequests()) this.urgent.add(waiter);
    } else if (this.waiters.has(member) && member.hasWaitingRequests()) this.urgent.add(member);
    if (this.holder !== undefined) return;
    const cap = this.waitingCap();
    if (cap === undefined || this.nextSlotAt - Date.now() <= cap) return;
    this.nextSlotAt = Date.now() + Math.round(this.random() * cap);
    this.schedule(true);
  }

  /** The origin answered: everyone waiting goes now. */
  open(): void {
    this.holder = undefined;
    this.clearTimer();
    const waiters = [...this.waiters.values(), ...[...this.firstWaiters.values()].map((w) => w.go)];
    this.waiters.clear();
    this.firstWaiters.clear();
    this.urgent.clear();
    for (const go of waiters) go();
  }

  /** A member left (closed, authorizing): it no longer holds the turn, and stops waiting. */
  leave(member: OriginMember): void {
    this.drop(member);
    if (this.holder === member) this.release();
    if (this.idle) this.clearTimer();
  }

  /** The holder gives no verdict: a first attempt waiting for it scouts next, else the next slot's waiter goes. */
  private release(): void {
    this.holder = undefined;
    this.clearTimer();
    const next = this.firstWaiters.entries().next();
    if (next.done !== true) {
      const [member, waiter] = next.value;
      this.firstWaiters.delete(member);
      this.hold(member);
      waiter.go();
      return;
    }
    this.schedule();
  }

  private drop(member: OriginMember): void {
    this.waiters.delete(member);
    this.urgent.delete(member);
    this.firstWaiters.delete(member);
  }

  private schedule(again = false): void {
    if (this.holder !== undefined || this.waiters.size === 0) return;
    if (this.timer !== undefined && !again) return;
    this.clearTimer();
    this.timer = setTimeout(() => this.grant(), Math.max(0, this.nextSlotAt - Date.now()));
    this.timer.unref?.();
  }

  /** The slot came: one waiter (someone with requests first) takes the attempt. */
  private grant(): void {
    this.timer = undefined;
    if (this.holder !== undefined || this.waiters.size === 0) return;
    // The queue is walked only when someone has requests waiting (once per slot).
    let chosen: OriginMember | undefined;
    if (this.waitingCap() !== undefined)
      for (const member of this.waiters.keys())
        if (member.hasWaitingRequests()) {
          chosen = member;
          break;
        }
    chosen ??= this.waiters.keys().next().value!;
    const go = this.waiters.get(chosen)!;
    this.drop(chosen);
    this.hold(chosen);
    go();
  }

  private hold(member: OriginMember): void {
    this.holder = member;
    this.clearTimer();
    // The slot timer is idle while a turn is held: it watches for a verdict that never comes.
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.release();
    }, VERDICT_TIMEOUT_MS);
    this.timer.unref?.();
  }

  /** Full jitter over the grown backoff, capped while anyone at this origin has requests waiting. */
  private slotDelay(member: OriginMember): number {
    const { initialMs, maxMs, factor } = this.backoff;
    let ceiling = Math.min(maxMs, initialMs * factor ** Math.min(this.failures - 1, 30));
    const cap = member.hasWaitingRequests() ? member.waitingReconnectMs : this.waitingCap();
    if (cap !== undefined) ceiling = Math.min(ceiling, cap);
    return Math.round(this.random() * ceiling);
  }

  private waitingCap(): number | undefined {
    let cap: number | undefined;
    for (const member of this.urgent)
      if (this.waiters.has(member) && member.hasWaitingRequests())
        cap = Math.min(cap ?? Infinity, member.waitingReconnectMs);
      else this.urgent.delete(member);
    return cap;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Every origin of the process that is down (one registry per process: connections of every supervisor share it). */
export class OriginTurns {
  private readonly down = new Map<string, DownOrigin>();
  /** When each origin last answered an attempt: a failure right after says more about its server than the origin. */
  private readonly upAt = new Map<string, number>();

  constructor(private readonly random: () => number = Math.random) {}

  /** Resolves when `member` may attempt a connection to `origin`: at once while the origin is up. */
  turn(origin: string, member: OriginMember): Promise<void> {
    const entry = this.down.get(origin);
    return entry ? entry.wait(member) : Promise.resolve();
  }

  /**
   * A connection's first attempt: undefined when it may go now (the origin answered before, or
   * this attempt scouts an origin not heard from yet); else it waits for the scout's verdict (the
   * origin answers: go; it does not: rejected without knocking, as it is when the origin is
   * known down, and the connection then waits for a turn like any reconnect).
   */
  firstTurn(origin: string, member: OriginMember): Promise<void> | undefined {
    if (this.upAt.has(origin)) return undefined;
    let entry = this.down.get(origin);
    if (!entry) this.down.set(origin, (entry = new DownOrigin(member.backoff, this.random)));
    return entry.first(member);
  }

  /** `member` goes at once (`reconnect()`): it leaves the queue, any turn it holds stays its own. */
  stopWaiting(origin: string, member: OriginMember): void {
    this.down.get(origin)?.stopWaiting(member);
  }

  /** An attempt to connect failed (or a live connection found the server unreachable). */
  failed(origin: string, member: OriginMember): void {
    let entry = this.down.get(origin);
    const up = this.upAt.get(origin);
    if (up !== undefined && Date.now() - up >= member.waitingReconnectMs) this.upAt.delete(origin);
    // The origin answered within the last slot: this server's failure is its own (the others
    // released with it must not be made to queue behind it).
    else if (!entry && up !== undefined) return;
    if (!entry) this.down.set(origin, (entry = new DownOrigin(member.backoff, this.random)));
    entry.failed(member);
  }

  /** A connection to the origin reached `ready`: the origin is up, everyone waiting goes. */
  succeeded(origin: string): void {
    const entry = this.down.get(origin);
    if (!entry) return;
    this.down.delete(origin);
    this.upAt.set(origin, Date.now());
    entry.open();
  }

  /** Requests now wait (for `member`, when given): its origin's next slot comes within the waiting cap. */
  hurry(origin: string, member?: OriginMember): void {
    this.down.get(origin)?.hurry(member);
  }

  leave(origin: string, member: OriginMember): void {
    const entry = this.down.get(origin);
    if (!entry) return;
    entry.leave(member);
  }
}

/** The process's registry. */
export const originTurns = new OriginTurns();

/** The key connections share turns under: the URL's origin (a stdio server has none). */
export function originKey(url: URL | undefined): string | undefined {
  return url?.origin;
}
