/**
 * Where the CLI's servers come from: `--config` files in the `mcpServers` JSON format (Claude
 * Desktop, Cursor; VS Code's `servers` with comments), or one server from `--url` / `--command`.
 * Every error names the file and the line and column, or the field path.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { RedirectHandler } from '../auth/options.js';
import { isAuthProvider, type AuthConfig } from '../auth/resolve-provider.js';
import type { ServerConfigInput } from '../config/server-config.js';
import { parseConfigText } from '../config/load.js';
import { ConfigError } from '../core/errors.js';
import { createSupervisor } from '../supervisor/supervisor.js';

/** A mistake in what the user typed or wrote: printed as is, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type ServerMap = Record<string, ServerConfigInput>;

export interface ServerSources {
  configs: readonly string[];
  url?: string | undefined;
  command?: string | undefined;
  args: readonly string[];
  name?: string | undefined;
  headers: readonly string[];
  type?: string | undefined;
  /** `--oauth`: the `--url` server uses the built-in OAuth client. */
  oauth?: boolean | undefined;
  /** `--strict`: unknown fields in a config file are errors. */
  strict?: boolean | undefined;
  /** Values for `${input:id}` (`--input id=value`, or asked on a terminal). */
  inputs?: Readonly<Record<string, string>> | undefined;
  /** Where warnings about the files go (one line each, the file named); default stderr. */
  warn?: ((line: string) => void) | undefined;
}

/** Reads one `mcpServers` / `servers` JSON (or JSONC) file: expanded, checked, warnings reported. */
function readConfigFile(file: string, sources: ServerSources): ServerMap {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(
      `${file}: cannot read the config file${code === 'ENOENT' ? ' (no such file)' : code ? ` (${code})` : ''}`,
    );
  }
  const warn = sources.warn ?? ((line: string) => void process.stderr.write(`mcp-supervisor: warning: ${line}\n`));
  try {
    return parseConfigText(text, {
      file,
      strict: sources.strict,
      inputs: sources.inputs,
      onWarning: (warning) => warn(`${file}: ${warning.path}: ${warning.message}`),
    }).servers;
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`${file}: ${describeConfigError(error)}`);
    throw error;
  }
}

/** `servers.docs.url: must be an http:// or https:// URL; servers.x.command: …` */
export function describeConfigError(error: ConfigError): string {
  if (error.issues.length === 0) return error.message.replace(/^invalid configuration: /, '');
  return error.issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
}

/** Every server from the files, then the one from `--url` / `--command`. Names must be unique. */
export function loadServers(sources: ServerSources): ServerMap {
  const servers: ServerMap = {};
  const origin = new Map<string, string>();
  const add = (name: string, config: ServerConfigInput, from: string) => {
    const earlier = origin.get(name);
    if (earlier !== undefined) throw new UsageError(`server '${name}' is defined twice: in ${earlier} and in ${from}`);
    assertRunnable(name, config, from);
    origin.set(name, from);
    servers[name] = config;
  };
  for (const file of sources.configs) {
    for (const [name, config] of Object.entries(readConfigFile(file, sources))) add(name, config, file);
  }
  const single = singleServer(sources);
  if (single) add(single.name, single.config, single.from);
  return servers;
}

/** What createSupervisor would refuse (a transport this build lacks, say), with the file named. */
function assertRunnable(name: string, config: ServerConfigInput, from: string): void {
  try {
    createSupervisor({ servers: { [name]: withBrowserStep(config) }, onWarning: () => {} });
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(`${from}: ${describeConfigError(error)}`);
    throw error;
  }
}

/**
 * The authorization_code grant needs `redirectUri` and `onRedirect`, which the CLI supplies later
 * (prepareAuth, once the servers are known); stand-ins let the rest of the options be checked now.
 */
function withBrowserStep(config: ServerConfigInput): ServerConfigInput {
  const auth = ('auth' in config ? config.auth : undefined) as AuthConfig | undefined;
  if (auth === undefined || isAuthProvider(auth) || (auth.grant ?? 'authorization_code') !== 'authorization_code')
    return config;
  const onRedirect: RedirectHandler = () => Promise.reject(new Error('not called: a stand-in for the check'));
  return {
    ...config,
    auth: {
      ...auth,
      redirectUri: auth.redirectUri ?? 'http://127.0.0.1/callback',
      onRedirect: auth.onRedirect ?? onRedirect,
    },
  };
}

function singleServer(sources: ServerSources): { name: string; config: ServerConfigInput; from: string } | undefined {
  const { url, command } = sources;
  if (url !== undefined && command !== undefined)
    throw new UsageError('--url and --command cannot be combined: one names an HTTP server, the other a stdio server');
  if (url === undefined && command === undefined) {
    if (sources.args.length > 0) throw new UsageError('--arg (or arguments after --) needs --command');
    if (sources.headers.length > 0) throw new UsageError('--header needs --url');
    if (sources.name !== undefined) throw new UsageError('--name needs --url or --command');
    if (sources.oauth) throw new UsageError('--oauth needs --url (in a config file, give the server "auth": {…})');
    return undefined;
  }
  const type = sources.type === undefined ? {} : { type: sources.type };
  if (url !== undefined) {
    if (sources.args.length > 0) throw new UsageError('--arg (or arguments after --) needs --command, not --url');
    const headers = Object.fromEntries(sources.headers.map(parseHeader));
    const auth = sources.oauth ? { auth: {} } : {};
    return {
      name: sources.name ?? defaultUrlName(url),
      config: { url, headers, ...type, ...auth } as ServerConfigInput,
      from: '--url',
    };
  }
  if (sources.headers.length > 0) throw new UsageError('--header needs --url, not --command');
  if (sources.oauth)
    throw new UsageError(
      '--oauth needs --url, not --command: a stdio server gets its credentials from its environment',
    );
  const name = sources.name ?? (basename(command!).replace(/\.(c|m)?js$/, '') || 'server');
  return {
    name,
    config: { command: command!, args: [...sources.args], ...type } as ServerConfigInput,
    from: '--command',
  };
}

function defaultUrlName(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'server';
  }
}

/** `Authorization: Bearer x` or `Authorization=Bearer x`. */
function parseHeader(text: string): [string, string] {
  const match = /^\s*([^:=\s]+)\s*[:=]\s*(.*)$/.exec(text);
  if (!match) throw new UsageError(`--header '${text}': expected 'Name: value'`);
  return [match[1]!, match[2]!.trim()];
}
