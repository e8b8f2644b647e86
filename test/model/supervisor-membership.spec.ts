/**
 * The supervisor's model for servers that come and go at run time (`sup.add`, `sup.remove`):
 * one configured server, one that is added, removed and added again. A variant of the
 * supervisor suite, so its paths count toward the same coverage gate.
 */
import { expect } from 'vitest';
import type { AnyActorRef, AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import {
  supervisorMachine,
  type SupervisedServer,
  type SupervisorContext,
  type SupervisorInput,
} from '../../machines/supervisor.machine.js';
import { NEW_RESTART_RECORD } from '../../machines/restart-policy.js';
import { snapshotOf, type Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';
import { finishConnection, received, SERVERS, stubConnection } from './supervisor.spec.js';

const ALPHA = SERVERS[0]!;
export const GAMMA: SupervisedServer = {
  ...ALPHA,
  name: 'gamma',
  connection: { ...ALPHA.connection, server: 'gamma' },
};
const INPUT: SupervisorInput = { servers: [ALPHA], random: () => 0.5 };
const NAMES = [ALPHA.name, GAMMA.name];

function supervised(context: SupervisorContext): string[] {
  return context.servers.map((s) => s.name);
}

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.status !== 'active') return [];
  const context = snapshot.context as SupervisorContext;
  const list: AnyEventObject[] = [];
  if (snapshot.matches('running')) {
    // A name in use is refused by `sup.add` before the machine hears of it; the guard still holds.
    list.push({ type: 'ADD_SERVER', server: supervised(context).includes('gamma') ? ALPHA : GAMMA });
    for (const name of supervised(context)) {
      if (!context.removing.includes(name) && !context.closed.includes(name))
        list.push({ type: 'REMOVE_SERVER', server: name });
    }
    list.push({ type: 'STOP' });
  }
  // A removed server's connection closes (its close settles); during stop, every open one does.
  for (const name of supervised(context)) {
    const closing = context.removing.includes(name) || snapshot.matches('stopping');
    if (closing && !context.closed.includes(name)) list.push({ type: `xstate.done.actor.${name}` });
  }
  return list;
}

function project(snapshot: AnyMachineSnapshot) {
  const context = snapshot.context as SupervisorContext;
  return {
    value: snapshot.value,
    servers: supervised(context),
    removing: [...context.removing].sort(),
    closed: [...context.closed].sort(),
    restarts: Object.keys(context.restarts).sort(),
  };
}

function checkSideEffects({ h, event, before, after }: StepContext): void {
  const was = before.context as SupervisorContext;
  const now = after.context as SupervisorContext;
  // Connections still running (an ended child may linger in `children`, done).
  const children = Object.entries(snapshotOf(h).children)
    .filter(([, child]) => (child as AnyActorRef | undefined)?.getSnapshot().status === 'active')
    .map(([name]) => name);
  if (event.type === 'ADD_SERVER' && before.matches('running')) {
    const name = (event.server as SupervisedServer).name;
    if (supervised(was).includes(name)) {
      expect(now, 'a name in use is not added twice').toEqual(was);
    } else {
      expect(supervised(now), 'the added server is supervised').toContain(name);
      expect(now.restarts[name], 'with a fresh restart budget').toEqual(NEW_RESTART_RECORD);
      expect(children, 'and its connection starts at once').toContain(name);
      expect(snapshotOf(h).children[name]?.getSnapshot().value).toBe('up');
    }
  }
  if (event.type === 'REMOVE_SERVER') {
    const name = event.server as string;
    expect(now.removing, 'a removed server is remembered until its connection ends').toContain(name);
    expect(received(h, 'CLOSE', name).length, 'its connection is told to CLOSE').toBeGreaterThan(0);
    expect(supervised(now), 'it stays supervised while it closes').toContain(name);
  }
  const ended = /^xstate\.done\.actor\.(.+)$/.exec(event.type)?.[1];
  if (ended !== undefined && was.removing.includes(ended)) {
    expect(supervised(now), 'a removed server is forgotten once closed').not.toContain(ended);
    expect(Object.keys(now.restarts)).not.toContain(ended);
    expect(now.closed).not.toContain(ended);
    expect(now.removing).not.toContain(ended);
    expect(children, 'its connection has ended').not.toContain(ended);
  }
  // Every supervised server that has not ended has a running connection; no other one runs.
  const running = supervised(now).filter((name) => !now.closed.includes(name) && !now.removing.includes(name));
  for (const name of running) expect(children, `${name} runs`).toContain(name);
  for (const name of NAMES)
    if (!supervised(now).includes(name)) expect(children, `${name} is not supervised`).not.toContain(name);
}

export const membershipSpec = (machine: AnyStateMachine = supervisorMachine): ModelSpec => ({
  machine,
  input: INPUT,
  implementations: (h: Harness) => ({ actors: { connection: stubConnection(h) } }),
  events,
  project,
  drive: async (event, h) => {
    const finished = /^xstate\.done\.actor\.(.+)$/.exec(event.type);
    if (!finished) return false;
    await finishConnection(h, finished[1]!);
    return true;
  },
  afterStep: checkSideEffects,
});
