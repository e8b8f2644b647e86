/**
 * The machine says what happened (machines/connection.facts.ts), and every fact is read by
 * someone: both sides are read from the machine and from the consumers' own tables at run time.
 */
import { describe, expect, it } from 'vitest';
import type { AnyStateNode } from 'xstate';
import { CONNECTION_FACT_KINDS, CONNECTION_STATES, connectionMachine } from '../../machines/connection.machine.js';
import { RELIST_AFTER } from '../../src/catalog/catalog.js';
import { LOG_ENTRIES } from '../../src/observe/logger.js';
import { FACT_REACTIONS } from '../../src/observe/telemetry/server-telemetry.js';
import { RUNTIME_REACTIONS } from '../../src/runtime/lifecycle-facts.js';
import { allTransitions, transitionKey } from '../model/coverage.js';

const CONSUMERS: Record<string, object> = {
  'runtime (transition stream, status)': RUNTIME_REACTIONS,
  telemetry: FACT_REACTIONS,
  logger: LOG_ENTRIES,
  catalog: RELIST_AFTER,
};

type Action = string | { type: string; params?: unknown } | ((...args: never[]) => unknown);
const typeOf = (action: Action) =>
  typeof action === 'function' ? action.name : typeof action === 'string' ? action : action.type;

function topLevel(node: AnyStateNode): AnyStateNode | undefined {
  let current: AnyStateNode | undefined = node;
  while (current?.parent && current.parent !== connectionMachine.root) current = current.parent;
  return current?.parent ? current : undefined;
}

describe('connection facts', () => {
  it('every fact kind has a consumer, and no consumer maps a fact the machine does not declare', () => {
    const mapped = new Set(Object.values(CONSUMERS).flatMap((table) => Object.keys(table)));
    const unread = CONNECTION_FACT_KINDS.filter((kind) => !mapped.has(kind));
    expect(unread, 'facts no consumer maps').toEqual([]);
    for (const [consumer, table] of Object.entries(CONSUMERS))
      expect(
        Object.keys(table).filter((kind) => !(CONNECTION_FACT_KINDS as string[]).includes(kind)),
        `${consumer} maps facts the machine does not emit`,
      ).toEqual([]);
  });

  it('the connection states are read from the machine', () => {
    expect(CONNECTION_STATES).toEqual(Object.keys(connectionMachine.config.states ?? {}));
    expect(CONNECTION_STATES).toContain('discovering');
  });

  it('every top-level state announces itself, as the last action of its own entry', () => {
    for (const [name, node] of Object.entries(connectionMachine.root.states)) {
      // XState appends its own entry actions (starting the invoked actors, the delays): functions.
      const entry = (node.entry as Action[]).filter((action) => typeof action !== 'function');
      const last = entry.at(-1);
      expect(last && typeOf(last), `${name}: its entry ends with 'announce'`).toBe('announce');
      expect((last as { params: { state: string } }).params.state, `${name} announces itself`).toBe(name);
    }
  });

  it('every transition that changes the top-level state says why', () => {
    // Leaving `expired` (a transient state) keeps the cause that brought the connection there.
    const transient = connectionMachine.root.states.expired;
    const silent = allTransitions(connectionMachine)
      .filter((transition) => transition.target?.length)
      .filter((transition) => {
        const from = topLevel(transition.source);
        return transition.target!.some((target) => {
          const to = topLevel(target);
          // A root transition always re-enters its target; a move inside a state is no move.
          return to !== from || transition.source === connectionMachine.root;
        });
      })
      .filter((transition) => transition.source !== transient)
      .filter((transition) => !(transition.actions as Action[]).some((action) => typeOf(action) === 'note cause'))
      .map(transitionKey);
    expect(silent, 'transitions that change the state without a cause').toEqual([]);
  });
});
