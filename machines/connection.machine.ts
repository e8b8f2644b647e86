/**
 * One MCP server's connection lifecycle:
 *
 *   connecting -> initializing -> ready -> expired -> reinitializing -> ready
 *        \------------\-------------\---------------------\-> authorizing -> ready | connecting
 *                                   \-> reconnecting -> (supervisor: RESTART) -> connecting
 *                                                   \-> (supervisor: GIVE_UP) -> failed
 *   any -> closing -> closed
 *
 * The machine owns the lifecycle only. Requests never pass through it: while `ready.serving`
 * the facade calls the transport directly; in every other state it holds them. The restart
 * policy lives with the supervisor, which answers CONNECTION_DOWN with RESTART or GIVE_UP.
 *
 * `authorizing`: the server answered 401 (or 403 `insufficient_scope`) and an auth provider is
 * configured. One authorization runs for however many requests were refused; afterwards a live
 * session goes back to `ready` (the refused requests are resent), otherwise the handshake reruns.
 *
 * Children: `sse-fallback` (in `connecting`, for `type: 'auto'` servers that refuse the
 * Streamable HTTP initialize with 400/404/405), `listener` and `keepalive` (in `ready`).
 */
import type { KeepaliveSettings } from './keepalive.machine.js';
import type { SseFallbackOutput } from './sse-fallback.machine.js';
import { assign, sendParent, setup, type ActorLogic, type ActorSystem, type AnyEventObject, type PromiseActorLogic } from 'xstate';

export type TransportKind = 'http' | 'sse' | 'stdio';
export type ConfiguredTransport = 'auto' | TransportKind;

export interface ConnectionInput {
  server: string;
  transport: ConfiguredTransport;
  /** Bound on waiting for the listener before requests are released. */
  listenerOpenTimeoutMs: number;
  /** How long `ready` must last before the supervisor may reset the restart budget. */
  provenAfterMs: number;
  keepalive: KeepaliveSettings | false;
}

/** Statuses on the Streamable HTTP initialize that send an `auto` server to legacy SSE (spec: 400, 404, 405). */
const FALLBACK_STATUSES = [400, 404, 405];

export interface SessionInfo {
  protocolVersion: string;
  serverInfo: { name: string; version: string; [key: string]: unknown };
  capabilities: Record<string, unknown>;
  instructions?: string | undefined;
  /** Which session this is; a 404 for an older one must not end this one. */
  sessionGeneration: number;
}

export interface ConnectionContext {
  server: string;
  configuredTransport: ConfiguredTransport;
  /** The transport in use. */
  transport: TransportKind | undefined;
  /** Decided for good: by the first successful handshake, or by a fallback. */
  latchedTransport: TransportKind | undefined;
  keepalive: KeepaliveSettings | false;
  session: SessionInfo | undefined;
  listenerOpenTimeoutMs: number;
  provenAfterMs: number;
  lastError: string | undefined;
  /** The last failure was one a restart cannot fix (e.g. unsupported protocol version). */
  fatal: boolean;
}

export type ConnectionEvent =
  /** A request carrying the session id was answered 404. */
  | { type: 'SESSION_EXPIRED'; generation: number }
  /** The transport died (network failure, child exit, keepalive misses); `fatal` when a restart cannot help. */
  | { type: 'CONNECTION_LOST'; error: string; fatal?: boolean }
  /** A request was refused for want of credentials (401, or 403 `insufficient_scope`) and an auth provider can fix it. */
  | { type: 'AUTHORIZATION_REQUIRED'; error: string }
  | { type: 'LISTENER_SETTLED' }
  | { type: 'LISTENER_LOST'; error: string }
  | { type: 'RESTART' }
  /** `fatal`: no restart was tried, the failure is one a restart cannot fix. */
  | { type: 'GIVE_UP'; reason: string; fatal?: boolean }
  | { type: 'CLOSE' };

/** What the connection tells its supervisor. */
export type ConnectionReport =
  | { type: 'CONNECTION_DOWN'; server: string; error: string; fatal: boolean }
  | { type: 'CONNECTION_PROVEN'; server: string };

export interface ServerRef {
  server: string;
}

export interface ConnectTransportInput extends ServerRef {
  /** What to open: `auto` means Streamable HTTP first. */
  transport: ConfiguredTransport;
}

interface ActorError {
  error: unknown;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Errors marked `fatal` (an unsupported protocol version, a command that cannot start) skip restarts. */
function isFatal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { fatal?: unknown }).fatal === true;
}

/** A refusal an auth provider can fix: a 401/403 challenge that is not marked fatal (no provider configured). */
function needsAuthorization(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'AUTHORIZATION_REQUIRED' && !isFatal(error);
}

/** The top-level state of a snapshot value: `{ ready: 'serving' }` → `'ready'`. */
export function topLevelState(value: unknown): string {
  return typeof value === 'string' ? value : Object.keys(value as object)[0]!;
}

/** A short, secret-free reason for a transition, from the event that caused it. */
export function describeCause(event: AnyEventObject, value?: unknown): string {
  // The same handshake failure either falls back or goes down: the state entered tells which.
  if (typeof value === 'object' && value !== null && (value as Record<string, unknown>).connecting === 'falling back') {
    return 'Streamable HTTP refused; falling back to legacy SSE';
  }
  if (value === 'authorizing' && event.type.startsWith('xstate.error.actor.')) return 'authorization required';
  switch (event.type) {
    case 'xstate.init':
      return 'start';
    case 'xstate.done.actor.transport':
      return 'transport ready';
    case 'xstate.done.actor.handshake':
      return 'initialized';
    case 'xstate.done.actor.authorize':
      return 'authorized';
    case 'AUTHORIZATION_REQUIRED':
      return 'authorization required';
    case 'xstate.done.actor.close':
      return 'closed';
    case 'xstate.done.actor.sse-fallback':
      return (event as unknown as { output?: { found?: boolean } }).output?.found ? 'legacy SSE endpoint found' : 'legacy SSE probe failed';
    case 'SESSION_EXPIRED':
      return 'session expired (HTTP 404)';
    case 'CONNECTION_LOST':
      return 'connection lost';
    case 'LISTENER_LOST':
      return 'listening stream lost';
    case 'RESTART':
      return 'restart';
    case 'GIVE_UP':
      return (event as { fatal?: boolean }).fatal ? 'a restart cannot fix it' : 'restart budget spent';
    case 'CLOSE':
      return 'close requested';
    default:
      if (event.type.startsWith('xstate.error.actor.')) return `${event.type.slice('xstate.error.actor.'.length)} failed`;
      return event.type;
  }
}

/** The error text an event carries (actor errors, GIVE_UP reasons, a failed fallback), if any. */
export function eventError(event: AnyEventObject): string | undefined {
  if (event.type === 'xstate.done.actor.sse-fallback') return (event as unknown as { output?: { error?: string } }).output?.error;
  if ('error' in event) return errorText((event as unknown as ActorError).error);
  if (event.type === 'GIVE_UP') return (event as unknown as { reason: string }).reason;
  return undefined;
}

export const connectionMachine = setup({
  types: {
    input: {} as ConnectionInput,
    context: {} as ConnectionContext,
    events: {} as ConnectionEvent,
  },
  actors: {
    'connect transport': {} as PromiseActorLogic<{ transport: TransportKind }, ConnectTransportInput>,
    'sse-fallback': {} as ActorLogic<any, any, { server: string; reason: string }, ActorSystem<any>>,
    'initialize session': {} as PromiseActorLogic<SessionInfo, ServerRef>,
    'close session': {} as PromiseActorLogic<void, ServerRef>,
    authorize: {} as PromiseActorLogic<void, ServerRef>,
    listener: {} as ActorLogic<any, any, ServerRef, ActorSystem<any>>,
    keepalive: {} as ActorLogic<any, any, { server: string; settings: KeepaliveSettings | false }, ActorSystem<any>>,
  },
  actions: {
    'remember transport': assign({ transport: ({ event }) => (event as unknown as { output: { transport: TransportKind } }).output.transport }),
    'remember session': assign({
      session: ({ event }) => (event as unknown as { output: SessionInfo }).output,
      latchedTransport: ({ context }) => context.latchedTransport ?? context.transport,
      lastError: undefined,
      fatal: false,
    }),
    'latch legacy SSE': assign({ latchedTransport: 'sse' }),
    'remember fallback failure': assign({
      lastError: ({ event }) => (event as unknown as { output: SseFallbackOutput & { found: false } }).output.error,
    }),
    'remember error': assign({
      lastError: ({ event }) => eventError(event),
      fatal: ({ event }) => {
        if (event.type === 'CONNECTION_LOST') return event.fatal === true;
        return 'error' in event ? isFatal((event as ActorError).error) : false;
      },
    }),
    'forget session': assign({ session: undefined }),
    'report connection down': sendParent(({ context }) => ({
      type: 'CONNECTION_DOWN' as const,
      server: context.server,
      error: context.lastError ?? 'connection lost',
      fatal: context.fatal,
    }) satisfies ConnectionReport),
    'report session proven': sendParent(({ context }) => ({ type: 'CONNECTION_PROVEN' as const, server: context.server }) satisfies ConnectionReport),
  },
  guards: {
    'should fall back to legacy SSE': ({ context, event }) => {
      const status = (event as unknown as { error?: { status?: unknown } }).error?.status;
      return context.configuredTransport === 'auto' && context.latchedTransport === undefined && FALLBACK_STATUSES.includes(status as number);
    },
    'needs authorization': ({ event }) => needsAuthorization((event as unknown as Partial<ActorError>).error),
    'has session': ({ context }) => context.session !== undefined,
    'found legacy endpoint': ({ event }) => (event as unknown as { output: SseFallbackOutput }).output.found,
    'is current session': ({ context, event }) =>
      event.type === 'SESSION_EXPIRED' && context.session !== undefined && event.generation === context.session.sessionGeneration,
  },
  delays: {
    'listener open timeout': ({ context }) => context.listenerOpenTimeoutMs,
    'session proven delay': ({ context }) => context.provenAfterMs,
  },
}).createMachine({
  id: 'connection',
  context: ({ input }) => ({
    server: input.server,
    configuredTransport: input.transport,
    transport: undefined,
    latchedTransport: undefined,
    keepalive: input.keepalive,
    session: undefined,
    listenerOpenTimeoutMs: input.listenerOpenTimeoutMs,
    provenAfterMs: input.provenAfterMs,
    lastError: undefined,
    fatal: false,
  }),
  initial: 'connecting',
  on: {
    CLOSE: '.closing',
  },
  states: {
    connecting: {
      initial: 'opening transport',
      states: {
        'opening transport': {
          invoke: {
            id: 'transport',
            src: 'connect transport',
            input: ({ context }) => ({ server: context.server, transport: context.latchedTransport ?? context.configuredTransport }),
            onDone: { target: '#connection.initializing', actions: 'remember transport' },
            onError: [
              // A legacy SSE stream can be refused with 401 when it opens.
              { guard: 'needs authorization', target: '#connection.authorizing', actions: 'remember error' },
              { target: '#connection.reconnecting', actions: 'remember error' },
            ],
          },
        },
        // Streamable HTTP was refused: try the legacy HTTP+SSE transport once, and latch it if it answers.
        'falling back': {
          invoke: {
            id: 'sse-fallback',
            src: 'sse-fallback',
            input: ({ context }) => ({ server: context.server, reason: context.lastError ?? 'refused' }),
            onDone: [
              { guard: 'found legacy endpoint', target: 'opening transport', actions: 'latch legacy SSE' },
              { target: '#connection.reconnecting', actions: 'remember fallback failure' },
            ],
          },
        },
      },
    },
    initializing: {
      invoke: {
        id: 'handshake',
        src: 'initialize session',
        input: ({ context }) => ({ server: context.server }),
        onDone: { target: 'ready', actions: 'remember session' },
        onError: [
          { guard: 'needs authorization', target: 'authorizing', actions: 'remember error' },
          { guard: 'should fall back to legacy SSE', target: 'connecting.falling back', actions: 'remember error' },
          { target: 'reconnecting', actions: 'remember error' },
        ],
      },
      // The transport can die mid-handshake (a legacy SSE stream, a stdio child).
      on: { CONNECTION_LOST: { target: 'reconnecting', actions: 'remember error' } },
    },
    ready: {
      invoke: [
        { id: 'listener', src: 'listener', input: ({ context }) => ({ server: context.server }) },
        { id: 'keepalive', src: 'keepalive', input: ({ context }) => ({ server: context.server, settings: context.keepalive }) },
      ],
      initial: 'opening listener',
      states: {
        // Server-to-client requests are dropped by servers with no open stream, so requests
        // wait (bounded) until the listener opened or turned out to be unavailable.
        'opening listener': {
          on: { LISTENER_SETTLED: 'serving' },
          after: { 'listener open timeout': 'serving' },
        },
        serving: {},
      },
      after: { 'session proven delay': { actions: 'report session proven' } },
      on: {
        SESSION_EXPIRED: { guard: 'is current session', target: 'expired' },
        AUTHORIZATION_REQUIRED: { target: 'authorizing', actions: 'remember error' },
        CONNECTION_LOST: { target: 'reconnecting', actions: 'remember error' },
        LISTENER_LOST: { target: 'reconnecting', actions: 'remember error' },
      },
    },
    expired: {
      // The 404 proved the session is gone: forget it, then one coalesced handshake.
      entry: 'forget session',
      always: 'reinitializing',
    },
    reinitializing: {
      invoke: {
        id: 'handshake',
        src: 'initialize session',
        input: ({ context }) => ({ server: context.server }),
        onDone: { target: 'ready', actions: 'remember session' },
        onError: [
          { guard: 'needs authorization', target: 'authorizing', actions: 'remember error' },
          { target: 'reconnecting', actions: 'remember error' },
        ],
      },
      on: { CONNECTION_LOST: { target: 'reconnecting', actions: 'remember error' } },
    },
    authorizing: {
      // One authorization for every refused request; requests are held meanwhile.
      invoke: {
        id: 'authorize',
        src: 'authorize',
        input: ({ context }) => ({ server: context.server }),
        onDone: [
          { guard: 'has session', target: 'ready' },
          { target: 'connecting' },
        ],
        onError: { target: 'reconnecting', actions: 'remember error' },
      },
      on: { CONNECTION_LOST: { target: 'reconnecting', actions: 'remember error' } },
    },
    reconnecting: {
      entry: ['forget session', 'report connection down'],
      on: {
        RESTART: 'connecting',
        GIVE_UP: { target: 'failed', actions: assign({ lastError: ({ context, event }) => context.lastError ?? event.reason }) },
      },
    },
    /** The restart budget is spent (or the failure cannot be fixed by a restart). */
    failed: {},
    closing: {
      invoke: {
        id: 'close',
        src: 'close session',
        input: ({ context }) => ({ server: context.server }),
        onDone: 'closed',
        onError: 'closed',
      },
      on: { CLOSE: {} },
    },
    closed: {
      type: 'final',
    },
  },
});
