import { describe, expect, it, vi } from 'vitest';
import { Emitter } from '../../src/core/emitter.js';

type Events = { a: number; b: string };

describe('Emitter', () => {
  it('calls the forward hook first, then listeners in subscription order; off and unsubscribe remove one listener', () => {
    const emitter = new Emitter<Events>();
    const calls: string[] = [];
    emitter.forward((event, payload) => calls.push(`hook ${String(event)} ${String(payload)}`));
    const first = (n: number) => calls.push(`first ${n}`);
    const unsubscribe = emitter.on('a', first);
    emitter.on('a', (n) => calls.push(`second ${n}`));
    emitter.emit('a', 1);
    unsubscribe();
    emitter.emit('a', 2);
    emitter.emit('b', 'x');
    expect(calls).toEqual(['hook a 1', 'first 1', 'second 1', 'hook a 2', 'second 2', 'hook b x']);
    expect(emitter.hasListeners('a')).toBe(true);
    expect(emitter.hasListeners('b')).toBe(false);
  });

  it('a listener added or removed during an emit takes effect from the next emit', () => {
    const emitter = new Emitter<Events>();
    const seen: string[] = [];
    const late = (n: number) => seen.push(`late ${n}`);
    const removed = (n: number) => seen.push(`removed ${n}`);
    emitter.on('a', (n) => {
      seen.push(`early ${n}`);
      emitter.on('a', late);
      emitter.off('a', removed);
    });
    emitter.on('a', removed);
    emitter.emit('a', 1);
    emitter.emit('a', 2);
    expect(seen).toEqual(['early 1', 'removed 1', 'early 2', 'late 2']);
  });

  it('a throwing listener does not stop the others; its error surfaces later, outside the emit', async () => {
    const emitter = new Emitter<Events>();
    const after = vi.fn();
    const thrown = new Promise<unknown>((resolve) => {
      const original = queueMicrotask;
      vi.spyOn(globalThis, 'queueMicrotask').mockImplementationOnce((fn) =>
        original(() => {
          try {
            fn();
          } catch (error) {
            resolve(error);
          }
        }),
      );
    });
    emitter.on('b', () => {
      throw new Error('listener bug');
    });
    emitter.on('b', after);
    expect(() => emitter.emit('b', 'x')).not.toThrow();
    expect(after).toHaveBeenCalledWith('x');
    expect(await thrown).toMatchObject({ message: 'listener bug' });
    vi.restoreAllMocks();
  });
});
