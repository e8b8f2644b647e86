/**
 * The process's clock: the machines' long delays of every server share one timer, and each
 * still fires at its own due time, in the order it was set; a cleared one never fires.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSharedClock, sharedClock } from '../../src/runtime/actors/shared-clock.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('shared clock', () => {
  it('a thousand keepalive intervals are one timer, each firing at its own time', () => {
    const clock = createSharedClock();
    const fired: Array<[number, number]> = [];
    const start = Date.now();
    for (let i = 0; i < 1_000; i++) clock.setTimeout(() => fired.push([i, Date.now() - start]), 3_000 + (i % 10));
    expect(vi.getTimerCount(), 'one Node timer for all of them').toBe(1);
    vi.advanceTimersByTime(2_999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired.map(([i]) => i)).toEqual(Array.from({ length: 100 }, (_, k) => k * 10)); // set first, fired first
    vi.advanceTimersByTime(9);
    expect(fired).toHaveLength(1_000);
    expect(
      fired.every(([i, at]) => at === 3_000 + (i % 10)),
      'each at its own due time',
    ).toBe(true);
    expect(vi.getTimerCount(), 'nothing left armed').toBe(0);
  });

  it('in a big supervisor, delays of 10 s or more fire together on a 250 ms grid: never early, at most 250 ms late', () => {
    const clock = createSharedClock();
    const fired: Array<[number, number]> = [];
    const wakeUps = new Set<number>();
    // A big supervisor: 300 other delays pending (later ones: restart windows).
    for (let i = 0; i < 300; i++) clock.setTimeout(() => {}, 600_000);
    const start = Date.now();
    // 1,000 keepalive intervals of 30 s set over one second, as servers that became ready then.
    for (let i = 0; i < 1_000; i++) {
      if (i % 10 === 0 && i > 0) vi.advanceTimersByTime(10);
      const set = Date.now();
      clock.setTimeout(() => {
        fired.push([i, Date.now() - set]);
        wakeUps.add(Date.now());
      }, 30_000);
    }
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(31_300 - (Date.now() - start));
    // (In a small one each fires at its own due time: the first test.)
    expect(fired).toHaveLength(1_000);
    expect(fired.every(([, after]) => after >= 30_000 && after < 30_250)).toBe(true);
    expect(fired.map(([i]) => i)).toEqual(Array.from({ length: 1_000 }, (_, i) => i)); // in the order set
    expect(wakeUps.size, 'one wake-up per grid line, not one per delay').toBeLessThanOrEqual(5);
  });

  it('a cleared delay never fires, and the timer follows the earliest one left', () => {
    const clock = createSharedClock();
    const fired: string[] = [];
    const early = clock.setTimeout(() => fired.push('early'), 5_000);
    clock.setTimeout(() => fired.push('late'), 20_000);
    clock.clearTimeout(early);
    vi.advanceTimersByTime(19_999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(250); // 20 s: on the grid, up to 250 ms late
    expect(fired).toEqual(['late']);
    // Many cleared at once are dropped from the heap; the live ones still fire.
    const ids = Array.from({ length: 200 }, (_, i) => clock.setTimeout(() => fired.push(`x${i}`), 2_000 + i));
    for (const id of ids.slice(0, 199)) clock.clearTimeout(id);
    vi.advanceTimersByTime(3_000);
    expect(fired).toEqual(['late', 'x199']);
  });

  it('a delay under a second keeps a timer of its own', () => {
    const clock = createSharedClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('long'), 1_000);
    const short = clock.setTimeout(() => fired.push('short'), 10);
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(['short']);
    clock.clearTimeout(short); // already fired: nothing happens
    vi.advanceTimersByTime(990);
    expect(fired).toEqual(['short', 'long']);
  });

  it('is one per process, and a clock armed under other timers is armed again under the timers of now', () => {
    expect(sharedClock(), 'one clock for every supervisor').toBe(sharedClock());
    const clock = createSharedClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('early'), 5_000);
    // Other fake timers than the ones the clock was armed with (a test that swapped them).
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    clock.setTimeout(() => fired.push('later'), 6_000);
    expect(vi.getTimerCount(), 'armed with the timers installed now').toBe(1);
    vi.advanceTimersByTime(6_000);
    expect(fired).toEqual(['early', 'later']);
  });
});
