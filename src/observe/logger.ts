/**
 * Structured logging. Any pino-compatible logger works (`logger.info(fields, message)`); the
 * default is silent. Every entry carries `event` and `server`; none carries a secret (transition
 * errors are already redacted at their source).
 */
import type { TransitionEvent } from '../runtime/events.js';

type LogFn = (fields: Record<string, unknown>, message?: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const noop: LogFn = () => {};
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/**
 * One entry per lifecycle change, named for what it means: `fallback`, `restart`,
 * `connection down`, `session expired`, `failed`, or plain `transition`.
 */
export function logTransition(logger: Logger, event: TransitionEvent, restarts: number): void {
  const { server, from, to, cause, error } = event;
  const fields = { server, from, to, cause, ...(error ? { error } : {}) };
  if (to === 'connecting' && from === 'initializing') {
    logger.warn({ event: 'fallback', ...fields }, `${server}: Streamable HTTP refused, trying legacy SSE`);
  } else if (to === 'connecting' && from === 'reconnecting') {
    logger.info({ event: 'restart', restarts, ...fields }, `${server}: restart ${restarts}`);
  } else if (to === 'reconnecting') {
    logger.warn({ event: 'connection down', ...fields }, `${server}: connection down, retrying with backoff`);
  } else if (to === 'expired') {
    logger.info({ event: 'session expired', ...fields }, `${server}: session expired, re-initializing`);
  } else if (to === 'failed') {
    logger.error({ event: 'failed', ...fields }, `${server}: failed${error ? `: ${error}` : ''}`);
  } else {
    logger.debug({ event: 'transition', ...fields }, `${server}: ${from ?? '(start)'} -> ${to}`);
  }
}
