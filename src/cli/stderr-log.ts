/**
 * The operators' log of `serve` on stderr: one line per event (every upstream transition, every
 * host-session event), as text or as JSON (`--log-format json`, one object per line, for a log
 * shipper). The fields come from the runtime and the gateway, which never put a secret in them
 * (errors redacted at their source, session ids as digests).
 */
import type { Logger } from '../observe/logger.js';

export type LogFormat = 'text' | 'json';

export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

export function stderrLogger(format: LogFormat, write: (line: string) => void): Logger {
  const entry =
    (level: keyof Logger) =>
    (fields: Record<string, unknown>, message?: string): void => {
      const time = new Date().toISOString();
      if (format === 'json') return write(`${JSON.stringify({ time, level, msg: message, ...fields })}\n`);
      write(`${time} ${level.padEnd(5)} ${message ?? JSON.stringify(fields)}\n`);
    };
  return { debug: entry('debug'), info: entry('info'), warn: entry('warn'), error: entry('error') };
}
