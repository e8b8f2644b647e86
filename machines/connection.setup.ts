/**
 * What the connection machine can do: its actors (provided by src/runtime/actors), its actions
 * (the ones on requests are provided by the runtime; the others keep the context), its guards
 * and its delays. connection.machine.ts says when each happens.
 */
import { assign, cancel, emit, enqueueActions, setup, type PromiseActorLogic } from 'xstate';
import type { ConnectionFact, SessionEndReason } from './connection.facts.js';
import {
  isCurrentSession,
  needsAuthorization,
  statusOf,
  type Cause,
  type ConnectionContext,
  type ConnectionEvent,
  type ConnectionInput,
  type ConnectionReport,
  type ConnectTransportInput,
  type DiscoverVerdict,
  type Failure,
  type ProbeVerdict,
  type ServerRef,
  type SessionInfo,
  type TransportKind,
  type TransportOpened,
} from './connection.types.js';
import type { keepaliveMachine } from './keepalive.machine.js';
import type { listenerMachine } from './listener.machine.js';
import {
  baseDelay,
  chargeHurriedAttempt,
  countAttempt,
  countBusyAttempt,
  countDown,
  forgetOneRestart,
  giveUpReason,
  hasRestartBudget,
  resetRestartBudget,
  restartDelay,
  reviveDelay,
  type RestartRecord,
} from './restart-policy.js';
import type { subscriptionMachine } from './subscription.machine.js';
import type { sseFallbackMachine, SseFallbackOutput } from './sse-fallback.machine.js';

/** Statuses on the Streamable HTTP initialize that send an `auto` server to legacy SSE (spec: 400, 404, 405). */
const FALLBACK_STATUSES = [400, 404, 405];

/** Why waiting requests are rejected or failed, in words the caller reads in the error. */
export interface RejectReason {
  reason: string;
}
/** A session (or a discovery) that worked latches its transport and its era, and clears the last error. */
function sessionKept(context: ConnectionContext, session: SessionInfo): Partial<ConnectionContext> {
  return {
    session,
    latchedTransport: context.latchedTransport ?? context.transport,
    latchedEra: session.era,
    lastError: undefined,
    fatal: false,
    restarts: withBusy(context.restarts, undefined),
  };
}

/** The restart record with the busy wait of the last attempt (the same record when it does not change). */
function withBusy(restarts: RestartRecord, busyMs: number | undefined): RestartRecord {
  return restarts.busyMs === busyMs ? restarts : { ...restarts, busyMs };
}

/**
 * An action that enqueues what the context (and its params) decides — facts, reports, raised
 * events — typed without the setup's own guards and delays (they would make its types circular).
 */
function tellFacts<Params>(
  decide: Parameters<
    typeof enqueueActions<
      ConnectionContext,
      ConnectionEvent,
      Params,
      ConnectionEvent,
      never,
      never,
      never,
      never,
      ConnectionFact
    >
  >[0],
) {
  return enqueueActions(decide);
}

/** The `session ended` fact of a session. */
function sessionEnded(session: SessionInfo, reason: SessionEndReason): ConnectionFact {
  return { type: 'session ended', reason, era: session.era };
}

export const connectionSetup = setup({
  types: {
    input: {} as ConnectionInput,
    context: {} as ConnectionContext,
    events: {} as ConnectionEvent,
    /** What happened, for whoever listens (connection.facts.ts). */
    emitted: {} as ConnectionFact,
    children: {} as {
      transport: 'connect transport';
      'sse-fallback': 'sse-fallback';
      discover: 'discover server';
      handshake: 'initialize session';
      probe: 'probe session';
      authorize: 'authorize';
      close: 'close session';
      listener: 'listener';
      keepalive: 'keepalive';
      origin: 'wait for origin';
    },
  },
  actors: {
    'connect transport': {} as PromiseActorLogic<TransportOpened, ConnectTransportInput>,
    'sse-fallback': {} as typeof sseFallbackMachine,
    'discover server': {} as PromiseActorLogic<DiscoverVerdict, ServerRef>,
    'initialize session': {} as PromiseActorLogic<SessionInfo, ServerRef>,
    'probe session': {} as PromiseActorLogic<ProbeVerdict, ServerRef>,
    'close session': {} as PromiseActorLogic<void, ServerRef>,
    authorize: {} as PromiseActorLogic<void, ServerRef>,
    listener: {} as typeof listenerMachine,
    keepalive: {} as typeof keepaliveMachine,
    /** One events subscription per `subscription.<n>` child (connection.events.ts). */
    subscription: {} as typeof subscriptionMachine,
    /** `reconnecting` / `failed`: resolves when this server's origin gives it the next attempt (or the origin is up). */
    'wait for origin': {} as PromiseActorLogic<void, ServerRef>,
  },
  actions: {
    // Effects on requests: provided by the runtime (src/runtime/actors/connection-actors.ts).
    /** New requests wait in the gate (held); nothing is sent. */
    'hold requests': () => {},
    /** The gate opens: parked requests are sent again first (never processed), then the held ones. */
    'release requests': () => {},
    /** The server is gone for good (closed, or failed beyond revival): every waiting request fails. */
    'reject waiting requests': (_, _params: RejectReason) => {},
    /** What would let the parked requests be sent again failed for good (an authorization). */
    'fail parked requests': () => {},
    /** After a probe: requests whose 400 was in doubt are parked for replay (`lost`) or fail with their 400. */
    'settle doubtful requests': (_, _params: { lost: boolean }) => {},
    /** The runtime's first attempt is over (serving, or down): `start()` and `connect()` resolve. */
    'settle attempt': () => {},
    /** The next `connecting` opens a new transport (a new stdio process, a fresh HTTP pool share). */
    'replace transport': () => {},
    /** Down: the runtime answers REQUESTS_WAITING now if requests are held for the server (later ones send it themselves). */
    'ask about waiting requests': () => {},
    /** `ready`, proved by its origin: the server joins its origin's one keepalive (it probes, and tells CONNECTION_LOST). */
    'join origin keepalive': () => {},
    /** Leaving `ready`: the server leaves its origin's keepalive (the last one out stops it). */
    'leave origin keepalive': () => {},
    /** Leaving `ready`: the stream a listener handed over (listener.machine.ts) is closed. */
    'stop followed stream': () => {},
    /** Entering `ready` in a mass start: the start sends LISTEN_WANTED once its handshakes are made. */
    'wait for listen turn': ({ context }) => context.listenTurn?.wait(context.server),

    // What happened (connection.facts.ts): the cause of a move, the state entered, the lifecycle facts.
    'note cause': assign((_, cause: Cause) => ({ cause })),
    announce: emit(({ context }, { state }: { state: string }) => ({
      type: 'state changed' as const,
      to: state,
      cause: context.cause.cause,
      error: context.cause.error,
    })),
    tell: emit((_, fact: ConnectionFact) => fact),
    'tell connection down': emit(({ context }) => ({
      type: 'connection down' as const,
      error: context.lastError ?? 'connection lost',
      fatal: context.fatal,
    })),
    'tell revival scheduled': emit(({ context }) => ({
      type: 'revival scheduled' as const,
      delayMs: context.revive === false ? 0 : reviveDelay(context.restarts.revivals, context.revive),
    })),
    /** After `remember session` / `remember discovery`: the new session's facts. */
    'tell session started': tellFacts<undefined>(({ context, enqueue }) => {
      const session = context.session;
      if (!session) return;
      enqueue.emit({
        type: 'session started',
        era: session.era,
        protocolVersion: session.protocolVersion,
        generation: session.sessionGeneration,
        transport: context.transport,
      });
    }),
    /** At a close: the session ends (told only when there was one); the close itself still needs it. */
    'tell session ended': tellFacts<{ reason: SessionEndReason }>(({ context, enqueue }, { reason }) => {
      if (context.session) enqueue.emit(sessionEnded(context.session, reason));
    }),
    /** The session is gone: told (when there was one), then forgotten. */
    'forget session': tellFacts<{ reason: SessionEndReason }>(({ context, enqueue }, { reason }) => {
      if (!context.session) return;
      enqueue.emit(sessionEnded(context.session, reason));
      enqueue.assign({ session: undefined });
    }),

    'remember transport': assign((_, params: { transport: TransportKind }) => ({ transport: params.transport })),
    'remember session': assign(({ context }, session: SessionInfo) => sessionKept(context, session)),
    /** A modern server answered the probe: its discovery is the session (there is no other). */
    'remember discovery': assign(({ context }, verdict: DiscoverVerdict) =>
      verdict.era === 'modern' ? sessionKept(context, verdict.session) : {},
    ),
    'latch legacy SSE': assign({ latchedTransport: 'sse' }),
    'remember error': assign(({ context }, failure: Failure) => ({
      lastError: failure.error,
      fatal: failure.fatal,
      restarts: withBusy(context.restarts, failure.busyMs),
    })),
    'forget error': assign(({ context }) => ({
      lastError: undefined,
      fatal: false,
      restarts: withBusy(context.restarts, undefined),
    })),
    'remember give-up reason': assign(({ context }, params: { reason: string; fatal?: boolean | undefined }) => ({
      lastError: context.lastError ?? params.reason,
      fatal: context.fatal || params.fatal === true,
    })),
    /** A handshake failed: the next attempt probes the era again (the server may have been replaced). */
    'forget era': assign(({ context }) => ({
      latchedEra: context.preferredEra === 'auto' ? undefined : context.latchedEra,
    })),
    'count revival': assign(({ context }) => ({
      restarts: { ...context.restarts, revivals: context.restarts.revivals + 1 },
    })),
    'forget revivals': assign(({ context }) => ({ restarts: { ...context.restarts, revivals: 0 } })),
    // To a parent, when there is one (a server's root actor has none).
    'report connection down': tellFacts<undefined>(({ context, self, enqueue }) => {
      if (!self._parent) return;
      const report: ConnectionReport = {
        type: 'CONNECTION_DOWN',
        server: context.server,
        error: context.lastError ?? 'connection lost',
        fatal: context.fatal,
      };
      enqueue.sendParent(report);
    }),
    'report session proven': tellFacts<undefined>(({ context, self, enqueue }) => {
      if (!self._parent) return;
      const report: ConnectionReport = { type: 'CONNECTION_PROVEN', server: context.server };
      enqueue.sendParent(report);
    }),

    // The restart policy, when the connection decides its restarts itself (restart-policy.ts).
    /**
     * Down: a restart after the backoff while the budget lasts (the window's expiry scheduled with
     * it), else GIVE_UP at once — what `supervisorMachine` answers a CONNECTION_DOWN.
     */
    'decide restart': tellFacts<undefined>(({ context, enqueue }) => {
      const policy = context.restart;
      if (!policy) return;
      // A busy server is up and asked to wait: the attempt comes after its wait (or the backoff,
      // whichever is longer), and is no failure the budget counts.
      const busyMs = context.restarts.busyMs;
      if (busyMs !== undefined) {
        const restarts = countBusyAttempt(context.restarts);
        const backoff = restartDelay(restarts.attempt - 1, policy.backoff, context.random ?? Math.random);
        enqueue.assign({ restarts });
        enqueue.raise({ type: 'RESTART' }, { id: 'restart', delay: Math.max(backoff, busyMs) });
        return;
      }
      // The budget is counted when an attempt is made (`count attempt`, `charge hurried attempt`).
      if (!context.fatal && hasRestartBudget(context.restarts, policy)) {
        enqueue.assign({ restarts: countDown(context.restarts) });
        // The first attempt waits initialMs.
        const delay = restartDelay(context.restarts.attempt, policy.backoff, context.random ?? Math.random);
        enqueue.raise({ type: 'RESTART' }, { id: 'restart', delay });
        return;
      }
      const error = context.lastError ?? 'connection lost';
      enqueue.raise({ type: 'GIVE_UP', reason: giveUpReason(error, context.fatal, policy), fatal: context.fatal });
    }),
    /** The backoff ended: the attempt is counted in the budget (not after a busy answer: no failure). */
    'count attempt': tellFacts<undefined>(({ context, enqueue }) => {
      const policy = context.restart;
      if (!policy || context.restarts.busyMs !== undefined) return;
      const restarts = countAttempt(context.restarts);
      enqueue.assign({ restarts });
      enqueue.raise({ type: 'RESTART_WINDOW_PASSED', epoch: restarts.epoch }, { delay: policy.withinMs });
    }),
    /** Requests waiting made the attempt early: it costs its share of the backoff it cut short. */
    'charge hurried attempt': tellFacts<undefined>(({ context, enqueue }) => {
      const policy = context.restart;
      if (!policy) return;
      const backoffMs = baseDelay(context.restarts.attempt, policy.backoff);
      const { record, counted } = chargeHurriedAttempt(context.restarts, context.waitingReconnectMs, backoffMs);
      enqueue.assign({ restarts: record });
      if (counted) enqueue.raise({ type: 'RESTART_WINDOW_PASSED', epoch: record.epoch }, { delay: policy.withinMs });
    }),
    /** Out of `reconnecting` by another way (RECONNECT, CLOSE, GIVE_UP): the pending restart is void. */
    'cancel restart': cancel('restart'),
    'forget one restart': assign(({ context }) => ({ restarts: forgetOneRestart(context.restarts) })),
    'reset restart budget': assign(({ context }) => ({ restarts: resetRestartBudget(context.restarts) })),
  },
  guards: {
    'should fall back to legacy SSE': ({ context }, params: { error: unknown }) => {
      const status = statusOf(params.error);
      return (
        context.configuredTransport === 'auto' &&
        context.latchedTransport === undefined &&
        status !== undefined &&
        FALLBACK_STATUSES.includes(status)
      );
    },
    'needs authorization': (_, params: { error: unknown }) => needsAuthorization(params.error),
    /**
     * No `server/discover` probe: legacy SSE (2024-11-05 only), a pinned legacy era, a latched one,
     * or (era `auto`, nothing latched yet) a fresh legacy verdict from the store.
     */
    'speaks legacy': ({ context }, params: TransportOpened) =>
      params.transport === 'sse' ||
      context.preferredEra === 'legacy' ||
      context.latchedEra === 'legacy' ||
      (context.preferredEra === 'auto' && context.latchedEra === undefined && params.storedEra === 'legacy'),
    'found modern server': (_, verdict: DiscoverVerdict) => verdict.era === 'modern',
    'era is modern': ({ context }) => context.latchedEra === 'modern',
    'has session': ({ context }) => context.session !== undefined,
    'found legacy endpoint': (_, params: SseFallbackOutput) => params.found,
    'is current session': ({ context }, params: { generation: number }) =>
      isCurrentSession(context.session, params.generation),
    'session is alive': (_, probe: ProbeVerdict) => probe.verdict === 'alive',
    'session is lost': (_, probe: ProbeVerdict) => probe.verdict === 'session lost',
    'probe was refused': (_, probe: ProbeVerdict) => probe.verdict === 'unauthorized',
    /** The last attempt found the server busy: it waits for the wait it asked for, whoever waits. */
    'server is busy': ({ context }) => context.restarts.busyMs !== undefined,
    /** No revival since the server failed (or since its last proven session). */
    'has not revived yet': ({ context }) => context.restarts.revivals === 0,
    'may revive': ({ context }) => context.revive !== false && !context.fatal,
    'is current window': ({ context }, passed: { epoch: number }) => context.restarts.epoch === passed.epoch,
    /** Over HTTP the server's request sockets are its origin's, so the origin's answers are its own (not stdio). */
    /** A mass start still has handshakes to make: the listening stream opens after them (ListenTurn). */
    'listening waits': ({ context }) => context.listenTurn?.holds() === true,
    'origin is shared': ({ context }) => context.transport !== undefined && context.transport !== 'stdio',
  },
  delays: {
    'listener open timeout': ({ context }) => context.listenerOpenTimeoutMs,
    'session proven delay': ({ context }) => context.provenAfterMs,
    'revive delay': ({ context }) =>
      context.revive === false ? 0 : reviveDelay(context.restarts.revivals, context.revive),
    'waiting reconnect delay': ({ context }) => context.waitingReconnectMs,
  },
});
