/**
 * Where config warnings go, the same for entries written in code and for a loaded file:
 * `onWarning`, else the logger's `warn` (event `config warning`), else `process.emitWarning`.
 */
import { undeliveredWarnings } from './load.js';
import { emitConfigWarning, formatConfigWarning, type ConfigWarning, type ParseOptions } from './server-config.js';

interface WarnLogger {
  warn(fields: Record<string, unknown>, message?: string): void;
}

export interface WarningRoute {
  strict?: boolean | undefined;
  onWarning?: ((warning: ConfigWarning) => void) | undefined;
  logger?: WarnLogger | undefined;
}

/**
 * Parse options for `route`; first reports the warnings `config` carries and nobody has seen
 * (a `loadConfig()` result handed to createSupervisor or apply).
 */
export function routeWarnings(route: WarningRoute, config: object = {}): ParseOptions {
  const { strict, onWarning, logger } = route;
  const sink =
    onWarning ??
    (logger
      ? (warning: ConfigWarning) =>
          logger.warn(
            { event: 'config warning', path: warning.path, ...(warning.file ? { file: warning.file } : {}) },
            formatConfigWarning(warning),
          )
      : undefined);
  for (const warning of undeliveredWarnings(config)) (sink ?? emitConfigWarning)(warning);
  return { strict, onWarning: sink };
}
