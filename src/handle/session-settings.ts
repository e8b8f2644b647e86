/**
 * What the application sets for every session of a server: the log threshold (`setLoggingLevel`)
 * and the roots it offers (`setRoots`). Each is checked, applied to the session that runs, and
 * kept in the session state, which re-establishes it on every later session (runtime/context/session-state.ts).
 */
import { ConfigError } from '../core/errors.js';
import { EmptyResultSchema, LOGGING_LEVELS, parseResult, type LoggingLevel } from '../protocol/results.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { Root, SessionState } from '../runtime/context/session-state.js';
import type { Era } from '../../machines/connection.types.js';

/** What the settings ask of their server: its runtime, as its port (runtime/server-port.ts) shows it. */
export interface SettingsHost {
  readonly context: {
    readonly name: string;
    readonly sessionState: SessionState;
    readonly gate: { readonly phase: string };
    session(): { era: Era } | undefined;
  };
  /** The current session was given the `roots` capability. */
  advertisesRoots(): boolean;
  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown>;
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
}

/** Modern era: nothing is sent, every later request carries the level (runtime/requests/modern-logging.ts). */
export async function setLoggingLevel(
  host: SettingsHost,
  level: LoggingLevel,
  options?: RequestOptions,
): Promise<void> {
  if (!(LOGGING_LEVELS as readonly unknown[]).includes(level)) {
    throw new ConfigError(`invalid logging level '${String(level)}': must be one of ${LOGGING_LEVELS.join(', ')}`, [
      { path: 'level', message: `must be one of ${LOGGING_LEVELS.join(', ')}` },
    ]);
  }
  const raw = await host.request('logging/setLevel', { level }, options);
  parseResult(EmptyResultSchema, 'logging/setLevel', raw, host.context.name);
  host.context.sessionState.levelSet(level);
}

/**
 * The roots answer `roots/list` from now on; the server is told with
 * `notifications/roots/list_changed` now, or on the next session if the connection is down.
 */
export async function setRoots(host: SettingsHost, roots: readonly Root[]): Promise<void> {
  const issues = roots.flatMap((root, index) =>
    typeof root?.uri === 'string' && root.uri.startsWith('file://')
      ? []
      : [{ path: `roots[${index}].uri`, message: 'must be a file:// URI' }],
  );
  if (issues.length > 0)
    throw new ConfigError(`invalid roots: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  const session = host.context.session();
  if (session && host.context.sessionState.roots === undefined && !host.advertisesRoots()) {
    throw new ConfigError(
      `[${host.context.name}] roots were not advertised on this session: give \`handlers.roots\`, or call setRoots before the server starts`,
      [{ path: 'handlers.roots', message: 'needed to change roots on a running session' }],
    );
  }
  const serving = host.context.gate.phase === 'open' && session !== undefined;
  host.context.sessionState.rootsSet(roots, serving);
  // 2026-07-28 removed the notification: a modern server asks for the roots when it needs them (`roots/list` input).
  if (serving && session.era !== 'modern') await host.notify('notifications/roots/list_changed');
}
