/**
 * The supervisor: one connection actor per server (child id and systemId = server name), each
 * restarted under its own restart policy. A connection that goes down reports CONNECTION_DOWN;
 * the supervisor answers RESTART after a backoff while the restart budget lasts, else GIVE_UP.
 * One server's restarts never touch another's counters.
 */
import { assign, cancel, enqueueActions, raise, sendTo, setup, type ActorLogic, type ActorSystem, type AnyEventObject } from 'xstate';
import type { ConnectionReport } from './connection.machine.js';
import { hasRestartBudget, NEW_RESTART_RECORD, restartDelay, type RestartPolicy, type RestartRecord } from './restart-policy.js';

export interface SupervisedServer {
  name: string;
  restart: RestartPolicy;
  /** Passed through to the connection actor. */
  connection: Record<string, unknown>;
}

export interface SupervisorInput {
  servers: SupervisedServer[];
  /** Jitter source; tests pass a fixed one. */
  random?: () => number;
}

export interface SupervisorContext {
  servers: SupervisedServer[];
  restarts: Record<string, RestartRecord>;
  /** Servers whose connection actor has ended: closed, or crashed (see `crashed`). */
  closed: string[];
  /** Connection actors that threw (a bug): the server is failed, the others go on. */
  crashed: Record<string, string>;
  random: () => number;
}

export type SupervisorEvent =
  | ConnectionReport
  /** A restart left the sliding window. */
  | { type: 'RESTART_WINDOW_PASSED'; server: string; epoch: number }
  | { type: 'STOP' }
  | { type: `xstate.done.actor.${string}` }
  | { type: `xstate.error.actor.${string}`; error: unknown };

type DownEvent = Extract<SupervisorEvent, { type: 'CONNECTION_DOWN' }>;

function policyOf(context: SupervisorContext, server: string): RestartPolicy {
  const entry = context.servers.find((s) => s.name === server);
  if (!entry) throw new Error(`unknown server '${server}'`);
  return entry.restart;
}

function restartId(server: string): string {
  return `restart:${server}`;
}

function endedServer(eventType: string): string {
  return eventType.replace(/^xstate\.(done|error)\.actor\./, '');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function recordOf(context: SupervisorContext, server: string): RestartRecord {
  return context.restarts[server] ?? NEW_RESTART_RECORD;
}

export const supervisorMachine = setup({
  types: {
    input: {} as SupervisorInput,
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
  },
  actors: {
    // Provided by src/supervisor.ts: the connection machine with its effects bound.
    connection: {} as ActorLogic<any, any, any, ActorSystem<any>>,
  },
  actions: {
    'start connections': enqueueActions(({ context, enqueue }) => {
      for (const server of context.servers) {
        enqueue.spawnChild('connection', { id: server.name, systemId: server.name, input: server.connection });
      }
    }),
    'count restart': assign({
      restarts: ({ context, event }) => {
        const { server } = event as DownEvent;
        const record = recordOf(context, server);
        return { ...context.restarts, [server]: { ...record, inWindow: record.inWindow + 1, attempt: record.attempt + 1, total: record.total + 1 } };
      },
    }),
    'schedule restart': enqueueActions(({ context, event, enqueue }) => {
      const { server } = event as DownEvent;
      // The record was already counted: attempt 1 waits initialMs.
      const delay = restartDelay(recordOf(context, server).attempt - 1, policyOf(context, server).backoff, context.random);
      // At most one pending restart per server.
      enqueue.cancel(restartId(server));
      enqueue.sendTo(server, { type: 'RESTART' }, { id: restartId(server), delay });
    }),
    'schedule window expiry': raise(
      ({ context, event }) => ({ type: 'RESTART_WINDOW_PASSED' as const, server: (event as DownEvent).server, epoch: recordOf(context, (event as DownEvent).server).epoch }),
      { delay: ({ context, event }) => policyOf(context, (event as DownEvent).server).withinMs },
    ),
    'forget one restart': assign({
      restarts: ({ context, event }) => {
        const { server } = event as { server: string };
        const record = recordOf(context, server);
        return { ...context.restarts, [server]: { ...record, inWindow: Math.max(0, record.inWindow - 1) } };
      },
    }),
    'reset restart budget': assign({
      restarts: ({ context, event }) => {
        const { server } = event as { server: string };
        const record = recordOf(context, server);
        return { ...context.restarts, [server]: { ...record, inWindow: 0, attempt: 0, epoch: record.epoch + 1 } };
      },
    }),
    'give up on server': sendTo(
      ({ event }) => (event as DownEvent).server,
      ({ context, event }) => {
        const down = event as DownEvent;
        const policy = policyOf(context, down.server);
        return {
          type: 'GIVE_UP' as const,
          reason: down.fatal ? down.error : `${down.error} (restart budget spent: ${policy.maxRestarts} restarts within ${policy.withinMs} ms)`,
          fatal: down.fatal,
        };
      },
    ),
    'close connections': enqueueActions(({ context, enqueue }) => {
      for (const server of context.servers) {
        if (!context.closed.includes(server.name)) enqueue.sendTo(server.name, { type: 'CLOSE' });
      }
    }),
    'remember ended connection': assign({
      closed: ({ context, event }) => {
        const server = endedServer(event.type);
        return context.closed.includes(server) ? context.closed : [...context.closed, server];
      },
    }),
    'remember crash': assign({
      crashed: ({ context, event }) => ({ ...context.crashed, [endedServer(event.type)]: describe((event as { error?: unknown }).error) }),
    }),
    'cancel pending restart': cancel(({ event }) => restartId(endedServer(event.type))),
  },
  guards: {
    'can restart': ({ context, event }) => {
      const down = event as DownEvent;
      return !down.fatal && hasRestartBudget(recordOf(context, down.server), policyOf(context, down.server));
    },
    'is current window': ({ context, event }) => {
      const passed = event as { server: string; epoch: number };
      return recordOf(context, passed.server).epoch === passed.epoch;
    },
    'all connections closed': ({ context }) => context.closed.length >= context.servers.length,
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input }) => ({
    servers: input.servers,
    restarts: Object.fromEntries(input.servers.map((s) => [s.name, NEW_RESTART_RECORD])),
    closed: [],
    crashed: {},
    random: input.random ?? Math.random,
  }),
  initial: 'running',
  on: {
    // A connection reached `closed` (closed on its own, or during stop).
    'xstate.done.actor.*': { actions: ['remember ended connection', 'cancel pending restart'] },
    // A connection actor threw: isolate it, the supervisor and the other servers go on.
    'xstate.error.actor.*': { actions: ['remember crash', 'remember ended connection', 'cancel pending restart'] },
  },
  states: {
    running: {
      entry: 'start connections',
      on: {
        CONNECTION_DOWN: [
          { guard: 'can restart', actions: ['count restart', 'schedule restart', 'schedule window expiry'] },
          { actions: 'give up on server' },
        ],
        CONNECTION_PROVEN: { actions: 'reset restart budget' },
        RESTART_WINDOW_PASSED: { guard: 'is current window', actions: 'forget one restart' },
        STOP: 'stopping',
      },
    },
    stopping: {
      entry: 'close connections',
      always: { guard: 'all connections closed', target: 'stopped' },
    },
    stopped: { type: 'final' },
  },
});
