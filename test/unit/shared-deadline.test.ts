/**
 * The DELETE's bound (transports/http/shared-deadline.ts): the requests of one 100 ms slot share
 * one timeout signal; a later request gets a new one; the shared signal aborts with a timeout
 * and carries any number of listeners without a leak warning.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sharedDeadline } from '../../src/transports/http/shared-deadline.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('shared deadline', () => {
  it('is one signal within a slot and a new one after it; it aborts as a timeout', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const first = sharedDeadline(20);
    expect(sharedDeadline(20)).toBe(first);
    expect(sharedDeadline(30), 'another bound, another signal').not.toBe(first);
    vi.advanceTimersByTime(100);
    const next = sharedDeadline(20);
    expect(next, 'the next slot').not.toBe(first);
    expect(first.aborted).toBe(false);
    vi.useRealTimers();
    await expect.poll(() => first.aborted, { timeout: 2_000 }).toBe(true);
    expect((first.reason as Error).name).toBe('TimeoutError');
  });

  it('carries hundreds of listeners without a MaxListenersExceeded warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const signal = sharedDeadline(5_000);
      const listeners = Array.from({ length: 300 }, () => () => {});
      for (const listener of listeners) signal.addEventListener('abort', listener);
      for (const listener of listeners) signal.removeEventListener('abort', listener);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });
});
