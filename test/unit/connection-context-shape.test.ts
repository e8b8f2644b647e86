import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { connectionMachine, type ConnectionInput } from '../../machines/connection.machine.js';

const INPUT: ConnectionInput = {
  server: 'docs',
  transport: 'http',
  listenerOpenTimeoutMs: 100,
  provenAfterMs: 1_000,
  keepalive: false,
};

/**
 * XState's `assign` copies the context with `Object.assign({}, context, update)`; on Node 20-24 a copy
 * of 20 keys or more is a dictionary (~0.7 KB more per idle connection, docs/performance.md,
 * branch `heapmargin`). A key added to the context needs one taken out or folded in.
 */
describe('the connection context', () => {
  it('has at most 19 keys with the defaults (no jitter source given)', () => {
    const keys = Object.keys(createActor(connectionMachine, { input: INPUT }).getSnapshot().context);
    expect(keys).not.toContain('random');
    expect(keys.length).toBeLessThanOrEqual(19);
  });

  it('has at most 19 keys in a mass start too (its listen turn given)', () => {
    const listenTurn = { holds: () => true, wait: () => {} };
    const { context } = createActor(connectionMachine, { input: { ...INPUT, listenTurn } }).getSnapshot();
    expect(context.listenTurn).toBe(listenTurn);
    expect(Object.keys(context).length).toBeLessThanOrEqual(19);
  });

  it('keeps a jitter source given in its input', () => {
    const random = (): number => 0.5;
    expect(createActor(connectionMachine, { input: { ...INPUT, random } }).getSnapshot().context.random).toBe(random);
  });
});
