/**
 * The model tests must be able to fail: each mutant below (a wrong delay, a wrong report, a
 * wrong guard, a jittery backoff) must make at least one generated path fail, and the coverage
 * gate must report transitions no replay took.
 */
import { describe, expect, it } from 'vitest';
import { sendParent } from 'xstate';
import { connectionMachine } from '../../machines/connection.machine.js';
import { listenerMachine } from '../../machines/listener.machine.js';
import { supervisorMachine } from '../../machines/supervisor.machine.js';
import { connectionSpec } from './connection.spec.js';
import { allTransitionKeys, Coverage } from './coverage.js';
import { listenerSpec } from './listener.spec.js';
import { replay, transitionPaths, type ModelSpec } from './runner.js';
import { INPUT as SUPERVISOR_INPUT, supervisorSpec } from './supervisor.spec.js';

/** The first generated path the spec fails on (a mutant is caught by one; the rest need not run). */
async function firstFailingPath(spec: ModelSpec): Promise<string | undefined> {
  const coverage = new Coverage(spec.machine);
  for (const path of transitionPaths(spec)) {
    try {
      await replay(spec, path, coverage);
    } catch {
      return path.name;
    }
  }
  return undefined;
}

const mutants: Array<[string, ModelSpec]> = [
  [
    'connection: proven delay off by one',
    connectionSpec(connectionMachine.provide({ delays: { 'session proven delay': 999 } })),
  ],
  [
    'connection: CONNECTION_DOWN never fatal',
    connectionSpec(
      connectionMachine.provide({
        actions: {
          'report connection down': sendParent(({ context }) => ({
            type: 'CONNECTION_DOWN',
            server: context.server,
            error: context.lastError ?? '',
            fatal: false,
          })),
        },
      }),
    ),
  ],
  [
    'connection: any 404 expires the session',
    connectionSpec(connectionMachine.provide({ guards: { 'is current session': () => true } })),
  ],
  ['listener: fixed reconnect delay', listenerSpec(listenerMachine.provide({ delays: { 'reconnect delay': 1_000 } }))],
  [
    'listener: gives up too early',
    listenerSpec(
      listenerMachine.provide({ guards: { 'may reconnect': ({ context }) => context.stalledAttempts < 3 } }),
    ),
  ],
  [
    'supervisor: one restart too many',
    supervisorSpec(
      supervisorMachine.provide({
        guards: {
          'can restart': ({ context, event }) => {
            const down = event as unknown as { server: string; fatal: boolean };
            const policy = context.servers.find((s) => s.name === down.server)!.restart;
            return !down.fatal && (context.restarts[down.server]?.inWindow ?? 0) <= policy.maxRestarts;
          },
        },
      }),
    ),
  ],
  [
    'supervisor: jitter not neutralised',
    { ...supervisorSpec(supervisorMachine), input: { ...SUPERVISOR_INPUT, random: () => 0 } },
  ],
];

describe('model runner self-check', () => {
  it.each(mutants)('catches the mutant "%s"', async (_name, spec) => {
    expect(await firstFailingPath(spec), 'a path that fails on the mutant').toBeDefined();
  });

  it('the coverage gate lists the transitions a partial run did not take', async () => {
    const spec = listenerSpec(listenerMachine);
    const coverage = new Coverage(spec.machine);
    expect(coverage.untaken()).toEqual(allTransitionKeys(listenerMachine));
    const [first] = transitionPaths(spec);
    await replay(spec, first!, coverage);
    const { covered, total } = coverage.summary();
    expect(covered).toBeGreaterThan(0);
    expect(covered).toBeLessThan(total);
    expect(coverage.untaken()).toHaveLength(total - covered);
  });
});
