/**
 * Structured logging. Any pino-compatible logger works (`logger.info(fields, message)`); the
 * default is silent. Every entry carries `event` and `server`; none carries a secret (transition
 * errors are already redacted at their source).
 */
import type { ConnectionFact, FactOf } from '../../machines/connection.facts.js';

type LogFn = (fields: Record<string, unknown>, message?: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const noop: LogFn = () => {};
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/** The transition a log entry is about (the public TransitionEvent). */
export interface LoggedTransition {
  server: string;
  from: string | null;
  to: string;
  cause: string;
  error?: string | undefined;
}

interface Entry {
  level: keyof Logger;
  event: string;
  message: (server: string, transition: LoggedTransition, restarts: number) => string;
  restarts?: true;
}

/** The entry each of the machine's lifecycle facts gets; a move with none of them is a debug `transition`. */
export const LOG_ENTRIES = {
  // Every new session, at info: after an outage the line that says the server is back.
  'session started': (fact) => ({
    level: 'info',
    event: 'ready',
    restarts: true,
    message: (server) =>
      `${server}: ready (${fact.era}, ${fact.protocolVersion}${fact.transport ? ` over ${fact.transport}` : ''})`,
  }),
  'fell back to legacy SSE': () => ({
    level: 'warn',
    event: 'fallback',
    message: (server) => `${server}: Streamable HTTP refused, trying legacy SSE`,
  }),
  restarted: () => ({
    level: 'info',
    event: 'restart',
    restarts: true,
    message: (server, _, restarts) => `${server}: restart ${restarts}`,
  }),
  'connection down': () => ({
    level: 'warn',
    event: 'connection down',
    message: (server) => `${server}: connection down, retrying with backoff`,
  }),
  'session ended': (fact) =>
    fact.reason === 'expired'
      ? { level: 'info', event: 'session expired', message: (server) => `${server}: session expired, re-initializing` }
      : undefined,
  'gave up': () => ({
    level: 'error',
    event: 'failed',
    message: (server, { error }) => `${server}: failed${error ? `: ${error}` : ''}`,
  }),
} satisfies { [K in ConnectionFact['type']]?: (fact: FactOf<K>) => Entry | undefined };

function entryOf(fact: ConnectionFact): Entry | undefined {
  const entry = (LOG_ENTRIES as Record<string, ((fact: ConnectionFact) => Entry | undefined) | undefined>)[fact.type];
  return entry?.(fact);
}

/**
 * One entry per move, named for what it means (`ready`, `fallback`, `restart`, `connection down`,
 * `session expired`, `failed`), else a plain debug `transition`.
 */
export function logMove(
  logger: Logger,
  transition: LoggedTransition,
  facts: readonly ConnectionFact[],
  restarts: number,
): void {
  const { server, from, to, cause, error } = transition;
  const fields = { server, from, to, cause, ...(error ? { error } : {}) };
  for (const fact of facts) {
    const entry = entryOf(fact);
    if (!entry) continue;
    logger[entry.level](
      { event: entry.event, ...(entry.restarts ? { restarts } : {}), ...fields },
      entry.message(server, transition, restarts),
    );
    return;
  }
  logger.debug({ event: 'transition', ...fields }, `${server}: ${from ?? '(start)'} -> ${to}`);
}
