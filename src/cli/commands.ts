/**
 * The one-shot commands: `status`, `tools`, `call`, `logout`. Each starts a supervisor, waits until its
 * servers are ready or down once, prints JSON on stdout, stops, and returns the exit code.
 */
import { createOAuthProvider } from '../auth/oauth-provider.js';
import { isAuthProvider } from '../auth/resolve-provider.js';
import type { OAuthClientOptions } from '../auth/options.js';
import { describeError, isMcpSupervisorError, McpError } from '../core/errors.js';
import type { ServerHandle } from '../handle/server-handle.js';
import { createSupervisor, type Supervisor } from '../supervisor/supervisor.js';
import { VERSION } from '../core/version.js';
import { UsageError, type ServerMap } from './load-config.js';
import type { Progress } from '../protocol/pending.js';
import { toolsTable } from './tools-table.js';
import { checkServers } from './doctor/run-doctor.js';
import type { Store } from '../store/types.js';

export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

const CLIENT_INFO = { name: 'mcp-supervisor-cli', version: VERSION };

function printJson(io: CommandIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Every server's status() as JSON; exit 1 unless all are ready (disabled ones aside). */
export async function runStatus(servers: ServerMap, io: CommandIo, store?: Store): Promise<number> {
  const sup = createSupervisor({ servers, clientInfo: CLIENT_INFO, store });
  try {
    await sup.start();
    const status = sup.status();
    printJson(io, status);
    return Object.values(status).every((s) => s.state === 'ready' || s.state === 'disabled') ? 0 : 1;
  } finally {
    await sup.stop();
  }
}

/**
 * `[server] rest…`: the first word names a server when it is one; with a single server
 * configured it may be left out.
 */
function splitServer(servers: ServerMap, words: readonly string[], usage: string): { server: string; rest: string[] } {
  const names = Object.keys(servers);
  const [first, ...rest] = words;
  if (first !== undefined && Object.hasOwn(servers, first)) return { server: first, rest };
  if (names.length === 1) return { server: names[0]!, rest: [...words] };
  if (first === undefined) throw new UsageError(`${usage}: which server? (configured: ${names.join(', ')})`);
  throw new UsageError(`${usage}: unknown server '${first}' (configured: ${names.join(', ')})`);
}

/** Runs `work` on one ready server of `servers`; prints why when it is not ready. */
async function withServer(
  servers: ServerMap,
  name: string,
  io: CommandIo,
  store: Store | undefined,
  work: (handle: ServerHandle) => Promise<number>,
): Promise<number> {
  const sup: Supervisor = createSupervisor({ servers: { [name]: servers[name]! }, clientInfo: CLIENT_INFO, store });
  try {
    await sup.start();
    const handle = sup.server(name);
    const status = handle.status();
    if (status.state !== 'ready') {
      io.err(`mcp-supervisor: server '${name}' is ${status.state}${status.lastError ? `: ${status.lastError}` : ''}\n`);
      return 1;
    }
    return await work(handle);
  } catch (error) {
    io.err(`mcp-supervisor: ${describeRequestError(error)}\n`);
    return 1;
  } finally {
    await sup.stop();
  }
}

function describeRequestError(error: unknown): string {
  if (error instanceof McpError) return error.message;
  if (isMcpSupervisorError(error)) return `${error.name}: ${error.message}`;
  return describeError(error);
}

/** `tools [server]`: a table of the server's tools; `json`: the tools/list result as JSON. */
export async function runTools(
  servers: ServerMap,
  words: readonly string[],
  timeoutMs: number,
  io: CommandIo,
  json = false,
  store?: Store,
): Promise<number> {
  const { server, rest } = splitServer(servers, words, 'tools [server]');
  if (rest.length > 0) throw new UsageError(`tools [server]: unexpected '${rest.join(' ')}'`);
  return withServer(servers, server, io, store, async (handle) => {
    const result = await handle.listTools({ timeoutMs });
    if (json) printJson(io, result);
    else for (const line of toolsTable(result.tools)) io.out(`${line}\n`);
    return 0;
  });
}

/**
 * `call [server] <tool> [json]`: prints the CallToolResult; exit 1 when it is an error result.
 * Progress notifications go to stderr as they come (each one also restarts the timeout).
 */
export async function runCall(
  servers: ServerMap,
  words: readonly string[],
  timeoutMs: number,
  io: CommandIo,
  store?: Store,
): Promise<number> {
  const usage = 'call [server] <tool> [json-arguments]';
  const { server, rest } = splitServer(servers, words, usage);
  const [tool, json, ...extra] = rest;
  if (tool === undefined) throw new UsageError(`${usage}: which tool?`);
  if (extra.length > 0)
    throw new UsageError(`${usage}: unexpected '${extra.join(' ')}' (quote the JSON arguments as one word)`);
  const args = parseToolArguments(json);
  return withServer(servers, server, io, store, async (handle) => {
    const result = await handle.callTool(tool, args, {
      timeoutMs,
      resetTimeoutOnProgress: true,
      onprogress: (progress) => io.err(`${formatProgress(tool, progress)}\n`),
    });
    printJson(io, result);
    return result.isError === true ? 1 : 0;
  });
}

/**
 * `logout [server]`: revokes the server's OAuth tokens where the authorization server offers
 * revocation (RFC 7009) and removes them from the store and the token file either way. No connection is made.
 */
export async function runLogout(
  servers: ServerMap,
  words: readonly string[],
  io: CommandIo,
  store?: Store,
): Promise<number> {
  const { server, rest } = splitServer(servers, words, 'logout [server]');
  if (rest.length > 0) throw new UsageError(`logout [server]: unexpected '${rest.join(' ')}'`);
  const config = servers[server]!;
  const auth = 'auth' in config ? config.auth : undefined;
  if (!('url' in config) || auth === undefined || isAuthProvider(auth))
    throw new UsageError(`logout: server '${server}' does not use the built-in OAuth client (no "auth" options)`);
  const provider = createOAuthProvider(auth as OAuthClientOptions, {
    resourceUrl: new URL(String(config.url)),
    server,
    store,
  });
  const { revoked, error } = await provider.revoke();
  printJson(io, {
    server,
    revoked,
    forgotten: true,
    ...(error ? { revocationError: describeRequestError(error) } : {}),
  });
  return 0;
}

/** `progress echo: 3/10 (30%) copying files` */
export function formatProgress(tool: string, progress: Progress): string {
  const { progress: done, total, message } = progress;
  const amount =
    total !== undefined && total > 0 ? `${done}/${total} (${Math.round((done / total) * 100)}%)` : String(done);
  const replayed = progress.replayed ? ' (replayed: the call was sent again after a recovery)' : '';
  return `progress ${tool}: ${amount}${message ? ` ${message}` : ''}${replayed}`;
}

function parseToolArguments(json: string | undefined): Record<string, unknown> {
  if (json === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new UsageError(`the tool arguments are not valid JSON: ${describeError(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError('the tool arguments must be a JSON object, e.g. \'{"text":"hi"}\'');
  return value as Record<string, unknown>;
}

/** `doctor [server]`: every server, or the one named, checked step by step (doctor/). */
export async function runDoctor(
  servers: ServerMap,
  words: readonly string[],
  timeoutMs: number,
  io: CommandIo,
  store?: Store,
): Promise<number> {
  const [name, ...extra] = words;
  if (extra.length > 0) throw new UsageError(`doctor [server]: unexpected '${extra.join(' ')}'`);
  if (name !== undefined && !Object.hasOwn(servers, name))
    throw new UsageError(`doctor: unknown server '${name}' (configured: ${Object.keys(servers).join(', ')})`);
  return checkServers(name === undefined ? servers : { [name]: servers[name]! }, {
    timeoutMs,
    out: (text) => io.out(text),
    store,
  });
}
