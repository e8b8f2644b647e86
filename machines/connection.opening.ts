/**
 * Opening a connection: the transport (and, for an `auto` server Streamable HTTP refused, the
 * legacy HTTP+SSE fallback), the era (`server/discover`), and the legacy `initialize` handshake.
 */
import { announce, because, becauseActorFailed, becauseOf } from './connection.facts.js';
import {
  authorizeAfterRefusal,
  rememberActorError,
  rememberLostConnection,
  sessionInitialized,
} from './connection.failures.js';
import { connectionSetup } from './connection.setup.js';
import { failureOf } from './connection.types.js';

export const connecting = connectionSetup.createStateConfig({
  entry: ['hold requests', announce('connecting')],
  initial: 'opening transport',
  states: {
    'opening transport': {
      invoke: {
        id: 'transport',
        src: 'connect transport',
        input: ({ context }) => ({
          server: context.server,
          transport: context.latchedTransport ?? context.configuredTransport,
        }),
        onDone: [
          {
            guard: { type: 'speaks legacy', params: ({ event }) => event.output },
            target: '#connection.initializing',
            actions: [{ type: 'remember transport', params: ({ event }) => event.output }, because('transport ready')],
          },
          {
            target: '#connection.discovering',
            actions: [{ type: 'remember transport', params: ({ event }) => event.output }, because('transport ready')],
          },
        ],
        onError: [
          // A legacy SSE stream can be refused with 401 when it opens.
          authorizeAfterRefusal,
          {
            target: '#connection.reconnecting',
            actions: [rememberActorError, becauseActorFailed('transport failed')],
          },
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
          {
            guard: { type: 'found legacy endpoint', params: ({ event }) => event.output },
            target: 'opening transport',
            actions: 'latch legacy SSE',
          },
          {
            target: '#connection.reconnecting',
            actions: [
              {
                type: 'remember error',
                params: ({ event }) =>
                  event.output.found
                    ? { error: undefined, fatal: false }
                    : { error: event.output.error, fatal: event.output.fatal === true },
              },
              {
                type: 'note cause',
                params: ({ event }) => ({
                  cause: 'legacy SSE probe failed',
                  error: event.output.found ? undefined : event.output.error,
                }),
              },
            ],
          },
        ],
      },
    },
  },
});

// One `server/discover`: a modern server is ready at once; anything else is a legacy server.
export const discovering = connectionSetup.createStateConfig({
  entry: announce('discovering'),
  invoke: {
    id: 'discover',
    src: 'discover server',
    input: ({ context }) => ({ server: context.server }),
    onDone: [
      {
        guard: { type: 'found modern server', params: ({ event }) => event.output },
        target: 'ready',
        actions: [
          { type: 'remember discovery', params: ({ event }) => event.output },
          'tell session started',
          because('discovered (modern server)'),
        ],
      },
      { target: 'initializing', actions: because('legacy server: initializing') },
    ],
    onError: [
      authorizeAfterRefusal,
      {
        target: 'reconnecting',
        actions: [rememberActorError, 'forget era', becauseActorFailed('discover failed')],
      },
    ],
  },
  on: {
    CONNECTION_LOST: {
      target: 'reconnecting',
      actions: [rememberLostConnection, 'forget era', becauseOf('connection lost')],
    },
  },
});

export const initializing = connectionSetup.createStateConfig({
  entry: announce('initializing'),
  invoke: {
    id: 'handshake',
    src: 'initialize session',
    input: ({ context }) => ({ server: context.server }),
    onDone: sessionInitialized,
    onError: [
      authorizeAfterRefusal,
      {
        guard: { type: 'should fall back to legacy SSE', params: ({ event }) => ({ error: event.error }) },
        target: 'connecting.falling back',
        actions: [
          rememberActorError,
          {
            type: 'tell',
            params: ({ event }) => ({ type: 'fell back to legacy SSE', error: failureOf(event.error).error }),
          },
          becauseActorFailed('Streamable HTTP refused; falling back to legacy SSE'),
        ],
      },
      {
        target: 'reconnecting',
        actions: [rememberActorError, 'forget era', becauseActorFailed('handshake failed')],
      },
    ],
  },
  // The transport can die mid-handshake (a legacy SSE stream, a stdio child).
  on: {
    CONNECTION_LOST: { target: 'reconnecting', actions: [rememberLostConnection, becauseOf('connection lost')] },
  },
});
