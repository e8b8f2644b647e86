/**
 * The keepalive: while the connection is ready, probe the server every `intervalMs` (a `ping`,
 * or a cheap list request for servers that do not implement ping). A probe is skipped while
 * requests are in flight: they prove liveness themselves. `maxMissed` misses in a row mean the
 * connection is dead; the connection is told, and reconnects.
 *
 * With `proof: 'origin'` (the default) a server's probe is also skipped when its origin answered
 * anything within the interval (a request, a sibling server's probe), or a sibling's probe is on
 * its way: request sockets are shared per origin, so that answer proves this server's process
 * and connection alive too. The skip is one step (`waiting` → `waiting`), decided here on the
 * runtime's evidence. A keepalive with misses probes at every interval (no skip).
 *
 * One machine, two uses: a child of a connection (`proof: 'server'`, stdio), or the one keepalive
 * of an origin (`proof: 'origin'` over HTTP, src/runtime/keepalive/), whose `server` is the origin,
 * whose probe goes to one of its ready servers in turn, and whose CONNECTION_LOST goes to all of them.
 */
import { and, assign, sendParent, setup } from 'xstate';
import { describeError } from './describe-error.js';

/** What proves a server alive between its own probes: any answer from its origin, or only its own. */
export type KeepaliveProof = 'origin' | 'server';

export interface KeepaliveSettings {
  intervalMs: number;
  timeoutMs: number;
  maxMissed: number;
  /** Absent: `'origin'`. */
  proof?: KeepaliveProof;
}

/** What the runtime knows of the server's liveness without sending anything. */
export interface LivenessEvidence {
  /**
   * Whether the server's origin proved alive within the last `intervalMs`: it answered anything
   * (a request, a sibling's probe), or a sibling's probe is on its way and the origin's last
   * answer is less than `intervalMs + timeoutMs` old.
   */
  provedAliveWithin(intervalMs: number, timeoutMs: number): boolean;
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

/** What `maxMissed` misses in a row tell the connection (each member's, for an origin's keepalive). */
export function connectionLost(context: Pick<KeepaliveContext, 'missed' | 'lastError'>): KeepaliveReport {
  return {
    type: 'CONNECTION_LOST',
    error: `${context.missed} keepalive probes in a row got no answer (last: ${context.lastError ?? 'no answer'})`,
  };
}

export interface KeepaliveContext {
  server: string;
  settings: KeepaliveSettings | false;
  missed: number;
  lastRttMs: number | undefined;
  lastError: string | undefined;
  /** The runtime's evidence, bound when the keepalive starts (`bind evidence`); none: every interval probes. */
  evidence: LivenessEvidence | undefined;
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
    // Provided by src/runtime/actors: an assign of the server's evidence (its origin's answers).
    'bind evidence': () => {},
    // A skipped probe proves nothing: the misses so far stand (requests in flight that time out
    // are the connection's evidence, see SESSION_IN_DOUBT).
    'record answer': assign((_, probe: ProbeOutput) =>
      probe.skipped ? {} : { missed: 0, lastError: undefined, lastRttMs: probe.rttMs },
    ),
    'count miss': assign(({ context }, params: { error: unknown }) => ({
      missed: context.missed + 1,
      lastError: describeError(params.error),
    })),
    // An origin's keepalive (src/runtime/keepalive/) tells every member server instead.
    'report connection dead': sendParent(({ context }) => connectionLost(context)),
  },
  guards: {
    'is disabled': ({ context }) => context.settings === false,
    'proves by origin': ({ context }) => context.settings !== false && context.settings.proof !== 'server',
    // Misses in a row: the server proves itself until it answers (a frozen backend behind a live proxy).
    'no misses': ({ context }) => context.missed === 0,
    'origin proved alive': ({ context }) =>
      context.settings !== false &&
      context.evidence?.provedAliveWithin(context.settings.intervalMs, context.settings.timeoutMs) === true,
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
    evidence: undefined,
  }),
  initial: 'starting',
  states: {
    starting: {
      always: [
        { guard: 'is disabled', target: 'off' },
        { target: 'waiting', actions: 'bind evidence' },
      ],
    },
    waiting: {
      after: {
        'keepalive interval': [
          // Proved alive by its origin: one step, no probe; the next interval is due from now.
          {
            guard: and(['proves by origin', 'no misses', 'origin proved alive']),
            target: 'waiting',
            reenter: true,
          },
          { target: 'probing' },
        ],
      },
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
