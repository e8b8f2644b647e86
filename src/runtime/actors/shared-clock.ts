/**
 * The clock of every actor system of the process (one system per server, in every supervisor and
 * every `connect()`): the machines' long
 * delays (the keepalive interval, the session-proven delay, restart windows, revivals) share one
 * Node timer, armed for the earliest of them, instead of one timer each per server. A delay
 * fires at its own due time, those due together in the order set; short delays (under a second:
 * open timeouts, backoffs in tests) keep a Node timer of their own. In a big supervisor (256
 * delays or more pending) delays of 10 s or more (keepalive intervals, restart windows,
 * revivals) fire on a 250 ms grid, up to 250 ms late, those on one grid line in the order set:
 * 10,000 servers' keepalive intervals then wake the process a few times a second instead of 333
 * times (a wake-up costs more CPU than the keepalive step it runs).
 *
 * Times are read from `Date.now()` and the timer is set with the global `setTimeout` when armed,
 * so fake timers drive it like any other (a clock armed with other timers than today's global ones,
 * fake timers installed or removed since, is armed again with these).
 */
import type { ActorOptions, AnyActorLogic } from 'xstate';

/** XState's clock interface (what `createActor(logic, { clock })` takes). */
export type Clock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

/** Delays shorter than this keep a Node timer of their own. */
const SHARED_FROM_MS = 1_000;
/** With this many delays pending, delays of at least `COALESCED_FROM_MS` fire together on a grid of `GRID_MS`. */
const COALESCED_WHEN_PENDING = 256;
const COALESCED_FROM_MS = 10_000;
const GRID_MS = 250;

class Delay {
  cancelled = false;
  /** When the clock fires it: its due time, or the next grid line for a long delay. */
  readonly fireAt: number;
  constructor(
    due: number,
    readonly order: number,
    readonly fire: () => void,
    coalesced: boolean,
  ) {
    this.fireAt = coalesced ? Math.ceil(due / GRID_MS) * GRID_MS : due;
  }
}

const before = (a: Delay, b: Delay) => a.fireAt < b.fireAt || (a.fireAt === b.fireAt && a.order < b.order);

let processClock: Clock | undefined;

/** The process's clock, built at first use: one heap and one timer for every server. */
export function sharedClock(): Clock {
  return (processClock ??= createSharedClock());
}

/** A clock of its own: a binary heap of delays and one timer for its earliest (tests; `sharedClock()` otherwise). */
export function createSharedClock(): Clock {
  const heap: Delay[] = [];
  let order = 0;
  let cancelled = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let armedFor: number | undefined;
  /** The timer functions the timer was set with (the global ones then). */
  let armedWith: typeof setTimeout | undefined;
  let disarm: typeof clearTimeout = clearTimeout;

  const push = (delay: Delay) => {
    heap.push(delay);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };

  const pop = (): Delay => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let least = i;
        if (left < heap.length && before(heap[left]!, heap[least]!)) least = left;
        if (right < heap.length && before(heap[right]!, heap[least]!)) least = right;
        if (least === i) break;
        [heap[i], heap[least]] = [heap[least]!, heap[i]!];
        i = least;
      }
    }
    return top;
  };

  /** Cancelled delays leave the heap when they come up, or all at once when they are most of it. */
  const compact = () => {
    const live = heap.filter((delay) => !delay.cancelled);
    heap.length = 0;
    cancelled = 0;
    for (const delay of live) push(delay);
  };

  const arm = () => {
    while (heap.length > 0 && heap[0]!.cancelled) {
      pop();
      cancelled--;
    }
    const next = heap[0]?.fireAt;
    if (next === armedFor && armedWith === globalThis.setTimeout) return;
    if (timer !== undefined) disarm(timer);
    timer = undefined;
    armedFor = next;
    armedWith = globalThis.setTimeout;
    disarm = globalThis.clearTimeout;
    if (next !== undefined) timer = setTimeout(fire, Math.max(0, next - Date.now()));
  };

  const fire = () => {
    timer = undefined;
    armedFor = undefined;
    const now = Date.now();
    try {
      while (heap.length > 0 && heap[0]!.fireAt <= now) {
        const delay = pop();
        if (delay.cancelled) {
          cancelled--;
          continue;
        }
        delay.cancelled = true; // fired: clearing it later does nothing
        delay.fire();
      }
    } finally {
      arm();
    }
  };

  return {
    setTimeout(fn: () => void, ms: number): unknown {
      if (ms < SHARED_FROM_MS) return setTimeout(fn, ms);
      const coalesced = ms >= COALESCED_FROM_MS && heap.length >= COALESCED_WHEN_PENDING;
      const delay = new Delay(Date.now() + ms, order++, fn, coalesced);
      push(delay);
      if (armedFor === undefined || delay.fireAt < armedFor || armedWith !== globalThis.setTimeout) arm();
      return delay;
    },
    clearTimeout(id: unknown): void {
      if (!(id instanceof Delay)) {
        clearTimeout(id as ReturnType<typeof setTimeout>);
        return;
      }
      if (id.cancelled) return;
      id.cancelled = true;
      cancelled++;
      if (cancelled > 64 && cancelled * 2 > heap.length) compact();
      if (heap.length === 0 || heap[0] === id || heap[0]!.cancelled) arm();
    },
  };
}
