/**
 * Variable expansion in server entries, as the hosts define it: `${VAR}` and `${VAR:-default}`
 * (Claude Code), `${env:VAR}` (VS Code, Cursor), `${workspaceFolder}` and `${userHome}` (VS Code),
 * `${input:id}` (VS Code prompts: supplied through the `inputs` option). Expanded in `url`,
 * `headers`, `command`, `args`, `env` and `cwd`; `envFile` (VS Code) is read with Node's own
 * `util.parseEnv`. Values that came from the environment or from inputs are secrets: they ride
 * along with the entry (under a symbol) so every redaction point hides them.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from '../core/errors.js';

export interface InterpolationOptions {
  /** Where `${VAR}` and `${env:VAR}` are looked up (default: `process.env`). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Values for `${input:id}` (VS Code asks the user; here they are passed in). */
  inputs?: Readonly<Record<string, string>> | undefined;
  /** `${workspaceFolder}`; default: the folder holding `.vscode/` when the file is in one, else the working directory. */
  workspaceFolder?: string | undefined;
  /** The file the entries came from: named in errors, and relative `envFile` paths start from its folder. */
  file?: string | undefined;
}

/** Under this key an expanded entry carries the values that must be redacted wherever they appear. */
export const INTERPOLATED_SECRETS: unique symbol = Symbol('mcp-supervisor.interpolatedSecrets');

/** The fields whose strings are expanded (maps: their values; `args`: each element). */
const EXPANDED_FIELDS = ['url', 'serverUrl', 'httpUrl', 'command', 'cwd', 'headers', 'env', 'args'] as const;
const VARIABLE = /\$\{([^}]*)\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Context {
  server: string;
  options: InterpolationOptions;
  env: Readonly<Record<string, string | undefined>>;
  /** VS Code's top-level `inputs` declarations, for a better message. */
  declaredInputs: ReadonlyMap<string, string | undefined>;
  secrets: Set<string>;
}

function fail(context: Context, field: string, message: string): never {
  const path = `servers.${context.server}.${field}`;
  throw new ConfigError(`invalid configuration: ${path}: ${message}`, [{ path, message }]);
}

/** One `${…}`: its value, or a ConfigError naming the variable (never a value). */
function resolveVariable(context: Context, field: string, body: string): string {
  if (PRINCIPAL_VARIABLE.test(`\${${body}}`)) {
    if (field.startsWith('headers.') || field.startsWith('env.')) return `\${${body}}`; // per connection: expandPrincipal
    return fail(
      context,
      field,
      `\${${body}} is expanded in \`headers\` and \`env\` only (for each principal's connection)`,
    );
  }
  if (body === 'workspaceFolder') return workspaceFolder(context.options);
  if (body === 'userHome') return homedir();
  if (body.startsWith('env:')) return fromEnv(context, field, body.slice(4), undefined);
  if (body.startsWith('input:')) return fromInputs(context, field, body.slice(6));
  const fallback = /^([^:]+):-(.*)$/s.exec(body);
  if (fallback) return fromEnv(context, field, fallback[1]!, fallback[2]);
  if (NAME.test(body)) return fromEnv(context, field, body, undefined);
  return fail(
    context,
    field,
    `\${${body}} is not a variable this loader knows (it expands \${VAR}, \${VAR:-default}, \${env:VAR}, \${input:id}, \${workspaceFolder}, \${userHome})`,
  );
}

function fromEnv(context: Context, field: string, name: string, fallback: string | undefined): string {
  if (!NAME.test(name)) return fail(context, field, `\${${name}}: '${name}' is not a valid variable name`);
  const value = context.env[name];
  // Claude Code's `:-`: the default also replaces an empty value, as in the shell.
  if (value !== undefined && (fallback === undefined || value !== '')) {
    context.secrets.add(value);
    return value;
  }
  if (fallback !== undefined) return fallback;
  return fail(
    context,
    field,
    `the environment variable ${name} is not set (set it, or give a default: \${${name}:-value})`,
  );
}

function fromInputs(context: Context, field: string, id: string): string {
  const value = context.options.inputs?.[id];
  if (value !== undefined) {
    context.secrets.add(value);
    return value;
  }
  const description = context.declaredInputs.get(id);
  return fail(
    context,
    field,
    `\${input:${id}}${description ? ` ("${description}")` : ''} is a value VS Code prompts for; supply it with the \`inputs\` option (loadConfig(file, { inputs: { '${id}': value } })) or the CLI's --input ${id}=value, or write \${env:NAME} in the file and set NAME`,
  );
}

function workspaceFolder(options: InterpolationOptions): string {
  if (options.workspaceFolder !== undefined) return options.workspaceFolder;
  if (options.file !== undefined) {
    const folder = dirname(resolve(options.file));
    if (folder.endsWith('.vscode') || folder.endsWith('.cursor')) return dirname(folder);
  }
  return process.cwd();
}

/** A `${` with no `}` after it: an error, so the server never gets the literal text. The name is shown, cut short. */
const UNCLOSED = /\$\{[^}]{0,40}/;
const UNCLOSED_AT_END = /\$\{[^}]*$/;

function expandString(context: Context, field: string, text: string): string {
  const unclosed = UNCLOSED_AT_END.test(text) ? UNCLOSED.exec(text.slice(text.lastIndexOf('${'))) : null;
  if (unclosed)
    fail(context, field, `'${unclosed[0]}' has no closing '}' (write \${NAME}; nothing is sent as written)`);
  return text.replace(VARIABLE, (_, body: string) => resolveVariable(context, field, body));
}

function expandField(context: Context, field: string, value: unknown): unknown {
  if (typeof value === 'string') return expandString(context, field, value);
  if (Array.isArray(value))
    return (value as unknown[]).map((item, index) =>
      typeof item === 'string' ? expandString(context, `${field}.${index}`, item) : item,
    );
  if (typeof value === 'object' && value !== null) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      result[key] = typeof item === 'string' ? expandString(context, `${field}.${key}`, item) : item;
    return result;
  }
  return value;
}

/** `envFile`: KEY=value lines (dotenv syntax, through `util.parseEnv`); `env` wins over it. */
function readEnvFile(context: Context, value: unknown): Record<string, string> {
  if (typeof value !== 'string' || value === '') return fail(context, 'envFile', 'must be a path (a non-empty string)');
  const path = resolve(
    context.options.file ? dirname(resolve(context.options.file)) : process.cwd(),
    expandString(context, 'envFile', value),
  );
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    return fail(
      context,
      'envFile',
      `cannot read ${path}${code === 'ENOENT' ? ' (no such file)' : code ? ` (${code})` : ''}`,
    );
  }
  const parsed: Record<string, string> = {};
  for (const [key, secret] of Object.entries(parseEnv(text))) {
    if (secret === undefined) continue;
    parsed[key] = secret;
    if (secret !== '') context.secrets.add(secret);
  }
  return parsed;
}

/** The `inputs` declarations of a VS Code mcp.json: id → description. */
export function declaredInputs(json: unknown): Map<string, string | undefined> {
  const result = new Map<string, string | undefined>();
  const inputs = typeof json === 'object' && json !== null ? (json as { inputs?: unknown }).inputs : undefined;
  if (!Array.isArray(inputs)) return result;
  for (const input of inputs as { id?: unknown; description?: unknown }[]) {
    if (typeof input?.id === 'string')
      result.set(input.id, typeof input.description === 'string' ? input.description : undefined);
  }
  return result;
}

/**
 * The entry with every variable expanded and `envFile` merged into `env`. Entries that are not
 * objects are returned as they are (validation reports them).
 */
export function interpolateServer(
  server: string,
  entry: unknown,
  options: InterpolationOptions = {},
  inputs: ReadonlyMap<string, string | undefined> = new Map(),
): unknown {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  const context: Context = {
    server,
    options,
    env: options.env ?? process.env,
    declaredInputs: inputs,
    secrets: new Set(),
  };
  const result: Record<string | symbol, unknown> = { ...(entry as Record<string, unknown>) };
  for (const field of EXPANDED_FIELDS) {
    if (field in result) result[field] = expandField(context, field, result[field]);
  }
  if ('envFile' in result) {
    const fromFile = readEnvFile(context, result.envFile);
    const env = typeof result.env === 'object' && result.env !== null ? result.env : {};
    result.env = { ...fromFile, ...env };
    delete result.envFile;
  }
  if (context.secrets.size > 0) result[INTERPOLATED_SECRETS] = [...context.secrets];
  return result;
}

/** The secrets an expanded entry carries (none for entries written in code). */
export function interpolatedSecretsOf(entry: unknown): string[] {
  if (typeof entry !== 'object' || entry === null) return [];
  const secrets = (entry as { [INTERPOLATED_SECRETS]?: unknown })[INTERPOLATED_SECRETS];
  return Array.isArray(secrets) ? secrets.filter((s): s is string => typeof s === 'string') : [];
}

/** The first `${…}` left in an expandable field of an entry written in code: a likely mistake. */
export function unexpandedVariable(entry: Record<string, unknown>): { field: string; text: string } | undefined {
  for (const field of EXPANDED_FIELDS) {
    const value = entry[field];
    const strings: [string, unknown][] =
      typeof value === 'string'
        ? [[field, value]]
        : Array.isArray(value)
          ? value.map((item, index) => [`${field}.${index}`, item])
          : typeof value === 'object' && value !== null
            ? Object.entries(value).map(([key, item]) => [`${field}.${key}`, item])
            : [];
    for (const [path, text] of strings) {
      const match = typeof text === 'string' ? /\$\{(?!principal(?::[^}]*)?\})[^}]*(\}|$)/.exec(text) : null;
      if (match) return { field: path, text: match[0] };
    }
  }
  return undefined;
}

/** `${principal}` and `${principal:<field>}`: left by the loader, expanded for each principal's connection. */
const PRINCIPAL_VARIABLE = /\$\{principal(?::([^}]*))?\}/;
const PRINCIPAL_VARIABLES = new RegExp(PRINCIPAL_VARIABLE.source, 'g');

/** A header or env value naming the principal, if any: its path (such a server must be `perPrincipal`). */
export function principalVariable(entry: { headers?: unknown; env?: unknown }): string | undefined {
  for (const field of ['headers', 'env'] as const) {
    const values = entry[field];
    if (typeof values !== 'object' || values === null) continue;
    for (const [key, value] of Object.entries(values))
      if (typeof value === 'string' && PRINCIPAL_VARIABLE.test(value)) return `${field}.${key}`;
  }
  return undefined;
}

/**
 * Headers and env with `${principal}` (the id) and `${principal:<field>}` (a field of what the host
 * gave, `sup.as({ id, … })`) expanded; a field that is missing, or not a string or number, is a
 * ConfigError naming the server, the header and the field (never a value).
 */
export function expandPrincipalIn<T extends Record<string, string>>(
  values: T,
  principal: { readonly id: string; readonly [field: string]: unknown },
  path: string,
): T {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(values))
    result[key] = value.replace(PRINCIPAL_VARIABLES, (_, field: string | undefined) => {
      if (field === undefined) return principal.id;
      const found = principal[field];
      if (typeof found === 'string' || typeof found === 'number') return String(found);
      const at = `${path}.${key}`;
      throw new ConfigError(
        `invalid configuration: ${at}: \${principal:${field}}: the principal has no '${field}' (a string or number)`,
        [{ path: at, message: `the principal has no '${field}'` }],
      );
    });
  return result as T;
}
