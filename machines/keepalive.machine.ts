/**
 * The keepalive: while the connection is ready, probe the server every `intervalMs` (a `ping`,
 * or a cheap list request for servers that do not implement ping). A probe is skipped while
 * requests are in flight: they prove liveness themselves. `maxMissed` misses in a row mean the
 * connection is dead; the connection is told, and reconnects.
 */
import { assign, sendParent, setup } from 'xstate';

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

/**
 * How a probe ends, sent to the keepalive by whoever provides `send probe`: an answer (or a
 * skip), or no answer (`error`: a timeout, a broken connection).
 */
export type KeepaliveEvent = { type: 'PROBE_ANSWERED'; output: ProbeOutput } | { type: 'PROBE_FAILED'; error: unknown };

/** What the keepalive tells its connection: `maxMissed` probes in a row got no answer. */
export type KeepaliveReport = { type: 'CONNECTION_LOST'; error: string };

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
    events: {} as KeepaliveEvent,
  },
  actions: {
    // Provided by src/runtime/actors: sends one probe and, when it settles, PROBE_ANSWERED or
    // PROBE_FAILED to this keepalive. A plain call, not a promise actor: at 10,000 servers a
    // probe is made 333 times a second, and an actor's creation, start and stop cost CPU each time.
    'send probe': (_, _params: ProbeInput) => {},
    // A skipped probe proves nothing: the misses so far stand (requests in flight that time out
    // are the connection's evidence, see SESSION_IN_DOUBT).
    'record answer': assign((_, probe: ProbeOutput) =>
      probe.skipped ? {} : { missed: 0, lastError: undefined, lastRttMs: probe.rttMs },
    ),
    'count miss': assign(({ context }, params: { error: unknown }) => ({
      missed: context.missed + 1,
      lastError: params.error instanceof Error ? params.error.message : String(params.error),
    })),
    'report connection dead': sendParent(({ context }): KeepaliveReport => ({
      type: 'CONNECTION_LOST',
      error: `${context.missed} keepalive probes in a row got no answer (last: ${context.lastError ?? 'no answer'})`,
    })),
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
  context: ({ input }) => ({
    server: input.server,
    settings: input.settings,
    missed: 0,
    lastRttMs: undefined,
    lastError: undefined,
  }),
  initial: 'starting',
  states: {
    starting: {
      always: [{ guard: 'is disabled', target: 'off' }, { target: 'waiting' }],
    },
    waiting: {
      after: { 'keepalive interval': 'probing' },
    },
    // Left only when the probe settles: one probe at a time, and its answer is the one awaited.
    probing: {
      entry: {
        type: 'send probe',
        params: ({ context }) => ({
          server: context.server,
          timeoutMs: context.settings === false ? 0 : context.settings.timeoutMs,
        }),
      },
      on: {
        PROBE_ANSWERED: { target: 'waiting', actions: { type: 'record answer', params: ({ event }) => event.output } },
        PROBE_FAILED: {
          target: 'missed',
          actions: { type: 'count miss', params: ({ event }) => ({ error: event.error }) },
        },
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
