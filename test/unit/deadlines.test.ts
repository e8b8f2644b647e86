// Request timeouts on one timer per server: what expires when, and that no timer is left behind.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from '../../src/protocol/deadlines.js';
import { PendingRequests } from '../../src/protocol/pending.js';
import { RequestTimeoutError } from '../../src/index.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

function tracker() {
  const pending = new Set<{ name: string; dueAt: number }>();
  const expired: string[] = [];
  const deadlines = new Deadlines(
    () => pending,
    (item) => {
      pending.delete(item);
      expired.push(item.name);
    },
  );
  const add = (name: string, inMs: number) => {
    const item = { name, dueAt: Date.now() + inMs };
    pending.add(item);
    deadlines.track(item.dueAt);
    return item;
  };
  return { pending, expired, deadlines, add };
}

describe('Deadlines', () => {
  it('expires each item when it is due, earliest first, whatever the order they came in', () => {
    const { expired, add } = tracker();
    add('slow', 300);
    add('fast', 100);
    add('middle', 200);
    vi.advanceTimersByTime(99);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['fast']);
    vi.advanceTimersByTime(100);
    expect(expired).toEqual(['fast', 'middle']);
    vi.advanceTimersByTime(100);
    expect(expired).toEqual(['fast', 'middle', 'slow']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('holds one timer however many items are pending', () => {
    const { add } = tracker();
    for (let i = 1; i <= 100; i++) add(`r${i}`, 1_000 + i);
    expect(vi.getTimerCount()).toBe(1);
  });

  it('an item settled before its time never expires; a moved due time is honoured', () => {
    const { pending, expired, deadlines, add } = tracker();
    const settled = add('settled', 100);
    const moved = add('moved', 150);
    pending.delete(settled);
    moved.dueAt = Date.now() + 400;
    deadlines.track(moved.dueAt);
    vi.advanceTimersByTime(399);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['moved']);
  });

  it('clear() leaves no timer to keep the process alive', () => {
    const { deadlines, add } = tracker();
    add('a', 100);
    deadlines.clear();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('PendingRequests timeouts', () => {
  const create = (pending: PendingRequests, timeoutMs: number) => {
    const { request, promise } = pending.create('tools/call', undefined, { timeoutMs });
    request.sent = true;
    return {
      request,
      settled: promise.then(
        () => 'resolved',
        (error: Error) => error,
      ),
    };
  };

  it('times out each request after its own timeoutMs, tells the server, and settles the rest normally', async () => {
    const cancelled: string[] = [];
    const pending = new PendingRequests({
      server: 's',
      cancel: (request, reason) => cancelled.push(`${request.id}: ${reason}`),
    });
    const long = create(pending, 5_000);
    const short = create(pending, 1_000);
    const answered = create(pending, 1_000);
    pending.settleResponse({ jsonrpc: '2.0', id: answered.request.id, result: {} });
    vi.advanceTimersByTime(1_000);
    const error = (await short.settled) as Error;
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error.message).toContain('1000 ms');
    expect(await answered.settled).toBe('resolved');
    expect(cancelled).toEqual([`${short.request.id}: timed out after 1000 ms`]);
    expect(pending.isPending(long.request)).toBe(true);
    vi.advanceTimersByTime(4_000);
    expect(await long.settled).toBeInstanceOf(RequestTimeoutError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('no timer remains once the last request settled', () => {
    const pending = new PendingRequests({ server: 's', cancel: () => {} });
    const { request } = create(pending, 60_000);
    expect(vi.getTimerCount()).toBe(1);
    pending.settleResponse({ jsonrpc: '2.0', id: request.id, result: {} });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("progress that resets the timeout moves the request's time on, up to maxTotalTimeoutMs", async () => {
    const pending = new PendingRequests({ server: 's', cancel: () => {} });
    const { request, promise } = pending.create('tools/call', undefined, {
      timeoutMs: 1_000,
      onProgress: () => {},
      resetTimeoutOnProgress: true,
      maxTotalTimeoutMs: 2_500,
    });
    const settled = promise.then(
      () => 'resolved',
      (error: Error) => error,
    );
    vi.advanceTimersByTime(900);
    pending.progress({ progressToken: request.progressToken!, progress: 1 });
    vi.advanceTimersByTime(900); // 1,800 ms in, 900 since the progress
    expect(pending.isPending(request)).toBe(true);
    pending.progress({ progressToken: request.progressToken!, progress: 2 });
    vi.advanceTimersByTime(699); // 2,499 ms: the hard limit is 2,500
    expect(pending.isPending(request)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(await settled).toBeInstanceOf(RequestTimeoutError);
  });
});
