/**
 * The official SDK's `Client`, v1 (`@modelcontextprotocol/sdk`) and v2 (`@modelcontextprotocol/client`),
 * over a supervised transport, behind one small face for the tests: calls, lists, the server's
 * requests and notifications to the Client's own handlers, and a record of what the Client saw
 * (its `onclose`, its `onerror`, every message the transport gave it).
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import type { SupervisedTransport, WireMessage } from '../../src/adapters/sdk/index.js';

export type SdkVersion = 'v1' | 'v2';
type Result = Record<string, unknown>;

export interface ClientHandlersForTest {
  elicitation?: (params: Result) => Result;
  sampling?: (params: Result) => Result;
  roots?: () => Result;
}

export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number | undefined }) => void;
  timeout?: number;
  /** v1 only (the SDK's RequestOptions): called with each event id of the request's response stream. */
  onresumptiontoken?: (token: string) => void;
}

export interface TestClient {
  version: SdkVersion;
  transport: SupervisedTransport;
  /** `client.callTool()`; a JSON-RPC error rejects. */
  call(
    name: string,
    args?: Result,
    options?: CallOptions,
  ): Promise<{ content: Array<{ type: string; text?: string }> }>;
  toolNames(): Promise<string[]>;
  serverVersion(): { name: string; version: string } | undefined;
  serverCapabilities(): Result | undefined;
  onToolsChanged(listener: () => void): void;
  setLoggingLevel(level: 'debug' | 'info' | 'warning' | 'error'): Promise<unknown>;
  subscribeResource(uri: string): Promise<unknown>;
  close(): Promise<void>;
  /** How often the Client's own `onclose` ran. */
  closes: number;
  errors: Error[];
  /** Every message the transport handed the Client after its connect. */
  seen: WireMessage[];
}

export interface OpenOptions {
  handlers?: ClientHandlersForTest;
  /** v2 only: its `versionNegotiation` and `supportedProtocolVersions`, and `connect`'s `prior`. */
  v2?: {
    versionNegotiation?: { mode: 'auto' | 'legacy' };
    supportedProtocolVersions?: string[];
    prior?: { kind: 'legacy' } | { kind: 'modern'; discover: Record<string, unknown> };
  };
}

const INFO = { name: 'sdk-app', version: '1.0.0' };

function capabilitiesOf(handlers: ClientHandlersForTest = {}): Result {
  const capabilities: Result = {};
  if (handlers.elicitation) capabilities.elicitation = { form: {}, url: {} };
  if (handlers.sampling) capabilities.sampling = { tools: {} };
  if (handlers.roots) capabilities.roots = { listChanged: true };
  return capabilities;
}

export async function openClient(
  version: SdkVersion,
  transport: SupervisedTransport,
  options: OpenOptions = {},
): Promise<TestClient> {
  const handlers = options.handlers ?? {};
  const capabilities = capabilitiesOf(handlers);
  const record = { closes: 0, errors: [] as Error[], seen: [] as WireMessage[] };
  let face: TestClient;
  if (version === 'v1') {
    const client = new ClientV1(INFO, { capabilities });
    if (handlers.elicitation)
      client.setRequestHandler(ElicitRequestSchema, (r) => handlers.elicitation!(r.params) as never);
    if (handlers.sampling)
      client.setRequestHandler(CreateMessageRequestSchema, (r) => handlers.sampling!(r.params) as never);
    if (handlers.roots) client.setRequestHandler(ListRootsRequestSchema, () => handlers.roots!() as never);
    client.onclose = () => record.closes++;
    client.onerror = (error) => record.errors.push(error);
    await client.connect(transport);
    face = {
      ...record,
      version,
      transport,
      call: (name, args = {}, o = {}) => client.callTool({ name, arguments: args }, undefined, o) as never,
      toolNames: async () => (await client.listTools()).tools.map((t) => t.name),
      serverVersion: () => client.getServerVersion(),
      serverCapabilities: () => client.getServerCapabilities(),
      onToolsChanged: (listener) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => listener()),
      setLoggingLevel: (level) => client.setLoggingLevel(level),
      subscribeResource: (uri) => client.subscribeResource({ uri }),
      close: () => client.close(),
    };
  } else {
    const client = new ClientV2(INFO, {
      capabilities,
      versionNegotiation: options.v2?.versionNegotiation,
      supportedProtocolVersions: options.v2?.supportedProtocolVersions,
    });
    if (handlers.elicitation)
      client.setRequestHandler('elicitation/create', (r) => handlers.elicitation!(r.params as Result) as never);
    if (handlers.sampling)
      client.setRequestHandler('sampling/createMessage', (r) => handlers.sampling!(r.params as Result) as never);
    if (handlers.roots) client.setRequestHandler('roots/list', () => handlers.roots!() as never);
    client.onclose = () => record.closes++;
    client.onerror = (error) => record.errors.push(error);
    await client.connect(transport, options.v2?.prior ? { prior: options.v2.prior as never } : undefined);
    face = {
      ...record,
      version,
      transport,
      call: (name, args = {}, o = {}) => client.callTool({ name, arguments: args }, o),
      toolNames: async () => (await client.listTools()).tools.map((t) => t.name),
      serverVersion: () => client.getServerVersion(),
      serverCapabilities: () => client.getServerCapabilities(),
      onToolsChanged: (listener) => client.setNotificationHandler('notifications/tools/list_changed', () => listener()),
      setLoggingLevel: (level) => client.setLoggingLevel(level),
      subscribeResource: (uri) => client.subscribeResource({ uri }),
      close: () => client.close(),
    };
  }
  // The record is shared with the face: the Client's callbacks above count into it.
  Object.defineProperties(face, {
    closes: { get: () => record.closes },
    errors: { get: () => record.errors },
    seen: { get: () => record.seen },
  });
  const delivered = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    record.seen.push(message);
    delivered(message, extra);
  };
  return face;
}

/** Every message the Client was handed that carries an id answers one of its requests or is a server request of ours. */
export function strayMessages(seen: readonly WireMessage[]): WireMessage[] {
  const answered = new Set<unknown>();
  return seen.filter((message) => {
    if (message.id === undefined) return false;
    if (message.method !== undefined) return !String(message.id).startsWith('mcp-supervisor:');
    if (answered.has(message.id)) return true; // answered twice
    answered.add(message.id);
    return false;
  });
}

/** The client learns that the server closed its keep-alive sockets on its next turn of the event loop. */
export function clientNoticesClose(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
