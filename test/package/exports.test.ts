/**
 * The package's public face is a contract (DESIGN §2): code outside this repository imports these
 * names from `mcp-supervisor`, `mcp-supervisor/machines` and `mcp-supervisor/auth`. The package is
 * built afresh (once per run, shared: test/package/build.ts) into .package-test/ and imported by name, by Node's own resolution through the
 * `exports` map, in a child process; its types are checked with tsc against the built `.d.ts`.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { builtPackage } from './build.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Inside the repository, so the built files find node_modules by walking up. */
const PACKAGE = join(ROOT, '.package-test');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const ROOT_VALUES = {
  connect: 'function',
  createSupervisor: 'function',
  Supervisor: 'function',
  ServerHandle: 'function',
  fromMcpServersJson: 'function',
  loadConfig: 'function',
  parseConfigText: 'function',
  parseServerConfig: 'function',
  McpSupervisorError: 'function',
  McpError: 'function',
  TransportError: 'function',
  EndpointTimeoutError: 'function',
  ProtocolError: 'function',
  SessionExpiredError: 'function',
  ConnectionClosedError: 'function',
  SpawnError: 'function',
  RequestTimeoutError: 'function',
  RequestAbortedError: 'function',
  StreamEndedError: 'function',
  UnsupportedProtocolVersionError: 'function',
  QueueFullError: 'function',
  ServerBusyError: 'function',
  FallbackFailedError: 'function',
  AuthorizationRequiredError: 'function',
  AuthorizationError: 'function',
  ConfigError: 'function',
  isMcpSupervisorError: 'function',
  InvalidResultError: 'function',
  ToolOutputError: 'function',
  TaskHandle: 'function',
  TaskNotFoundError: 'function',
  TaskCancelledError: 'function',
  StoreUnavailableError: 'function',
  TASK_STATUSES: 'object',
  TASKS_EXTENSION: 'string',
  HeaderMismatchError: 'function',
  InvalidToolDefinitionError: 'function',
  LOGGING_LEVELS: 'object',
  SUPPORTED_PROTOCOL_VERSIONS: 'object',
  LATEST_PROTOCOL_VERSION: 'string',
  VERSION: 'string',
  createOAuthProvider: 'function',
  parseOAuthOptions: 'function',
  memoryTokenStore: 'function',
  fileTokenStore: 'function',
  createLoopbackRedirect: 'function',
  defaultOpenBrowser: 'function',
  isAuthProvider: 'function',
  silentLogger: 'object',
};

const MACHINES_VALUES = {
  connectionMachine: 'object',
  isEnded: 'function',
  listenerMachine: 'object',
  supervisorMachine: 'object',
  keepaliveMachine: 'object',
  sseFallbackMachine: 'object',
  DEFAULT_RESTART_POLICY: 'object',
  NEW_RESTART_RECORD: 'object',
  hasRestartBudget: 'function',
  restartDelay: 'function',
  DEFAULT_STREAM_RECONNECT_POLICY: 'object',
  streamReconnectDelay: 'function',
  mayReconnectStream: 'function',
};

const AUTH_VALUES = {
  createOAuthProvider: 'function',
  parseOAuthOptions: 'function',
  parseWwwAuthenticate: 'function',
  parseBearerChallenge: 'function',
  discover: 'function',
  protectedResourceMetadataUrls: 'function',
  authorizationServerMetadataUrls: 'function',
  canonicalResource: 'function',
  resourceCovers: 'function',
  createPkce: 'function',
  s256: 'function',
  assertS256Supported: 'function',
  signJwt: 'function',
  clientAssertion: 'function',
  SIGNING_ALGORITHMS: 'object',
  chooseAuthMethod: 'function',
  applyClientAuth: 'function',
  resolveClient: 'function',
  postTokenRequest: 'function',
  parseTokenResponse: 'function',
  requestTokens: 'function',
  selectScope: 'function',
  unionScopes: 'function',
  scopesCover: 'function',
  memoryTokenStore: 'function',
};

/** Every documented type, used once so tsc must resolve it from the built declarations. */
const TYPES_PROGRAM = `
import type {
  ConnectOptions, SupervisorOptions, SupervisorEvents, ServerStatus, ConnectionState, TransitionEvent,
  RequestOptions, RuntimeEvents, LogMessage, ClientHandlers, Handler, HandlerContext, ElicitationOptions,
  Progress, ServerConfig, ServerConfigInput, RestartPolicy, BackoffPolicy, KeepaliveConfig,
  StdioShutdownConfig, StdioStderrConfig, StderrForward, StderrListener, ErrorCode, CallToolResult,
  ListToolsResult, Tool, Implementation, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest,
  JsonRpcResponse, TransportKind, OAuthProvider, OAuthClientOptions, OAuthGrant, RedirectHandler,
  LoopbackRedirect, LoopbackRedirectOptions, AuthConfig, AuthProvider, AuthChallenge, AuthStatus,
  TokenStore, StoredAuthorization, OAuthTokens, OAuthClientInformation, TokenEndpointAuthMethod, Logger,
  ResourceUpdated, Root, RestoreReport, ResultIssue, LoggingLevel, CompletionReference, Resource, ResourceTemplate,
  ResourceContents, Prompt, ContentBlock, ListResourcesResult, ListResourceTemplatesResult, ReadResourceResult,
  ListPromptsResult, GetPromptResult, CompleteResult, EmptyResult,
  LoadConfigOptions, LoadedConfig, InterpolationOptions, ApplyResult, ConfigWarning, ParseOptions,
  BackpressureEvent, RateLimitConfig,
} from 'mcp-supervisor';
import type { ConnectionContext, ConnectionEvent, ConnectionInput, ConnectionReport, SessionInfo,
  ListenerContext, ListenerEvent, ListenerReport, SupervisorContext, SupervisorEvent, SupervisorInput,
  KeepaliveContext, KeepaliveInput, KeepaliveSettings, ProbeOutput, SseFallbackContext, SseFallbackInput,
  SseFallbackOutput } from 'mcp-supervisor/machines';
import type { OAuthProviderContext, Challenge, BearerChallenge, Discovery, ProtectedResourceMetadata,
  AuthorizationServerMetadata, Pkce, SigningAlgorithm, ClientCredentials, ResolvedClient } from 'mcp-supervisor/auth';
import { connect, type ServerHandle } from 'mcp-supervisor';
export type All = [ConnectOptions, SupervisorOptions, SupervisorEvents, ServerStatus, ConnectionState,
  TransitionEvent, RequestOptions, RuntimeEvents, LogMessage, ClientHandlers, Handler, HandlerContext,
  ElicitationOptions, Progress, ServerConfig, ServerConfigInput, RestartPolicy, BackoffPolicy, KeepaliveConfig,
  StdioShutdownConfig, StdioStderrConfig, StderrForward, StderrListener, ErrorCode, CallToolResult,
  ListToolsResult, Tool, Implementation, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse,
  TransportKind, OAuthProvider, OAuthClientOptions, OAuthGrant, RedirectHandler, LoopbackRedirect,
  LoopbackRedirectOptions, AuthConfig, AuthProvider, AuthChallenge, AuthStatus, TokenStore, StoredAuthorization,
  OAuthTokens, OAuthClientInformation, TokenEndpointAuthMethod, Logger, LoadConfigOptions, LoadedConfig,
  InterpolationOptions, ApplyResult, ConfigWarning, ParseOptions, BackpressureEvent, RateLimitConfig,
  ConnectionContext, ConnectionEvent,
  ConnectionInput, ConnectionReport, SessionInfo, ListenerContext, ListenerEvent, ListenerReport,
  SupervisorContext, SupervisorEvent, SupervisorInput, KeepaliveContext, KeepaliveInput, KeepaliveSettings,
  ProbeOutput, SseFallbackContext, SseFallbackInput, SseFallbackOutput, OAuthProviderContext, Challenge,
  BearerChallenge, Discovery, ProtectedResourceMetadata, AuthorizationServerMetadata, Pkce, SigningAlgorithm,
  ClientCredentials, ResolvedClient, ResourceUpdated, Root, RestoreReport, ResultIssue, LoggingLevel,
  CompletionReference, Resource, ResourceTemplate, ResourceContents, Prompt, ContentBlock, ListResourcesResult,
  ListResourceTemplatesResult, ReadResourceResult, ListPromptsResult, GetPromptResult, CompleteResult, EmptyResult];
export async function typed(): Promise<string> {
  const server: ServerHandle = await connect({ url: 'http://127.0.0.1:1/mcp' });
  const result: CallToolResult = await server.callTool('echo', { text: 'hi' }, { timeoutMs: 5000 });
  const resources: ListResourcesResult = await server.listResources();
  const prompt: GetPromptResult = await server.getPrompt('p', { a: 'b' });
  const off = server.on('resourceUpdated', (event: ResourceUpdated) => void event.uri);
  off();
  await server.subscribeResource('memo://x');
  await server.setLoggingLevel('warning');
  await server.setRoots([{ uri: 'file:///work' }]);
  await server.ping();
  return JSON.stringify([result, resources, prompt]) + server.status().state;
}
`;

beforeAll(async () => {
  rmSync(PACKAGE, { recursive: true, force: true });
  mkdirSync(PACKAGE, { recursive: true });
  cpSync(join(await builtPackage(), 'dist'), join(PACKAGE, 'dist'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(PACKAGE, 'package.json'), JSON.stringify(manifest));
}, 120_000);

/** What a consumer's `import * as m from '<specifier>'` sees: each export's typeof. */
async function exportsOf(specifier: string): Promise<Record<string, string>> {
  const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]))));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: PACKAGE });
  return JSON.parse(stdout) as Record<string, string>;
}

describe('the built package', () => {
  it.each([
    ['mcp-supervisor', ROOT_VALUES],
    ['mcp-supervisor/machines', MACHINES_VALUES],
    ['mcp-supervisor/auth', AUTH_VALUES],
  ])('%s exports every documented name', async (specifier, expected) => {
    const actual = await exportsOf(specifier);
    expect(Object.fromEntries(Object.keys(expected).map((name) => [name, actual[name]]))).toEqual(expected);
  });

  it('the bin is the CLI and its types resolve through the exports map', async () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const { stdout } = await run(process.execPath, [join(PACKAGE, manifest.bin['mcp-supervisor']!), '--help']);
    expect(stdout).toMatch(/^mcp-supervisor \d+\.\d+\.\d+/);
    writeFileSync(join(PACKAGE, 'consumer.ts'), TYPES_PROGRAM);
    const options = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
    const checked = await run(
      process.execPath,
      [TSC, ...options, '--target', 'es2022', '--types', 'node', 'consumer.ts'],
      {
        cwd: PACKAGE,
      },
    ).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout ?? error.message,
    );
    expect(checked).toBe('');
    // tsc over the whole declaration tree: slow on a busy machine.
  }, 180_000);
});
