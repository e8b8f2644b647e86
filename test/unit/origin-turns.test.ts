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

describe('first attempts (a cold start) take turns too', () => {
  /** `'go'`, `'down'`, or `'wait'` while unsettled: what a first attempt was told. */
  function firstOf(turns: OriginTurns, m: OriginMember): { verdict: string } {
    const seen = { verdict: 'wait' };
    const turn = turns.firstTurn(ORIGIN, m);
    if (!turn) seen.verdict = 'go';
    else
      turn.then(
        () => (seen.verdict = 'go'),
        () => (seen.verdict = 'down'),
      );
    return seen;
  }

  it('at an origin not heard from, the first attempt scouts and the others wait for its verdict: down, they fail without knocking', async () => {
    const turns = new OriginTurns(() => 1);
    const [scout, b, c] = [member(), member(), member()];
    expect(firstOf(turns, scout).verdict, 'the scout goes at once').toBe('go');
    const [bSeen, cSeen] = [firstOf(turns, b), firstOf(turns, c)];
    await vi.advanceTimersByTimeAsync(60_000);
    expect([bSeen.verdict, cSeen.verdict], 'no verdict yet: they wait').toEqual(['wait', 'wait']);
    turns.failed(ORIGIN, scout);
    await vi.advanceTimersByTimeAsync(0);
    expect([bSeen.verdict, cSeen.verdict], 'the scout found it down').toEqual(['down', 'down']);
    // Their failures change nothing; their reconnects take one turn per slot with the scout's.
    turns.failed(ORIGIN, b);
    turns.failed(ORIGIN, c);
    const order: string[] = [];
    for (const [m, name] of [
      [scout, 'scout'],
      [b, 'b'],
      [c, 'c'],
    ] as const)
      void turnOf(turns, m, name, order);
    await vi.advanceTimersByTimeAsync(499);
    expect(order).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(order, 'one attempt in the first slot').toEqual(['scout']);
    const late = firstOf(turns, member());
    await vi.advanceTimersByTimeAsync(0);
    expect(late.verdict, 'a first attempt at an origin known down waits for the attempt that is out').toBe('wait');
    turns.failed(ORIGIN, scout);
    await vi.advanceTimersByTimeAsync(0);
    expect(late.verdict, 'and takes its verdict').toBe('down');
  });

  it('a first attempt at an origin known down with nobody else there waits for the next slot, then knocks itself', async () => {
    const turns = new OriginTurns(() => 1);
    const gone = member();
    turns.failed(ORIGIN, gone); // slot 1 at 500 ms; its connection then closes
    turns.leave(ORIGIN, gone);
    const lone = firstOf(turns, member());
    await vi.advanceTimersByTimeAsync(499);
    expect(lone.verdict).toBe('wait');
    await vi.advanceTimersByTimeAsync(1);
    expect(lone.verdict).toBe('go');
  });

  it('the scout reaches ready: everyone waiting goes at once, and later first attempts go straight', async () => {
    const turns = new OriginTurns(() => 1);
    const scout = member();
    firstOf(turns, scout);
    const waiting = Array.from({ length: 5 }, () => firstOf(turns, member()));
    turns.succeeded(ORIGIN);
    await vi.advanceTimersByTimeAsync(0);
    expect(waiting.map((w) => w.verdict)).toEqual(['go', 'go', 'go', 'go', 'go']);
    expect(firstOf(turns, member()).verdict).toBe('go');
    expect(Reflect.get(turns, 'down').size).toBe(0);
  });

  it('a scout that leaves without a verdict (closed, authorizing) passes the scouting to the next first attempt', async () => {
    const turns = new OriginTurns(() => 1);
    const [scout, b, c] = [member(), member(), member()];
    firstOf(turns, scout);
    const [bSeen, cSeen] = [firstOf(turns, b), firstOf(turns, c)];
    turns.leave(ORIGIN, scout);
    await vi.advanceTimersByTimeAsync(0);
    expect([bSeen.verdict, cSeen.verdict], 'b scouts now, c waits for it').toEqual(['go', 'wait']);
    turns.failed(ORIGIN, b);
    await vi.advanceTimersByTimeAsync(0);
    expect(cSeen.verdict).toBe('down');
  });
});
