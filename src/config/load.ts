/**
 * Config files as the hosts write them: the `mcpServers` map (Claude Desktop, Claude Code,
 * Cursor) or VS Code's `servers` (JSONC, with `inputs`). Each entry is expanded (`${VAR}`, …),
 * then validated; every problem of every server is reported at once, naming the file, the
 * server and the field, and nothing is returned half-checked.
 */
import { readFile } from 'node:fs/promises';
import { parseServerConfig, type ConfigWarning, type ServerConfigInput } from './server-config.js';
import { ConfigError } from '../core/errors.js';
import { WARNINGS_REPORTED } from './fields.js';
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
  warnings: ConfigWarning[];
}

/** The servers map of a parsed config file, expanded and validated. */
export function readServers(json: unknown, options: LoadConfigOptions = {}): LoadedConfig {
  const record = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  const map = record.mcpServers ?? record.servers;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw inFile(
      options.file,
      new ConfigError('invalid configuration: expected an object with an `mcpServers` (or `servers`) map', [
        { path: 'mcpServers', message: 'missing' },
      ]),
    );
  const inputs = declaredInputs(json);
  const servers: Record<string, ServerConfigInput> = {};
  const warnings: ConfigWarning[] = [];
  const issues: { path: string; message: string }[] = [];
  const entries = Object.entries(map);
  if (entries.length === 0) issues.push({ path: 'servers', message: 'at least one server is needed' });
  for (const [name, entry] of entries) {
    try {
      const expanded = interpolateServer(name, entry, options, inputs);
      parseServerConfig(name, expanded, {
        strict: options.strict,
        onWarning: (warning) => {
          warnings.push(warning);
          options.onWarning?.(warning);
        },
      });
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
  return { file: options.file, servers, warnings };
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
