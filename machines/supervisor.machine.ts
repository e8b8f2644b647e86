/**
 * The supervisor: one parent for many connection actors (child id and systemId = server name),
 * each restarted under its own restart policy. A connection that goes down reports
 * CONNECTION_DOWN; the supervisor answers RESTART after a backoff while the restart budget lasts,
 * else GIVE_UP. One server's restarts never touch another's counters.
 *
 * For composition (`mcp-supervisor/machines`): the runtime does not use it. It gives each server
 * its connection actor as a root of its own, which decides its restarts itself (the same rules,
 * restart-policy.ts; see `ConnectionInput.restart`). Leave `connection.restart` unset here: the
 * supervisor's verdict is then the only one.
 */
import { assign, cancel, enqueueActions, raise, sendTo, setup } from 'xstate';
import type { connectionMachine, ConnectionInput, ConnectionReport, ServerRef } from './connection.machine.js';
import {
  countRestart,
  forgetOneRestart,
  giveUpReason,
  hasRestartBudget,
  NEW_RESTART_RECORD,
  resetRestartBudget,
  restartDelay,
  type RestartPolicy,
  type RestartRecord,
} from './restart-policy.js';
import { describeError } from './describe-error.js';

export interface SupervisedServer {
  name: string;
  restart: RestartPolicy;
  /** Passed through to the connection actor. */
  connection: ConnectionInput;
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
  /** Servers being removed: forgotten once their connection has closed. */
  removing: string[];
  random: () => number;
}

export type SupervisorEvent =
  | ConnectionReport
  /** A restart left the sliding window. */
  | { type: 'RESTART_WINDOW_PASSED'; server: string; epoch: number }
  /** A server added at run time (`sup.add`): it starts at once. */
  | { type: 'ADD_SERVER'; server: SupervisedServer }
  /** A server removed at run time (`sup.remove`): its connection closes, then it is forgotten. */
  | { type: 'REMOVE_SERVER'; server: string }
  | { type: 'STOP' }
  | { type: `xstate.done.actor.${string}` }
  | { type: `xstate.error.actor.${string}`; error: unknown };

type DownEvent = Extract<SupervisorEvent, { type: 'CONNECTION_DOWN' }>;
type WindowPassedEvent = Extract<SupervisorEvent, { type: 'RESTART_WINDOW_PASSED' }>;

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

function recordOf(context: SupervisorContext, server: string): RestartRecord {
  return context.restarts[server] ?? NEW_RESTART_RECORD;
}

/** One connection actor per server, its id the server's name. */
const connectionChildren: Record<string, 'connection'> = {};

export const supervisorMachine = setup({
  types: {
    input: {} as SupervisorInput,
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    children: connectionChildren,
  },
  actors: {
    // Provided by src/supervisor.ts: the connection machine with its effects bound.
    connection: {} as typeof connectionMachine,
  },
  actions: {
    /** A connection actor threw (a bug): its runtime fails the server's requests (provided by src/). */
    'fail crashed server': (_, _params: { server: string; error: unknown }) => {},
    /**
     * A connection actor was spawned at run time and starts after this macrostep: its facts are
     * followed from the first (provided by src/; the first servers' are followed before the
     * supervisor starts, when their actors exist but have not started).
     */
    'follow connection': (_, _params: ServerRef) => {},
    'start connections': enqueueActions(({ context, enqueue }) => {
      for (const server of context.servers) {
        enqueue.spawnChild('connection', { id: server.name, systemId: server.name, input: server.connection });
      }
    }),
    'add server': assign(({ context }, { server }: { server: SupervisedServer }) => ({
      servers: [...context.servers, server],
      restarts: { ...context.restarts, [server.name]: NEW_RESTART_RECORD },
    })),
    'start connection': enqueueActions(({ enqueue }, { server }: { server: SupervisedServer }) => {
      enqueue.spawnChild('connection', { id: server.name, systemId: server.name, input: server.connection });
    }),
    'close connection': sendTo((_, { server }: ServerRef) => server, { type: 'CLOSE' }),
    'remember removal': assign(({ context }, { server }: ServerRef) => ({ removing: [...context.removing, server] })),
    'forget removed server': assign(({ context, event }) => {
      const server = endedServer(event.type);
      if (!context.removing.includes(server)) return {};
      const { [server]: _record, ...restarts } = context.restarts;
      const { [server]: _crash, ...crashed } = context.crashed;
      return {
        servers: context.servers.filter((s) => s.name !== server),
        restarts,
        crashed,
        closed: context.closed.filter((name) => name !== server),
        removing: context.removing.filter((name) => name !== server),
      };
    }),
    'count restart': assign(({ context }, { server }: DownEvent) => {
      return { restarts: { ...context.restarts, [server]: countRestart(recordOf(context, server)) } };
    }),
    'schedule restart': enqueueActions(({ context, enqueue }, { server }: DownEvent) => {
      // The record was already counted: attempt 1 waits initialMs.
      const delay = restartDelay(
        recordOf(context, server).attempt - 1,
        policyOf(context, server).backoff,
        context.random,
      );
      // At most one pending restart per server.
      enqueue.cancel(restartId(server));
      enqueue.sendTo(server, { type: 'RESTART' }, { id: restartId(server), delay });
    }),
    'schedule window expiry': raise(
      ({ context }, { server }: DownEvent) => ({
        type: 'RESTART_WINDOW_PASSED' as const,
        server,
        epoch: recordOf(context, server).epoch,
      }),
      { delay: ({ context }, { server }: DownEvent) => policyOf(context, server).withinMs },
    ),
    'forget one restart': assign(({ context }, { server }: ServerRef) => {
      return { restarts: { ...context.restarts, [server]: forgetOneRestart(recordOf(context, server)) } };
    }),
    'reset restart budget': assign(({ context }, { server }: ServerRef) => {
      return { restarts: { ...context.restarts, [server]: resetRestartBudget(recordOf(context, server)) } };
    }),
    'give up on server': sendTo(
      (_, down: DownEvent) => down.server,
      ({ context }, down: DownEvent) => ({
        type: 'GIVE_UP' as const,
        reason: giveUpReason(down.error, down.fatal, policyOf(context, down.server)),
        fatal: down.fatal,
      }),
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
    'remember crash': assign(({ context, event }) => ({
      crashed: {
        ...context.crashed,
        [endedServer(event.type)]: describeError('error' in event ? event.error : undefined),
      },
    })),
    'cancel pending restart': cancel(({ event }) => restartId(endedServer(event.type))),
  },
  guards: {
    'can restart': ({ context }, down: DownEvent) =>
      !down.fatal && hasRestartBudget(recordOf(context, down.server), policyOf(context, down.server)),
    'is current window': ({ context }, passed: WindowPassedEvent) =>
      recordOf(context, passed.server).epoch === passed.epoch,
    'all connections closed': ({ context }) => context.closed.length >= context.servers.length,
    'is a new server': ({ context }, { server }: { server: SupervisedServer }) =>
      !context.servers.some((s) => s.name === server.name),
    'is supervised': ({ context }, { server }: ServerRef) =>
      context.servers.some((s) => s.name === server) && !context.removing.includes(server),
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input }) => ({
    servers: input.servers,
    restarts: Object.fromEntries(input.servers.map((s) => [s.name, NEW_RESTART_RECORD])),
    closed: [],
    crashed: {},
    removing: [],
    random: input.random ?? Math.random,
  }),
  initial: 'running',
  on: {
    // A connection reached `closed` (closed on its own, or during stop).
    'xstate.done.actor.*': {
      actions: ['remember ended connection', 'cancel pending restart', 'forget removed server'],
    },
    // A connection actor threw: isolate it, the supervisor and the other servers go on.
    'xstate.error.actor.*': {
      actions: [
        'remember crash',
        {
          type: 'fail crashed server',
          params: ({ event }) => ({
            server: endedServer(event.type),
            error: 'error' in event ? event.error : undefined,
          }),
        },
        'remember ended connection',
        'cancel pending restart',
        'forget removed server',
      ],
    },
  },
  states: {
    running: {
      entry: 'start connections',
      on: {
        CONNECTION_DOWN: [
          {
            guard: { type: 'can restart', params: ({ event }) => event },
            actions: [
              { type: 'count restart', params: ({ event }) => event },
              { type: 'schedule restart', params: ({ event }) => event },
              { type: 'schedule window expiry', params: ({ event }) => event },
            ],
          },
          { actions: { type: 'give up on server', params: ({ event }) => event } },
        ],
        CONNECTION_PROVEN: { actions: { type: 'reset restart budget', params: ({ event }) => event } },
        RESTART_WINDOW_PASSED: {
          guard: { type: 'is current window', params: ({ event }) => event },
          actions: { type: 'forget one restart', params: ({ event }) => event },
        },
        ADD_SERVER: {
          guard: { type: 'is a new server', params: ({ event }) => event },
          actions: [
            { type: 'add server', params: ({ event }) => event },
            { type: 'start connection', params: ({ event }) => event },
            { type: 'follow connection', params: ({ event }) => ({ server: event.server.name }) },
          ],
        },
        REMOVE_SERVER: {
          guard: { type: 'is supervised', params: ({ event }) => event },
          actions: [
            { type: 'remember removal', params: ({ event }) => event },
            { type: 'close connection', params: ({ event }) => event },
          ],
        },
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
