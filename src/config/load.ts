/**
 * Config files as the hosts write them: the `mcpServers` map (Claude Desktop, Claude Code,
 * Cursor) or VS Code's `servers` (JSONC, with `inputs`). Each entry is expanded (`${VAR}`, …),
 * then validated; every problem of every server is reported at once, naming the file, the
 * server and the field, and nothing is returned half-checked.
 */
import { readFile } from 'node:fs/promises';
import { parseServerConfig, type ConfigWarning, type ServerConfigInput } from './server-config.js';
import { ConfigError } from '../core/errors.js';
import { closest } from '../core/did-you-mean.js';
import { WARNINGS_REPORTED } from './fields.js';
import { withHostUrl } from './host-urls.js';
import { declaredInputs, interpolateServer, type InterpolationOptions } from './interpolate.js';
import { JsonSyntaxError, parseJsonText } from './json-text.js';

export interface LoadConfigOptions extends InterpolationOptions {
  /** Unknown fields and unsupported host fields are errors, not warnings (default false). */
  strict?: boolean | undefined;
  /** Called with each warning as well as returned in `warnings`. */
  onWarning?: ((warning: ConfigWarning) => void) | undefined;
}

export interface LoadedConfig {
  /** The file read (absent for `fromMcpServersJson`). */
  file: string | undefined;
  /** Expanded and validated entries, ready for `createSupervisor({ servers })` or `sup.apply(config)`. */
  servers: Record<string, ServerConfigInput>;
  /**
   * Likely mistakes (unknown fields and top-level keys). `createSupervisor(config)` and
   * `sup.apply(config)` report them (onWarning, else the logger, else process.emitWarning) unless
   * `loadConfig` was given its own `onWarning`.
   */
  warnings: ConfigWarning[];
}

/** Set on a LoadedConfig whose warnings went to the loader's `onWarning` already. */
export const WARNINGS_DELIVERED: unique symbol = Symbol('mcp-supervisor.warningsDelivered');

/** The warnings a config passed to createSupervisor / apply still has to report (a LoadedConfig's, once). */
export function undeliveredWarnings(config: object): readonly ConfigWarning[] {
  const { warnings } = config as { warnings?: unknown };
  if (!Array.isArray(warnings) || (config as { [WARNINGS_DELIVERED]?: unknown })[WARNINGS_DELIVERED] === true)
    return [];
  return warnings as ConfigWarning[];
}

/** Top-level keys of the files this loader reads, and `gateway` (read by `mcp-supervisor serve`); others are reported (a typo of these is the usual cause). */
const TOP_LEVEL_KEYS = ['mcpServers', 'servers', 'inputs', '$schema', 'gateway'];

/**
 * The host's own settings in the same file, ignored without a word: Claude Desktop's
 * claude_desktop_config.json keeps its app settings beside `mcpServers`.
 */
const HOST_TOP_LEVEL_KEYS = new Set([
  'globalShortcut',
  'preferences',
  'features',
  'claudeAiUrl',
  'isUsingBuiltInNodeForMcp',
  'isDxtAutoUpdatesEnabled',
  'dxtMaxTotalSizeMB',
  'isHardwareAccelerationDisabled',
  'isHardwareAccelerationAutoDisabled',
  'isHardwareAccelerationAutoDisableNoticePending',
  'isCoworkSdkDebuggingEnabled',
  'coworkUserFilesPath',
  'coworkUserFilesPathUncRedirectedFrom',
  'deploymentMode',
  'awaitingSignIn',
  'managedConfig',
  'lastRemoteBootstrapPartial',
  'lastRemoteBootstrapHost',
  'lastRemoteDisableEssentialTelemetry',
  'lastRemoteDisableEssentialTelemetryHost',
]);

function topLevelWarnings(record: Record<string, unknown>, file: string | undefined): ConfigWarning[] {
  return Object.keys(record)
    .filter((key) => !TOP_LEVEL_KEYS.includes(key) && !HOST_TOP_LEVEL_KEYS.has(key))
    .map((key) => {
      const meant = closest(key, TOP_LEVEL_KEYS);
      const message = meant
        ? `unknown top-level key (did you mean \`${meant}\`?)`
        : 'unknown top-level key (ignored: this loader reads `mcpServers`, `servers` and `inputs`)';
      return { path: key, message, file };
    });
}

/** A near miss of the servers map (`mcpServrs`) among the top-level keys, said as a hint: `; \`mcpServrs\` looks like …`. */
function nearMissHint(record: Record<string, unknown>): string {
  const maps = ['mcpServers', 'servers'];
  const nearMiss = Object.keys(record).find((key) => !maps.includes(key) && closest(key, maps) !== undefined);
  return nearMiss ? `; \`${nearMiss}\` looks like a typo of \`${closest(nearMiss, maps)}\`` : '';
}

/** The servers map of a parsed config file, expanded and validated. */
export function readServers(json: unknown, options: LoadConfigOptions = {}): LoadedConfig {
  const record = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  const map = record.mcpServers ?? record.servers;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw inFile(
      options.file,
      new ConfigError(
        `invalid configuration: expected an object with an \`mcpServers\` (or \`servers\`) map${nearMissHint(record)}`,
        [{ path: 'mcpServers', message: `missing${nearMissHint(record)}` }],
      ),
    );
  const inputs = declaredInputs(json);
  const servers: Record<string, ServerConfigInput> = {};
  const warnings: ConfigWarning[] = [];
  const issues: { path: string; message: string }[] = [];
  const report = (warning: ConfigWarning) => {
    const located = { ...warning, file: options.file };
    warnings.push(located);
    options.onWarning?.(located);
  };
  const topLevel = topLevelWarnings(record, options.file);
  if (options.strict) issues.push(...topLevel.map(({ path, message }) => ({ path, message })));
  else topLevel.forEach(report);
  const entries = Object.entries(map);
  if (entries.length === 0)
    issues.push({ path: 'servers', message: `at least one server is needed${nearMissHint(record)}` });
  for (const [name, entry] of entries) {
    try {
      const expanded = interpolateServer(name, withHostUrl(name, entry), options, inputs);
      parseServerConfig(name, expanded, { strict: options.strict, onWarning: report });
      servers[name] = Object.assign(expanded as ServerConfigInput, { [WARNINGS_REPORTED]: true });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...(error.issues.length ? error.issues : [{ path: `servers.${name}`, message: error.message }]));
    }
  }
  if (issues.length > 0)
    throw inFile(
      options.file,
      new ConfigError(`invalid configuration: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues),
    );
  const loaded: LoadedConfig = { file: options.file, servers, warnings };
  // Enumerable, so `{ ...config, logger }` keeps it.
  if (options.onWarning) Object.assign(loaded, { [WARNINGS_DELIVERED]: true });
  return loaded;
}

/**
 * Reads the `mcpServers` JSON format (Claude Desktop, Claude Code, Cursor) and VS Code's `servers`
 * key; expands variables; returns the servers map, ready for `createSupervisor({ servers })`.
 */
export function fromMcpServersJson(json: unknown, options: LoadConfigOptions = {}): Record<string, ServerConfigInput> {
  return readServers(json, options).servers;
}

/** The same error, its message and `file` naming the file. */
function inFile(file: string | undefined, error: ConfigError): ConfigError {
  if (file === undefined) return error;
  const message = error.message.replace(/^invalid configuration( \(strict\))?: /, `invalid configuration$1: ${file}: `);
  return new ConfigError(message, error.issues, file);
}

/** Parses config file text (JSON or JSONC); a syntax error names the line and column. */
export function parseConfigText(text: string, options: LoadConfigOptions = {}): LoadedConfig {
  let json: unknown;
  try {
    json = parseJsonText(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    const message = `invalid JSON at line ${error.line}, column ${error.column}: ${error.reason}`;
    throw inFile(options.file, new ConfigError(`invalid configuration: ${message}`, [{ path: '', message }]));
  }
  return readServers(json, options);
}

/**
 * Reads a config file: `const sup = createSupervisor(await loadConfig('mcp.json'))`, and later
 * `await sup.apply(await loadConfig('mcp.json'))` to follow its changes.
 */
export async function loadConfig(file: string, options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = `cannot read the config file${code === 'ENOENT' ? ' (no such file)' : code ? ` (${code})` : ''}`;
    throw new ConfigError(`invalid configuration: ${file}: ${message}`, [{ path: '', message }], file);
  }
  return parseConfigText(text, { ...options, file });
}
