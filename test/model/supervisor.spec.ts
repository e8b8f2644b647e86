/**
 * The supervisor machine's model. Its connections are stand-ins that record what the supervisor
 * sends them (RESTART, GIVE_UP, CLOSE) with the simulated time, and on CLOSE close through a
 * controllable promise (`<server>:close` in Controls), then reach their final state.
 */
import { expect } from 'vitest';
import { setup, type AnyActorRef, type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import { restartDelay, type RestartPolicy } from '../../machines/restart-policy.js';
import {
  supervisorMachine,
  type SupervisedServer,
  type SupervisorContext,
  type SupervisorInput,
} from '../../machines/supervisor.machine.js';
import { flush, snapshotOf, type Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export interface Received {
  server: string;
  event: AnyEventObject;
  at: number;
}

export function received(h: Harness, type?: string, server?: string): Received[] {
  const log = (h.scratch.received ??= []) as Received[];
  return log.filter(
    (r) => (type === undefined || r.event.type === type) && (server === undefined || r.server === server),
  );
}

export function stubConnection(h: Harness) {
  return setup({
    actors: { 'close session': h.controls.promise() },
    actions: {
      record: ({ event, self }) => {
        ((h.scratch.received ??= []) as Received[]).push({ server: self.id, event, at: h.clock.now() });
      },
    },
  }).createMachine({
    id: 'stub-connection',
    initial: 'up',
    on: {
      RESTART: { actions: 'record' },
      GIVE_UP: { actions: 'record' },
      CLOSE: { actions: 'record' },
      // A bug inside a connection: the actor errors and the supervisor must isolate it.
      CRASH: {
        actions: () => {
          throw new Error('connection crashed');
        },
      },
    },
    states: {
      up: { on: { CLOSE: { target: 'closing', actions: 'record' } } },
      closing: {
        invoke: {
          id: 'close',
          src: 'close session',
          input: ({ self }: { self: AnyActorRef }) => ({ key: `${self.id}:close` }),
          onDone: 'closed',
        },
      },
      closed: { type: 'final' },
    },
  });
}

function policy(maxRestarts: number, withinMs: number, initialMs: number): RestartPolicy {
  return {
    maxRestarts,
    withinMs,
    provenAfterMs: 1_000,
    backoff: { initialMs, maxMs: 8 * initialMs, factor: 2, jitter: 0.5 },
  };
}

function connection(server: string): SupervisedServer['connection'] {
  return { server, transport: 'http', listenerOpenTimeoutMs: 1_000, provenAfterMs: 1_000, keepalive: false };
}

export const SERVERS: SupervisedServer[] = [
  { name: 'alpha', restart: policy(2, 10_000, 100), connection: connection('alpha') },
  { name: 'beta', restart: policy(1, 4_000, 250), connection: connection('beta') },
];

/** `random: () => 0.5` puts the jitter at exactly zero. */
export const INPUT: SupervisorInput = { servers: SERVERS, random: () => 0.5 };

export function policyOf(server: string): RestartPolicy {
  const entry = SERVERS.find((s) => s.name === server);
  if (!entry) throw new Error(`unknown server ${server}`);
  return entry.restart;
}

/** initialMs * factor^(attempt - 1), capped: the backoff with zero jitter, written out. */
export function promisedBackoff(server: string, attempt: number): number {
  const { initialMs, factor, maxMs } = policyOf(server).backoff;
  const delay = Math.min(maxMs, initialMs * factor ** (attempt - 1));
  expect(
    restartDelay(attempt - 1, policyOf(server).backoff, () => 0.5),
    'restartDelay with random 0.5 has no jitter',
  ).toBe(delay);
  return delay;
}

/** Lets a stub connection finish: CLOSE it if the supervisor has not, then settle its close. */
export async function finishConnection(h: Harness, server: string): Promise<void> {
  const child = snapshotOf(h).children[server];
  if (!child) throw new Error(`no connection '${server}'`);
  if (!h.controls.isRunning(`${server}:close`)) child.send({ type: 'CLOSE' });
  h.controls.settle(`${server}:close`, { output: undefined });
  await flush();
}

export const NAMES = SERVERS.map((s) => s.name);

export function down(
  server: string,
  fatal: boolean,
  error = fatal ? 'unsupported protocol version' : 'socket hang up',
): AnyEventObject {
  return { type: 'CONNECTION_DOWN', server, error, fatal };
}

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.status !== 'active') return [];
  const context = snapshot.context as SupervisorContext;
  const open = NAMES.filter((name) => !context.closed.includes(name));
  const list: AnyEventObject[] = [];
  if (snapshot.matches('running')) {
    for (const name of open) list.push(down(name, false));
    if (open.includes('alpha')) list.push(down('alpha', true), { type: 'CONNECTION_PROVEN', server: 'alpha' });
    // A window expiry is due for a server with restarts in its window. The model only takes it
    // when no other server has one pending (else the clock would deliver that one first).
    for (const name of NAMES) {
      const pendingElsewhere = NAMES.some((other) => other !== name && context.restarts[other]!.inWindow > 0);
      const record = context.restarts[name]!;
      if (record.inWindow > 0 && !pendingElsewhere)
        list.push({ type: 'RESTART_WINDOW_PASSED', server: name, epoch: record.epoch });
    }
    list.push({ type: 'STOP' });
  }
  for (const name of open) list.push({ type: `xstate.done.actor.${name}` });
  for (const name of open) list.push({ type: `xstate.error.actor.${name}`, error: new Error('connection crashed') });
  return list;
}

function project(snapshot: AnyMachineSnapshot) {
  const context = snapshot.context as SupervisorContext;
  return {
    value: snapshot.value,
    closed: [...context.closed].sort(),
    crashed: Object.keys(context.crashed).sort(),
    inWindow: Object.fromEntries(NAMES.map((name) => [name, context.restarts[name]!.inWindow])),
  };
}

interface Shadow {
  attempts: Record<string, number>;
  restarts: Received[];
}

function shadowOf(h: Harness): Shadow {
  return (h.scratch.shadow ??= { attempts: Object.fromEntries(NAMES.map((n) => [n, 0])), restarts: [] });
}

function checkSideEffects({ h, event, before, after }: StepContext): void {
  const shadow = shadowOf(h);
  const now = h.clock.now();
  const context = before.context as SupervisorContext;
  if (event.type === 'CONNECTION_DOWN' && before.matches('running')) {
    const { server, error, fatal } = event as unknown as { server: string; error: string; fatal: boolean };
    const policy = policyOf(server);
    const accepted = !fatal && context.restarts[server]!.inWindow < policy.maxRestarts;
    const giveUps = received(h, 'GIVE_UP', server).filter((r) => r.at === now);
    if (accepted) {
      shadow.attempts[server]! += 1;
      // A newer restart replaces one still pending for the same server.
      shadow.restarts = shadow.restarts.filter((r) => !(r.server === server && r.at > now));
      shadow.restarts.push({
        server,
        event: { type: 'RESTART' },
        at: now + promisedBackoff(server, shadow.attempts[server]!),
      });
      const windows = h.clock
        .scheduled()
        .filter(
          (e) =>
            e.event.type === 'RESTART_WINDOW_PASSED' &&
            e.event.server === server &&
            h.clock.dueOf(e) === now + policy.withinMs,
        );
      expect(windows.length, 'a window expiry is scheduled withinMs from now').toBeGreaterThan(0);
      expect(giveUps).toEqual([]);
    } else {
      const reason = fatal
        ? error
        : `${error} (restart budget spent: ${policy.maxRestarts} restarts within ${policy.withinMs} ms)`;
      expect(
        giveUps.map((r) => r.event),
        'GIVE_UP when the restart budget is spent or the failure is fatal',
      ).toEqual([{ type: 'GIVE_UP', reason, fatal }]);
    }
  }
  if (event.type === 'CONNECTION_PROVEN' && before.matches('running')) shadow.attempts[event.server as string] = 0;
  const closedNow = NAMES.filter(
    (name) => !context.closed.includes(name) && (after.context as SupervisorContext).closed.includes(name),
  );
  // A closed connection is gone: RESTARTs still scheduled for it reach no one.
  shadow.restarts = shadow.restarts.filter((r) => !(closedNow.includes(r.server) && r.at > now));
  const byTime = (a: { server: string; at: number }, b: { server: string; at: number }) =>
    a.at - b.at || a.server.localeCompare(b.server);
  const due = shadow.restarts.filter((r) => r.at <= now).map(({ server, at }) => ({ server, at }));
  const arrived = received(h, 'RESTART').map(({ server, at }) => ({ server, at }));
  expect(arrived.sort(byTime), 'each RESTART arrives after exactly its backoff').toEqual(due.sort(byTime));
  if (event.type === 'STOP') {
    // One CLOSE per connection (the supervisor's, or the one that closed it earlier); a crashed one gets none.
    for (const name of NAMES) {
      expect(received(h, 'CLOSE', name), `CLOSE for ${name}`).toHaveLength(name in context.crashed ? 0 : 1);
    }
  }
}

export const supervisorSpec = (machine: AnyStateMachine = supervisorMachine): ModelSpec => ({
  machine,
  input: INPUT,
  implementations: (h: Harness) => ({ actors: { connection: stubConnection(h) } }),
  events,
  project,
  timed: ['RESTART_WINDOW_PASSED'],
  drive: async (event, h) => {
    if (event.type === 'CONNECTION_DOWN') {
      // Connections fail at distinct instants, so their window expiries come one at a time.
      h.clock.advance(1);
      h.actor.send(event);
      return true;
    }
    const crashed = /^xstate\.error\.actor\.(.+)$/.exec(event.type);
    if (crashed) {
      snapshotOf(h).children[crashed[1]!]!.send({ type: 'CRASH' });
      await flush();
      return true;
    }
    const finished = /^xstate\.done\.actor\.(.+)$/.exec(event.type);
    if (!finished) return false;
    await finishConnection(h, finished[1]!);
    return true;
  },
  afterStep: checkSideEffects,
});
