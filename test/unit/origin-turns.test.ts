/** The per-origin reconnect turns (src/runtime/recovery/origin-turns.ts), under fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OriginTurns, type OriginMember } from '../../src/runtime/recovery/origin-turns.js';

const ORIGIN = 'http://127.0.0.1:1';
const BACKOFF = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.2 };

function member(waiting = false): OriginMember & { waiting: boolean } {
  return {
    waiting,
    hasWaitingRequests() {
      return this.waiting;
    },
    backoff: BACKOFF,
    waitingReconnectMs: 1_000,
  };
}

/** Resolves to the member's name when its turn comes, recorded in `order`. */
function turnOf(turns: OriginTurns, m: OriginMember, name: string, order: string[]): Promise<void> {
  return turns.turn(ORIGIN, m).then(() => void order.push(name));
}

beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] }));
afterEach(() => vi.useRealTimers());

describe('reconnect turns per origin', () => {
  it('an origin that is up gives the turn at once, and keeps nothing', async () => {
    const turns = new OriginTurns(() => 1);
    const order: string[] = [];
    await turnOf(turns, member(), 'a', order);
    expect(order).toEqual(['a']);
    expect(Reflect.get(turns, 'down').size).toBe(0);
  });

  it('down: one attempt per slot for all the connections, the slots grow with full jitter, and a success lets everyone go', async () => {
    const turns = new OriginTurns(() => 1); // the top of the jitter range
    const [a, b, c] = [member(), member(), member()];
    turns.failed(ORIGIN, a); // first news: slot 1 at 500 ms
    turns.failed(ORIGIN, b); // the same outage: nothing changes
    const order: string[] = [];
    void turnOf(turns, a, 'a', order);
    void turnOf(turns, b, 'b', order);
    void turnOf(turns, c, 'c', order);
    await vi.advanceTimersByTimeAsync(499);
    expect(order).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(order, 'one attempt in the slot').toEqual(['a']);
    turns.failed(ORIGIN, a); // its verdict: the next slot is 1000 ms away
    void turnOf(turns, a, 'a', order);
    await vi.advanceTimersByTimeAsync(999);
    expect(order).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(1);
    expect(order).toEqual(['a', 'b']);
    turns.succeeded(ORIGIN);
    await vi.advanceTimersByTimeAsync(0);
    expect(order, 'the others go at once').toEqual(['a', 'b', 'c', 'a']);
  });

  it('full jitter: a slot is drawn between 0 and the grown backoff', async () => {
    const turns = new OriginTurns(() => 0.25);
    turns.failed(ORIGIN, member());
    const order: string[] = [];
    void turnOf(turns, member(), 'x', order);
    await vi.advanceTimersByTimeAsync(124);
    expect(order).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(order).toEqual(['x']);
  });

  it('someone waiting caps the slot at waitingReconnectMs, and gets the turn first', async () => {
    const turns = new OriginTurns(() => 1);
    const idle = member();
    for (let i = 0; i < 8; i++) {
      turns.failed(ORIGIN, idle); // the holder's failures: 500, 1000, … 30000 ms
      void turns.turn(ORIGIN, idle);
      await vi.advanceTimersByTimeAsync(30_000);
    }
    turns.failed(ORIGIN, idle); // next slot 30 s away
    const order: string[] = [];
    void turnOf(turns, idle, 'idle', order);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(order, 'idle: the long backoff').toEqual([]);
    const hurried = member(true);
    void turnOf(turns, hurried, 'waiting', order);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(order, 'within 1 s of someone waiting; the one with requests first').toEqual(['waiting']);
  });

  it('a holder that leaves (closed, authorizing) passes the turn on', async () => {
    const turns = new OriginTurns(() => 0);
    const [a, b] = [member(), member()];
    turns.failed(ORIGIN, a);
    const order: string[] = [];
    void turnOf(turns, a, 'a', order);
    void turnOf(turns, b, 'b', order);
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['a']);
    turns.leave(ORIGIN, a);
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['a', 'b']);
  });
});

describe('reconnect turns per origin: no turn is lost', () => {
  it('a connection that waits again (a reconnect request) holds one place, and a holder with no verdict loses the turn', async () => {
    const turns = new OriginTurns(() => 0);
    const [a, b] = [member(), member()];
    turns.failed(ORIGIN, a);
    const order: string[] = [];
    void turnOf(turns, a, 'a-old', order);
    void turnOf(turns, a, 'a', order);
    void turnOf(turns, b, 'b', order);
    await vi.advanceTimersByTimeAsync(0);
    expect(order, 'the older wait was replaced').toEqual(['a']);
    await vi.advanceTimersByTimeAsync(119_999);
    expect(order, 'b waits for the verdict').toEqual(['a']);
    await vi.advanceTimersByTimeAsync(2);
    expect(order, 'no verdict in 120 s: the turn passes on').toEqual(['a', 'b']);
  });
});
