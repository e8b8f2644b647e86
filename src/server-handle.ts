/**
 * The per-server facade users hold. It stays valid across re-initializations and restarts:
 * it talks to the server's runtime, never to a particular session or transport.
 */
import type { CallToolResult, Implementation, ListToolsResult } from './protocol/messages.js';
import type { RequestOptions, RuntimeEvents, ServerRuntime, ConnectionState } from './runtime/server-runtime.js';
import type { TransportKind } from './transports/transport.js';
import type { AuthStatus } from './auth/types.js';

export interface ServerStatus {
  name: string;
  /** The connection machine's top-level state. */
  state: ConnectionState | 'stopped';
  transport: TransportKind | undefined;
  protocolVersion: string | undefined;
  /** `modern` (2026-07-28, per-request `_meta`) or `legacy` (an `initialize` session); undefined until the first success. */
  era?: 'legacy' | 'modern' | undefined;
  serverInfo: Implementation | undefined;
  /** Never the id itself: '[redacted]' while a session exists. */
  sessionId: '[redacted]' | undefined;
  restarts: number;
  lastError: string | undefined;
  /** While `failed` and a revival is due: when the next attempt is (epoch ms). */
  nextAttemptAt?: number | undefined;
  keepalive: { lastRttMs: number | undefined; missed: number };
  /** Requests sent and awaiting an answer, and requests waiting for the connection. */
  requests: { inFlight: number; waiting: number };
  /** stdio servers: the child's pid while it runs (undefined for URL servers). */
  pid?: number | undefined;
  /** stdio servers: the most recent stderr lines of the current or last process (undefined for URL servers). */
  stderrTail?: string[] | undefined;
  /** Servers with `auth`: whether credentials are held, their scope and expiry; never a token. */
  auth?: AuthStatus | undefined;
}

export interface HandleOwner {
  restartsOf(server: string): number;
  closeServer(server: string): Promise<void>;
  reconnectServer(server: string): Promise<void>;
}

const MAX_TOOL_PAGES = 100;

export class ServerHandle {
  constructor(
    private readonly runtime: ServerRuntime,
    private readonly owner: HandleOwner,
  ) {}

  get name(): string {
    return this.runtime.name;
  }

  /** Any method; resolves with the result, rejects with McpError or another typed error. */
  request<T = unknown>(method: string, params?: Record<string, unknown>, options?: RequestOptions): Promise<T> {
    return this.runtime.request(method, params, options) as Promise<T>;
  }

  callTool(name: string, args: Record<string, unknown> = {}, options?: RequestOptions): Promise<CallToolResult> {
    return this.request<CallToolResult>('tools/call', { name, arguments: args }, options);
  }

  /** Every tool, following `nextCursor` across pages. */
  async listTools(options?: RequestOptions): Promise<ListToolsResult> {
    const first = await this.request<ListToolsResult>('tools/list', undefined, options);
    let cursor = first.nextCursor;
    const tools = [...first.tools];
    for (let page = 1; cursor !== undefined && page < MAX_TOOL_PAGES; page++) {
      const next = await this.request<ListToolsResult>('tools/list', { cursor }, options);
      tools.push(...next.tools);
      cursor = next.nextCursor;
    }
    return { ...first, tools, nextCursor: undefined };
  }

  /** Sends a notification; rejects when the connection is not serving. */
  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.runtime.notify(method, params);
  }

  on<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): () => void {
    return this.runtime.events.on(event, listener);
  }

  off<K extends keyof RuntimeEvents>(event: K, listener: (payload: RuntimeEvents[K]) => void): void {
    this.runtime.events.off(event, listener);
  }

  status(): ServerStatus {
    const runtime = this.runtime;
    const session = runtime.session();
    const state = runtime.state();
    return {
      name: runtime.name,
      state,
      transport: runtime.transportKind,
      protocolVersion: session?.protocolVersion,
      era: session?.era,
      serverInfo: session?.serverInfo,
      sessionId: session && runtime.transport?.hasSession ? '[redacted]' : undefined,
      restarts: this.owner.restartsOf(runtime.name),
      lastError: runtime.lastError(),
      nextAttemptAt: state === 'failed' ? runtime.nextAttemptAt : undefined,
      keepalive: runtime.keepalive(),
      requests: { inFlight: Math.max(0, runtime.pending.size - runtime.gate.waiting), waiting: runtime.gate.waiting },
      pid: runtime.transport?.pid,
      stderrTail:
        runtime.config.kind === 'command'
          ? (runtime.transport?.stderrTail?.() ?? []).map((line) => runtime.redact(line))
          : undefined,
      auth: runtime.authorization.status(),
    };
  }

  /**
   * A new transport and a new session now, whatever the state (a failed server too: its revival
   * backoff starts over). Resolves when the connection serves again, or went down once more.
   */
  reconnect(): Promise<void> {
    return this.owner.reconnectServer(this.runtime.name);
  }

  /** Ends this server's session (DELETE) and stops its connection; requests then fail fast. */
  close(): Promise<void> {
    return this.owner.closeServer(this.runtime.name);
  }
}
