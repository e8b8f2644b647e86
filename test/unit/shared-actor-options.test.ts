import { describe, expect, it } from 'vitest';
import { createActor, createMachine, fromCallback } from 'xstate';
import { shareActorOptions } from '../../src/runtime/shared-actor-options.js';

describe('shareActorOptions', () => {
  it('gives the actor, its parent and its children options of one class with the same values', () => {
    const child = createMachine({
      initial: 'on',
      states: { on: { invoke: { id: 'cb', src: fromCallback(() => {}) } } },
    });
    const parent = createMachine({ initial: 'on', states: { on: { invoke: { id: 'conn', src: child } } } });
    const root = createActor(parent, { input: { n: 1 } }).start();
    const connection = root.getSnapshot().children.conn!;
    const callback = (connection.getSnapshot() as { children: Record<string, { options: object }> }).children.cb!;
    const before = [root, connection, callback].map((actor) => ({
      ...(actor as unknown as { options: object }).options,
    }));
    shareActorOptions(connection);
    const after = [root, connection, callback].map((actor) => (actor as unknown as { options: object }).options);
    for (const [i, options] of after.entries()) {
      expect(Object.getPrototypeOf(options)).not.toBe(Object.prototype);
      expect({ ...options }).toMatchObject(before[i]!);
    }
    expect(Object.getPrototypeOf(after[0])).toBe(Object.getPrototypeOf(after[2]));
    // The swap is idempotent and the actors keep working.
    shareActorOptions(connection);
    expect(after[1]).toBe((connection as unknown as { options: object }).options);
    root.stop();
    expect(root.getSnapshot().status).toBe('stopped');
  });

  it('copies a plain input key by key with the same values, and keeps any other input as it is', () => {
    const machine = createMachine({});
    const input = { ...{ a: 1, b: 'x' }, c: { deep: true } };
    const plain = createActor(machine, { input }).start();
    const instance = new Map([['k', 1]]);
    const other = createActor(machine, { input: instance }).start();
    shareActorOptions(plain);
    shareActorOptions(other);
    const copied = (plain as unknown as { options: { input: unknown } }).options.input;
    expect(copied).toEqual(input);
    expect(copied).not.toBe(input);
    expect(Object.keys(copied as object)).toEqual(['a', 'b', 'c']);
    expect((other as unknown as { options: { input: unknown } }).options.input).toBe(instance);
    plain.stop();
    other.stop();
  });
});
