import { describe, expect, it } from 'vitest';
import { CONNECTION_STATES, connectionMachine, isEnded } from '../../machines/connection.machine.js';
import { isDownForGood } from '../../src/handle/status.js';

/** The top-level states a state's own transitions (its children's included) lead to, itself left out. */
function exits(state: string): Set<string> {
  const found = new Set<string>();
  type Node = (typeof connectionMachine.root.states)[string];
  const walk = (node: Node) => {
    const transitions = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const transition of transitions) for (const target of transition.target ?? []) found.add(target.path[0] ?? '');
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(connectionMachine.root.states[state]!);
  found.delete(state);
  return found;
}

/** Whether `ready` can be reached from `state` without passing through an ended one. */
function reachesReady(state: string, seen = new Set<string>()): boolean {
  if (state === 'ready') return true;
  if (seen.has(state) || isEnded(state)) return false;
  seen.add(state);
  return [...exits(state)].some((next) => reachesReady(next, seen));
}

describe('isEnded: down for good, read against the machine', () => {
  it('closing and closed lead nowhere but closed', () => {
    for (const state of CONNECTION_STATES.filter((s) => isEnded(s, true))) {
      expect(
        [...exits(state)].every((next) => next === 'closed'),
        state,
      ).toBe(true);
    }
    expect(CONNECTION_STATES.filter((s) => isEnded(s, true)).sort()).toEqual(['closed', 'closing']);
  });

  it('failed comes back only through a new start (its revival), and only when the caller waits for it', () => {
    const revivable = CONNECTION_STATES.filter((s) => isEnded(s) && !isEnded(s, true));
    expect(revivable).toEqual(['failed']);
    expect([...exits('failed')]).toEqual(['connecting']);
  });

  it('every other state can still reach ready', () => {
    for (const state of CONNECTION_STATES.filter((s) => !isEnded(s))) expect(reachesReady(state), state).toBe(true);
  });

  it("a status's own states: disabled is down for good, stopped is not", () => {
    expect(isDownForGood('disabled')).toBe(true);
    expect(isDownForGood('stopped')).toBe(false);
    expect(isEnded('stopped')).toBe(false);
    expect(isDownForGood('failed')).toBe(true);
    expect(isDownForGood('reconnecting')).toBe(false);
  });
});
