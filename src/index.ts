/**
 * mcp-supervisor: supervised, self-healing MCP client connections.
 */
export { connect, type ConnectOptions } from './connect.js';
export {
  createSupervisor,
  Supervisor,
  type SupervisorOptions,
  type SupervisorEvents,
} from './supervisor/supervisor.js';
/** `sup.as(principal)`: one supervisor, many users (docs/principals.md). */
export {
  PrincipalView,
  type Principal,
  type PrincipalInfo,
  type PrincipalCredentials,
  type CredentialResolver,
  type PrincipalOptions,
} from './supervisor/principals.js';
export { ServerHandle, type ServerStatus } from './handle/server-handle.js';
/** `sup.dashboard()`: a local web page of every server (docs/operations.md). */
export type { Dashboard, DashboardOptions } from './dashboard/dashboard.js';
/** `sup.on('call')`: a request settled. */
export type { CallEvent } from './observe/calls.js';
export type { ServerHandshake } from './handle/handshake.js';
export { TaskHandle } from './tasks/task-handle.js';
export type { TaskClient } from './tasks/task-client.js';
export type { TaskCallOptions } from './tasks/tool-call.js';
export { TASK_STATUSES, type TaskInfo, type TaskStatus } from './tasks/schemas.js';
export { TASKS_EXTENSION } from './protocol/task-capabilities.js';
export { TaskNotFoundError, TaskCancelledError } from './tasks/errors.js';
export type { TaskReference } from './runtime/stored/stored-state.js';
export { ToolCatalog, type ToolServer, type ToolServers } from './catalog/catalog.js';
export type { CatalogOptions, ServerToolOptions, ToolPattern } from './catalog/options.js';
export type {
  CatalogTool,
  CatalogSnapshot,
  CatalogChange,
  CatalogEvents,
  MissingServer,
  RejectedCatalogTool,
} from './catalog/types.js';
export { TOOL_NAME_PATTERN } from './catalog/tool-names.js';
export type {
  ConnectionState,
  TransitionEvent,
  RequestOptions,
  RuntimeEvents,
  LogMessage,
  ResourceUpdated,
  BackpressureEvent,
} from './runtime/context/events.js';
export type { Root, RestoreReport } from './runtime/context/session-state.js';
export { InvalidResultError, ToolOutputError, type ResultIssue } from './protocol/result-errors.js';
export { HeaderMismatchError, InvalidToolDefinitionError } from './protocol/tool-header-errors.js';
export type { RejectedTool } from './runtime/requests/tool-headers.js';
export {
  LOGGING_LEVELS,
  type LoggingLevel,
  type CompletionReference,
  type Resource,
  type ResourceTemplate,
  type ResourceContents,
  type Prompt,
  type ContentBlock,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type ListPromptsResult,
  type GetPromptResult,
  type CompleteResult,
  type EmptyResult,
} from './protocol/results.js';
export type {
  ClientHandlers,
  Handler,
  HandlerContext,
  ElicitationOptions,
  SamplingOptions,
} from './runtime/server-input/server-requests.js';
export type { Progress } from './protocol/pending.js';
export {
  fromMcpServersJson,
  loadConfig,
  parseConfigText,
  type LoadConfigOptions,
  type LoadedConfig,
} from './config/load.js';
export type { InterpolationOptions } from './config/interpolate.js';
export type { ApplyResult } from './config/diff.js';
export {
  parseServerConfig,
  type ConfigWarning,
  type ParseOptions,
  type ServerConfig,
  type ServerConfigInput,
  type RestartPolicy,
  type BackoffPolicy,
  type KeepaliveConfig,
  type StdioShutdownConfig,
  type StdioStderrConfig,
  type RateLimitConfig,
  type StderrForward,
  type StderrListener,
} from './config/server-config.js';
export {
  McpSupervisorError,
  McpError,
  TransportError,
  EndpointTimeoutError,
  ProtocolError,
  SessionExpiredError,
  OutcomeUnknownError,
  ConnectionClosedError,
  SpawnError,
  RequestTimeoutError,
  RequestAbortedError,
  StreamEndedError,
  UnsupportedProtocolVersionError,
  QueueFullError,
  FallbackFailedError,
  AuthorizationRequiredError,
  AuthorizationError,
  ConfigError,
  UnknownToolError,
  ToolResultError,
  isMcpSupervisorError,
  type ErrorCode,
} from './core/errors.js';
export { InputRoundsExceededError, InputRequestError } from './runtime/requests/input-errors.js';
export { StoreCorruptError, StoreFencedError, StoreUnavailableError } from './store/errors.js';
export { ServerBusyError } from './core/retry-after.js';
export { EndpointNotFoundError } from './runtime/session/wrong-path.js';
export { UrlElicitationRequiredError, type UrlElicitation } from './protocol/rpc-errors.js';
export {
  ToolCallDeniedError,
  type ToolCall,
  type ToolCallChanges,
  type ToolCallInterceptor,
  type NextToolCall,
} from './tools/interceptors.js';
export {
  SUPPORTED_PROTOCOL_VERSIONS,
  LATEST_PROTOCOL_VERSION,
  type ClientCapabilities,
  type CallToolResult,
  type ListToolsResult,
  type Tool,
  type Implementation,
} from './protocol/messages.js';
export type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from './protocol/jsonrpc.js';
export type { TransportKind } from './transports/transport.js';
export { VERSION } from './core/version.js';
// Authorization: the built-in OAuth 2.1 client, token stores, a loopback redirect for CLIs.
// The OAuth building blocks (discovery, PKCE, JWT, …) are in `mcp-supervisor/auth`.
export {
  createOAuthProvider,
  parseOAuthOptions,
  type OAuthProvider,
  type OAuthClientOptions,
  type OAuthGrant,
  type RedirectHandler,
} from './auth/index.js';
export { memoryTokenStore, fileTokenStore } from './auth/token-store.js';
export {
  memoryStore,
  fileStore,
  type FileStoreOptions,
  type Store,
  type StoreEntry,
  type StoreFence,
  type StoreLease,
  type StoreLockOptions,
  type StoreSetOptions,
  type StoreSetResult,
} from './store/index.js';
export {
  createLoopbackRedirect,
  defaultOpenBrowser,
  type LoopbackRedirect,
  type LoopbackRedirectOptions,
} from './auth/loopback-redirect.js';
export { isAuthProvider, type AuthConfig } from './auth/resolve-provider.js';
export type {
  AuthProvider,
  AuthChallenge,
  AuthStatus,
  TokenStore,
  StoredAuthorization,
  OAuthTokens,
  OAuthClientInformation,
  TokenEndpointAuthMethod,
} from './auth/types.js';
export { silentLogger, type Logger } from './observe/logger.js';
/** Experimental while SEP-3415 (`io.modelcontextprotocol/events`) is a draft: docs/events.md. */
export { Subscription, type SubscriptionStatus, type EventOccurrence } from './events/subscription.js';
export {
  ServerEvents,
  type EventDescriptor,
  type SubscribeOptions,
  type ResumeOptions,
  type SubscriptionMode,
} from './events/server-events.js';
export { EventsClient } from './events/events-client.js';
export {
  createWebhookReceiver,
  WebhookReceiver,
  signWebhook,
  verifyWebhook,
  type WebhookReceiverOptions,
} from './events/webhook-receiver.js';
