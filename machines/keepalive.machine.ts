/**
 * The keepalive: while the connection is ready, probe the server every `intervalMs` (a `ping`,
 * or a cheap list request for servers that do not implement ping). A probe is skipped while
 * requests are in flight: they prove liveness themselves. `maxMissed` misses in a row mean the
 * connection is dead; the connection is told, and reconnects.
 */
import { assign, sendParent, setup, type PromiseActorLogic } from 'xstate';
import type { ConnectionEvent } from './connection.machine.js';

export interface KeepaliveSettings {
  intervalMs: number;
  timeoutMs: number;
  maxMissed: number;
}

export interface KeepaliveInput {
  server: string;
  /** `false` turns the keepalive off. */
  settings: KeepaliveSettings | false;
}

export interface ProbeInput {
  server: string;
  timeoutMs: number;
}

/** `skipped`: requests were in flight, so no probe was sent. */
export type ProbeOutput = { skipped: true } | { skipped: false; rttMs: number };

export interface KeepaliveContext {
  server: string;
  settings: KeepaliveSettings | false;
  missed: number;
  lastRttMs: number | undefined;
  lastError: string | undefined;
}

export const keepaliveMachine = setup({
  types: {
    input: {} as KeepaliveInput,
    context: {} as KeepaliveContext,
  },
  actors: {
    probe: {} as PromiseActorLogic<ProbeOutput, ProbeInput>,
  },
  actions: {
    'record answer': assign({
      missed: 0,
      lastError: undefined,
      lastRttMs: ({ context, event }) => {
        const output = (event as unknown as { output: ProbeOutput }).output;
        return output.skipped ? context.lastRttMs : output.rttMs;
      },
    }),
    'count miss': assign({
      missed: ({ context }) => context.missed + 1,
      lastError: ({ event }) => {
        const error = (event as unknown as { error: unknown }).error;
        return error instanceof Error ? error.message : String(error);
      },
    }),
    'report connection dead': sendParent(({ context }) => ({
      type: 'CONNECTION_LOST' as const,
      error: `${context.missed} keepalive probes in a row got no answer (last: ${context.lastError ?? 'no answer'})`,
    }) satisfies ConnectionEvent),
  },
  guards: {
    'is disabled': ({ context }) => context.settings === false,
    'too many misses': ({ context }) => context.settings !== false && context.missed >= context.settings.maxMissed,
  },
  delays: {
    'keepalive interval': ({ context }) => (context.settings === false ? 0 : context.settings.intervalMs),
  },
}).createMachine({
  id: 'keepalive',
  context: ({ input }) => ({ server: input.server, settings: input.settings, missed: 0, lastRttMs: undefined, lastError: undefined }),
  initial: 'starting',
  states: {
    starting: {
      always: [{ guard: 'is disabled', target: 'off' }, { target: 'waiting' }],
    },
    waiting: {
      after: { 'keepalive interval': 'probing' },
    },
    probing: {
      invoke: {
        id: 'probe',
        src: 'probe',
        input: ({ context }) => ({ server: context.server, timeoutMs: context.settings === false ? 0 : context.settings.timeoutMs }),
        onDone: { target: 'waiting', actions: 'record answer' },
        onError: { target: 'missed', actions: 'count miss' },
      },
    },
    missed: {
      always: [{ guard: 'too many misses', target: 'dead' }, { target: 'waiting' }],
    },
    dead: {
      entry: 'report connection dead',
    },
    off: {},
  },
});
