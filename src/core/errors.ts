/**
 * Typed errors. Every request settles with a result or one of these; each names the server
 * and says whether retrying the same request could succeed. Messages never carry session ids
 * or authorization headers.
 */

import { describeError } from '../../machines/describe-error.js';

export type ErrorCode =
  | 'MCP_ERROR'
  | 'TRANSPORT_ERROR'
  | 'PROTOCOL_ERROR'
  | 'SESSION_EXPIRED'
  | 'CONNECTION_CLOSED'
  | 'REQUEST_TIMEOUT'
  | 'REQUEST_ABORTED'
  | 'STREAM_ENDED'
  | 'UNSUPPORTED_PROTOCOL_VERSION'
  | 'QUEUE_FULL'
  | 'FALLBACK_FAILED'
  | 'ENDPOINT_NOT_FOUND'
  | 'CONFIG_ERROR'
  | 'AUTHORIZATION_REQUIRED'
  | 'AUTHORIZATION_FAILED'
  | 'OUTCOME_UNKNOWN'
  | 'UNKNOWN_TOOL'
  | 'TOOL_ERROR'
  | 'TOOL_CALL_DENIED'
  | 'INPUT_ROUNDS_EXCEEDED'
  | 'INPUT_REQUEST_FAILED'
  | 'URL_ELICITATION_REQUIRED'
  | 'TASK_CANCELLED'
  | 'STORE_CORRUPT'
  | 'STORE_FENCED'
  | 'STORE_UNAVAILABLE';

export interface ErrorDetails {
  server?: string | undefined;
  cause?: unknown;
}

export abstract class McpSupervisorError extends Error {
  abstract readonly code: ErrorCode;
  /** True when sending the same request again may succeed. */
  abstract readonly retryable: boolean;
  /** True when restarting the connection cannot help either: the server goes straight to `failed`. */
  readonly fatal: boolean = false;
  server: string | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(
      details.server ? `[${details.server}] ${message}` : message,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = new.target.name;
    this.server = details.server;
  }
}

/** The server answered with a JSON-RPC error object. */
export class McpError extends McpSupervisorError {
  readonly code: 'MCP_ERROR' | 'URL_ELICITATION_REQUIRED' = 'MCP_ERROR';
  readonly retryable: boolean = false;
  constructor(
    readonly rpcCode: number,
    readonly rpcMessage: string,
    readonly data?: unknown,
    details?: ErrorDetails,
  ) {
    super(`MCP error ${rpcCode}: ${rpcMessage}`, details);
  }
}

/** The HTTP exchange failed: a non-2xx status, or a network failure (status undefined). */
export class TransportError extends McpSupervisorError {
  readonly code: 'TRANSPORT_ERROR' | 'AUTHORIZATION_REQUIRED' | 'ENDPOINT_NOT_FOUND' = 'TRANSPORT_ERROR';
  readonly retryable: boolean;
  constructor(
    message: string,
    readonly status?: number,
    details?: ErrorDetails & { body?: string | undefined; sessionGeneration?: number | undefined },
  ) {
    super(message, details);
    this.body = details?.body;
    this.sessionGeneration = details?.sessionGeneration;
    this.retryable = status === undefined || status >= 500 || status === 429;
  }
  /** The (redacted) detail of the error body, when there was one. */
  readonly body: string | undefined;
  /** The session (by generation, never by id) the refused request carried, if it carried one. */
  readonly sessionGeneration: number | undefined;
}

/** A legacy HTTP+SSE stream opened but sent no `endpoint` event in time (a TransportError without status). */
export class EndpointTimeoutError extends TransportError {
  constructor(
    readonly timeoutMs: number,
    details?: ErrorDetails,
  ) {
    super(
      `the SSE stream sent no endpoint event within ${timeoutMs} ms (is this a legacy HTTP+SSE server?)`,
      undefined,
      details,
    );
  }
}

/** The peer sent something that is not valid MCP: malformed JSON, wrong content type, oversize. */
export class ProtocolError extends McpSupervisorError {
  readonly code = 'PROTOCOL_ERROR' as const;
  readonly retryable = false;
}

/**
 * The server no longer knows the session: a 404 answered a request that carried the session id,
 * or a 400 whose body says the session is missing, invalid or unknown (what servers built like
 * the official SDK's examples answer after a restart).
 */
export class SessionExpiredError extends McpSupervisorError {
  readonly code = 'SESSION_EXPIRED' as const;
  readonly retryable = true;
  constructor(
    message: string,
    /** Which session (by generation number, never by id) the refusal belongs to. */
    readonly sessionGeneration: number,
    details?: ErrorDetails & { evidence?: string },
  ) {
    super(message, details);
    this.evidence = details?.evidence ?? 'HTTP 404';
  }
  /** What proved it, in a few words: `HTTP 404`, `HTTP 400 naming the session`. */
  readonly evidence: string;
}

/**
 * The connection broke after the request was sent and before its answer came: the server may or
 * may not have processed it. Not replayed, because repeating it is not known to be safe (a tool
 * without `readOnlyHint` or `idempotentHint`, or `retry: 'never'`); the caller decides.
 */
export class OutcomeUnknownError extends McpSupervisorError {
  readonly code = 'OUTCOME_UNKNOWN' as const;
  readonly retryable = true;
  constructor(
    readonly method: string,
    reason: string,
    details?: ErrorDetails,
  ) {
    super(
      `'${method}': ${reason} before its answer; the server may or may not have processed it (not replayed: repeating it is not known to be safe)`,
      details,
    );
  }
}

/** The connection is closed, failed, or died while the request was pending. */
export class ConnectionClosedError extends McpSupervisorError {
  readonly code = 'CONNECTION_CLOSED' as const;
  readonly retryable: boolean;
  override readonly fatal: boolean;
  /** The request never left (nothing was written): it waits for the connection to come back. */
  readonly unsent: boolean;
  constructor(message: string, details?: ErrorDetails & { retryable?: boolean; fatal?: boolean; unsent?: boolean }) {
    super(message, details);
    this.retryable = details?.retryable ?? false;
    this.fatal = details?.fatal ?? false;
    this.unsent = details?.unsent ?? false;
  }
}

/**
 * A stdio server's command could not be started (ENOENT, EACCES, a missing cwd). Fatal while the
 * server has never completed a handshake: restarting a command that cannot run does not help.
 */
export class SpawnError extends ConnectionClosedError {
  constructor(
    message: string,
    readonly command: string,
    /** The system error code, e.g. 'ENOENT'. */
    readonly errno: string | undefined,
    details?: ErrorDetails & { fatal?: boolean },
  ) {
    super(message, { ...details, retryable: !(details?.fatal ?? true), fatal: details?.fatal ?? true });
  }
}

export class RequestTimeoutError extends McpSupervisorError {
  readonly code = 'REQUEST_TIMEOUT' as const;
  readonly retryable = true;
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
    details?: ErrorDetails & { waitedFor?: string | undefined },
  ) {
    const waited = details?.waitedFor;
    super(`request '${method}' timed out after ${timeoutMs} ms${waited ? ` (${waited})` : ''}`, details);
    this.waitedFor = waited;
  }
  /** Why it never left, when it timed out waiting (e.g. "held: the server is reconnecting: ECONNREFUSED"). */
  readonly waitedFor: string | undefined;
}

export class RequestAbortedError extends McpSupervisorError {
  readonly code = 'REQUEST_ABORTED' as const;
  readonly retryable = false;
  constructor(
    readonly method: string,
    details?: ErrorDetails,
  ) {
    super(`request '${method}' was aborted by the caller`, details);
  }
}

/** A response stream ended or broke before the response, and could not be resumed. */
export class StreamEndedError extends McpSupervisorError {
  readonly code = 'STREAM_ENDED' as const;
  readonly retryable = true;
  constructor(message: string, details?: ErrorDetails & { refusedStatus?: number | undefined }) {
    super(message, details);
    this.refusedStatus = details?.refusedStatus;
  }
  /** The status that refused the resume GET (400/404 there mean the server lost the session). */
  readonly refusedStatus: number | undefined;
}

export class UnsupportedProtocolVersionError extends McpSupervisorError {
  readonly code = 'UNSUPPORTED_PROTOCOL_VERSION' as const;
  readonly retryable = false;
  override readonly fatal = true;
  constructor(
    readonly version: unknown,
    readonly supported: readonly string[],
    details?: ErrorDetails,
  ) {
    super(
      `server negotiated protocol version ${JSON.stringify(version)}, which this client does not support (supported: ${supported.join(', ')})`,
      details,
    );
  }
}

/**
 * The server answered -32022 UnsupportedProtocolVersion (spec 2026-07-28) and lists no version this
 * client can speak in the era it is pinned to: fatal, a restart would ask the same.
 */
export class VersionRefusedError extends UnsupportedProtocolVersionError {
  constructor(requested: string, serverSupports: readonly string[], details?: ErrorDetails & { hint?: string }) {
    super(requested, serverSupports, details);
    const text = `the server does not support protocol version ${requested} (it supports: ${serverSupports.join(', ') || 'none named'})${details?.hint ? `; ${details.hint}` : ''}`;
    this.message = details?.server ? `[${details.server}] ${text}` : text;
  }
}

/** `type: 'auto'`: Streamable HTTP was refused (400/404/405) and the legacy SSE probe failed too. */
export class FallbackFailedError extends McpSupervisorError {
  readonly code = 'FALLBACK_FAILED' as const;
  readonly retryable = true;
  constructor(
    readonly httpError: unknown,
    readonly sseError: unknown,
    details?: ErrorDetails,
  ) {
    super(
      `Streamable HTTP was refused (${describeError(httpError)}) and the legacy SSE probe failed too (${describeError(sseError)})`,
      details,
    );
  }
}

/**
 * The server refused the request for want of (sufficient) credentials: HTTP 401, or 403 with
 * `insufficient_scope`. A TransportError with that status, so existing `status === 401` checks hold. With an `auth` provider the connection authorizes and resends; without one
 * it is fatal (restarting with the same headers cannot help).
 */
export class AuthorizationRequiredError extends TransportError {
  override readonly code = 'AUTHORIZATION_REQUIRED' as const;
  override readonly retryable: boolean;
  override readonly fatal: boolean;
  constructor(
    message: string,
    readonly challenge: AuthChallenge,
    /** The auth provider generation whose credentials were refused (-1 without a provider). */
    readonly credentialGeneration: number,
    details?: ErrorDetails & { fatal?: boolean; authorizationUrl?: string },
  ) {
    super(message, challenge.status, details);
    this.fatal = details?.fatal ?? false;
    this.retryable = !this.fatal;
    this.authorizationUrl = details?.authorizationUrl;
  }
  declare readonly status: 401 | 403;
  /**
   * A per-principal connection's sign-in (docs/principals.md): where that principal must go to
   * authorize; the host sends it to them and completes with `sup.as(p).completeAuthorization()`.
   */
  readonly authorizationUrl: string | undefined;
}

/**
 * An OAuth flow failed: discovery, registration, the token endpoint, the user's consent, or the
 * step-up limit. `oauthError` is the authorization server's `error` code when it sent one.
 * Never carries tokens, codes or client secrets.
 */
export class AuthorizationError extends McpSupervisorError {
  readonly code = 'AUTHORIZATION_FAILED' as const;
  readonly retryable: boolean;
  override readonly fatal: boolean;
  readonly oauthError: string | undefined;
  constructor(
    message: string,
    details?: ErrorDetails & { oauthError?: string | undefined; fatal?: boolean; retryable?: boolean },
  ) {
    super(message, details);
    this.oauthError = details?.oauthError;
    this.fatal = details?.fatal ?? true;
    this.retryable = details?.retryable ?? !this.fatal;
  }
}

/**
 * `maxQueuedRequests` requests already wait for the server: for it to be ready, or (while it is
 * ready) for a slot under `maxInFlight`, a token of `rateLimit`, or the end of a Retry-After window.
 */
export class QueueFullError extends McpSupervisorError {
  readonly code = 'QUEUE_FULL' as const;
  readonly retryable = true;
  constructor(
    readonly limit: number,
    details?: ErrorDetails & { ready?: boolean },
  ) {
    super(
      details?.ready
        ? `${limit} requests are already waiting for the server (maxQueuedRequests: its limits or a Retry-After window hold them)`
        : `the server is not ready and ${limit} requests are already waiting for it`,
      details,
    );
  }
}

/** Invalid configuration; `path` names the field, e.g. `servers.docs.url`; `file` the config file, when there was one. */
export class ConfigError extends McpSupervisorError {
  readonly code = 'CONFIG_ERROR' as const;
  readonly retryable = false;
  constructor(
    message: string,
    readonly issues: readonly { path: string; message: string }[] = [],
    readonly file?: string | undefined,
  ) {
    super(message);
  }
}

export function isMcpSupervisorError(error: unknown): error is McpSupervisorError {
  return error instanceof McpSupervisorError;
}

/** No tool of the catalog has this exposed name (now, after a refresh of what was stale). */
export class UnknownToolError extends McpSupervisorError {
  readonly code = 'UNKNOWN_TOOL' as const;
  readonly retryable = false;
  constructor(readonly toolName: string) {
    super(`no tool named '${toolName}' in the catalog`);
  }
}

/**
 * The tool ran and reported a failure (`isError: true` in its result). The framework adapters
 * throw it so that the failure takes each framework's error path; `result` is what the server sent.
 */
export class ToolResultError extends McpSupervisorError {
  readonly code = 'TOOL_ERROR' as const;
  readonly retryable = false;
  constructor(
    readonly toolName: string,
    readonly result: { content: Array<{ type: string; [key: string]: unknown }>; [key: string]: unknown },
    details?: ErrorDetails,
  ) {
    super(`tool '${toolName}' failed: ${errorText(result.content)}`, details);
  }
}

function errorText(content: Array<{ type: string; [key: string]: unknown }>): string {
  const text = content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .filter(Boolean)
    .join(' ');
  return text.length > 0 ? text.slice(0, 500) : 'the tool reported an error';
}

/** The error as a short, secret-free line for status and transition events (one rule, the machines'). */
export { describeError };

/** An abort, however it was raised (AbortController, undici, Node). */
export function isAbortError(error: unknown): boolean {
  const e = error as { name?: string; code?: string } | null;
  return e?.name === 'AbortError' || e?.code === 'UND_ERR_ABORTED' || e?.code === 'ABORT_ERR';
}

/**
 * What a 401, or a 403 with `insufficient_scope`, told the client: the transports report it, the
 * typed error carries it (AuthorizationRequiredError), the AuthProvider answers it (auth/types.ts).
 */
export interface AuthChallenge {
  status: 401 | 403;
  /** The `WWW-Authenticate` header exactly as the server sent it (parsed by the provider). */
  wwwAuthenticate: string | undefined;
  /** The MCP endpoint that refused the request: the protected resource. */
  resourceUrl: URL;
}
