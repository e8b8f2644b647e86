/**
 * The calls that matter over HTTP — `tools/call` and the lists — answered without the SDK
 * server's per-request machinery (its Zod checks of each request and result, its request
 * context, and in 2026-07-28 a server instance per request). The request is checked here
 * cheaply and strictly: anything this path does not serve exactly as the SDK would (a progress
 * token, a task, an input round's answers, an `Mcp-Name` in Base64, a body or header the SDK
 * would refuse) is left to the SDK's path, which answers it or refuses it with its typed error.
 * What the SDK adds to an answer is added here the same way (2026-07-28: `resultType`, the
 * cache fields, the server's identity in `_meta`); test/gateway/direct-path.test.ts compares the
 * two paths' answers.
 */
import type { IncomingMessage } from 'node:http';
import type { Era } from '../../machines/connection.types.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  classifyInboundRequest,
  inputRequired,
  isJsonContentType,
  SERVER_INFO_META_KEY,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type Server,
} from '@modelcontextprotocol/server';
import equal from 'fast-deep-equal';
import type { CatalogTool } from '../catalog/types.js';
import type { CallToolResult } from '../protocol/messages.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { ServerHandle } from '../handle/server-handle.js';
import { hostTakesTasks } from './modern-tasks.js';
import { STATUS_TOOL_NAME } from './options.js';
import { takesRequests, type CallHost } from './sessions.js';
import type { Surface } from './surface.js';
import { callFailure, callUpstream, modernToolCall, type ToolCallParts } from './tool-calls.js';
import { mayRunAsTask } from './upstream-task.js';
import { isObject } from '../core/is-object.js';
import type { RequestId } from '../protocol/jsonrpc.js';

type Params = Record<string, unknown>;
type Answer = Promise<JSONRPCMessage | undefined>;

/** The lists served here, and the key of each one's items. */
const LISTS = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
} as const;
type ListMethod = keyof typeof LISTS;

export interface DirectParts extends ToolCallParts {
  surface: Surface;
  /** The gateway's identity, stamped into each 2026-07-28 result as the SDK does. */
  serverInfo: { name: string; title?: string; version: string };
}

export class DirectPath {
  private readonly envelopes = new Envelopes();

  constructor(private readonly parts: DirectParts) {}

  /**
   * A 2025 session's request (on the session's server `session`): its answer, or undefined
   * (synchronously, or once it is known) when the SDK's server must serve it.
   */
  legacy(
    message: JSONRPCRequest,
    session: Server,
    signal: AbortSignal,
    notify: ((notification: JSONRPCNotification) => void) | undefined,
  ): Answer | undefined {
    const params = paramsOf(message);
    if (params === undefined) return undefined;
    if (isList(message.method)) return this.list(message.id, message.method, 'legacy');
    if (message.method !== 'tools/call' || !this.servesCall(params, notify !== undefined)) return undefined;
    // A literal when there is no progress: no spread per call.
    const options: RequestOptions = notify ? { signal, ...progressOptions(params, notify) } : { signal };
    return this.legacyCall(message.id, params, session, options);
  }

  /**
   * A 2026-07-28 POST (Host, Origin and token already checked, body parsed): its answer, or
   * undefined when the SDK's handler must serve it — checked as the SDK's handler checks it.
   */
  modern(req: IncomingMessage, body: unknown, signal: AbortSignal): Answer | undefined {
    if (!isJsonContentType(req.headers['content-type'] ?? null) || !isObject(body)) return undefined;
    const method = body['method'];
    if (method !== 'tools/call' && !isList(method)) return undefined;
    const version = header(req, 'mcp-protocol-version');
    const methodHeader = header(req, 'mcp-method');
    if (version === undefined || methodHeader === undefined || !isModern(version)) return undefined;
    // A single JSON-RPC request whose Mcp-Method header names its method; its envelope as the SDK checks it.
    const id = body['id'];
    if (body['jsonrpc'] !== '2.0' || (typeof id !== 'string' && !Number.isSafeInteger(id))) return undefined;
    if ('result' in body || 'error' in body || methodHeader.trim() !== method) return undefined;
    const message = body as unknown as JSONRPCRequest;
    const meta = message.params?.['_meta'];
    if (!isObject(meta) || !this.envelopes.valid(meta, version.trim())) return undefined;
    const nameHeader = header(req, 'mcp-name');
    const params = paramsOf(message);
    if (params === undefined || 'requestState' in params || 'inputResponses' in params) return undefined;
    if (method !== 'tools/call') return this.list(message.id, method, 'modern');
    // Mcp-Name must mirror the tool's name, as plain text (a Base64 one is the SDK's to decode).
    if (nameHeader === undefined || nameHeader.trim() !== params['name']) return undefined;
    if (!this.servesCall(params)) return undefined;
    return this.modernCall(message.id, params, meta[CLIENT_CAPABILITIES_META_KEY] as Capabilities, signal);
  }

  /**
   * A plain call: no task (it outlives the request), not the status tool; a progress token only
   * where progress can be streamed (`progress`: a 2025 session's SSE answer).
   */
  private servesCall(params: Params, progress = false): params is Params & CallParams {
    if (typeof params['name'] !== 'string' || 'task' in params) return false;
    if (params['arguments'] !== undefined && !isObject(params['arguments'])) return false;
    if (params['name'] === STATUS_TOOL_NAME && this.parts.options.statusTool) return false;
    const meta = params['_meta'];
    if (meta !== undefined && (!isObject(meta) || ('progressToken' in meta && !progress))) return false;
    return this.parts.options.isolated.size === 0;
  }

  private async list(id: RequestId, method: ListMethod, era: Era): Answer {
    const { surface } = this.parts;
    try {
      const items =
        method === 'tools/list'
          ? await surface.tools()
          : method === 'prompts/list'
            ? await surface.prompts()
            : method === 'resources/list'
              ? await surface.resources()
              : await surface.resourceTemplates();
      // A tool whose outputSchema is not plainly an object is reshaped by the SDK's encoders.
      if (method === 'tools/list' && items.some((tool) => !plainOutputSchema(tool))) return undefined;
      const result = { [LISTS[method]]: items };
      return answer(id, era === 'legacy' ? result : this.modernResult(result, true, true));
    } catch (error) {
      return failure(id, error);
    }
  }

  private async legacyCall(id: RequestId, params: CallParams, session: Server, options: RequestOptions): Answer {
    const { surface } = this.parts;
    const tool = surface.knownTool(params.name) ?? (await surface.tool(params.name));
    const handle = tool && surface.handle(tool.server);
    if (!tool || !handle)
      return answer(id, { content: [{ type: 'text', text: `Unknown tool: ${params.name}` }], isError: true });
    let result: CallToolResult;
    try {
      result = await this.plainCall(tool, handle, params, session, id, options);
    } catch (rpc) {
      return failure(id, rpc);
    }
    const schema = tool.definition.outputSchema as Params | undefined;
    return answer(id, session.projectCallToolResult(result as never, schema));
  }

  private async modernCall(id: RequestId, params: CallParams, declared: Capabilities, signal: AbortSignal): Answer {
    const { surface } = this.parts;
    try {
      const tool = surface.knownTool(params.name) ?? (await surface.tool(params.name));
      const handle = tool && surface.handle(tool.server);
      if (!tool || !handle) return failure(id, { code: -32602, message: `Unknown tool: ${params.name}` });
      // A host that declared no elicitation, sampling or roots is never put an input round, and
      // a call that cannot become a task (the host has no tasks extension, or the upstream cannot
      // run this tool as one) needs no exchange (tool-calls.ts answers it the same way, with one).
      if (!needsExchange(declared, handle, tool))
        return answer(
          id,
          this.modernResult(
            textFallback(await this.plainCall(tool, handle, params, undefined, id, { signal })),
            false,
            true,
          ),
        );
      const host: CallHost = { getClientCapabilities: () => declared };
      const turn = await modernToolCall(this.parts, host, tool, handle, {
        arguments: params.arguments ?? {},
        requestId: id,
        signal,
        requestState: undefined,
        inputResponses: undefined,
        progress: {},
      });
      // A task (`resultType: 'task'`, modern-tasks.ts) has no structuredContent: it passes textFallback as it is.
      if ('done' in turn) return answer(id, this.modernResult(textFallback(turn.done as CallToolResult), false));
      const asked = inputRequired({ inputRequests: turn.inputRequests as never, requestState: turn.requestState });
      return answer(id, this.modernResult(asked, false, true));
    } catch (error) {
      return failure(id, error);
    }
  }

  /**
   * The upstream call made for a 2025 `session`, or (undefined) a 2026-07-28 host no input round
   * can reach; the server's JSON-RPC error is thrown (callFailure), any other failure is a result.
   */
  private async plainCall(
    tool: CatalogTool,
    handle: ServerHandle,
    params: CallParams,
    session: Server | undefined,
    id: RequestId,
    request: RequestOptions,
  ): Promise<CallToolResult> {
    const { sessions, options } = this.parts;
    // The server's requests during the call go to this host only if it can take them (a 2025
    // session that declared elicitation, sampling or roots; a 2026-07-28 host here takes none).
    const call =
      session !== undefined && takesRequests(session) ? sessions.beginCall(tool.server, session, id) : undefined;
    try {
      return await callUpstream(handle, tool, params.arguments ?? {}, options.holdMs, request);
    } catch (error) {
      return callFailure(tool.server, error);
    } finally {
      if (call) sessions.endCall(tool.server, call);
    }
  }

  /**
   * What the SDK's 2026-07-28 encoder adds: `resultType`, a list's cache fields, the server's
   * identity. A `fresh` result (made for this answer, as the upstream's parsed answer is) gets
   * them in place: no copy per call.
   */
  private modernResult(result: Params, cacheable: boolean, fresh = false): Params {
    const encoded: Params = fresh ? result : { ...result };
    encoded['resultType'] ??= 'complete';
    if (cacheable && encoded['resultType'] === 'complete') {
      if (!(Number.isSafeInteger(encoded['ttlMs']) && (encoded['ttlMs'] as number) >= 0)) encoded['ttlMs'] = 0;
      if (encoded['cacheScope'] !== 'public' && encoded['cacheScope'] !== 'private') encoded['cacheScope'] = 'private';
    }
    const tools = encoded['tools'];
    if (Array.isArray(tools) && tools.some((tool) => isObject(tool) && 'execution' in tool))
      encoded['tools'] = tools.map((tool: Params) => {
        const { execution: _dropped, ...rest } = tool;
        return rest;
      });
    const meta = encoded['_meta'];
    if (meta === undefined) encoded['_meta'] = { [SERVER_INFO_META_KEY]: this.parts.serverInfo };
    else if (isObject(meta) && meta[SERVER_INFO_META_KEY] === undefined)
      encoded['_meta'] = { ...meta, [SERVER_INFO_META_KEY]: this.parts.serverInfo };
    return encoded;
  }
}

/**
 * The 2026-07-28 envelopes (`_meta`: version, client info and capabilities) the SDK's classifier
 * accepts, remembered by their JSON: a host sends the same one on every request, and the SDK's
 * check of it (Zod) is most of the cost of a request.
 */
class Envelopes {
  private readonly known = new Map<string, boolean>();
  /** The last envelope checked: the next one (most often the same host's) is compared with it, not serialised. */
  private last: { version: string; meta: Params; valid: boolean } | undefined;

  valid(meta: Params, version: string): boolean {
    const last = this.last;
    if (last !== undefined && last.version === version && equal(last.meta, meta)) return last.valid;
    const valid = this.check(meta, version);
    this.last = { version, meta, valid };
    return valid;
  }

  private check(meta: Params, version: string): boolean {
    const key = `${version}\n${JSON.stringify(meta)}`;
    let valid = this.known.get(key);
    if (valid !== undefined) return valid;
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: version,
      mcpMethodHeader: 'tools/list',
      body: { jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: meta } },
    });
    valid = route.kind === 'modern' && route.messageKind === 'request' && route.classification.revision === version;
    if (this.known.size >= MAX_ENVELOPES) this.known.clear();
    this.known.set(key, valid);
    return valid;
  }
}

const MAX_ENVELOPES = 256;

/** What a 2026-07-28 host declared in its request's envelope. */
type Capabilities = ReturnType<CallHost['getClientCapabilities']>;

interface CallParams {
  name: string;
  arguments?: Record<string, unknown>;
}

function answer(id: RequestId, result: object): JSONRPCMessage {
  return { result, jsonrpc: '2.0', id } as JSONRPCMessage;
}

/** An error answer as the SDK's server writes it (a resource's -32002 is -32602 on the wire). */
function failure(id: RequestId, error: unknown): JSONRPCMessage {
  const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
  const rpcCode = Number.isSafeInteger(code) ? (code as number) : -32603;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: rpcCode === -32002 ? -32602 : rpcCode,
      message: typeof message === 'string' ? message : 'Internal error',
      ...(data !== undefined && { data }),
    },
  };
}

/** A non-object structuredContent also goes out as text (the SDK's projection in 2026-07-28). */
function textFallback(result: CallToolResult): Params {
  const structured = result.structuredContent as unknown;
  if (structured === undefined || isObject(structured)) return result;
  if (result.content?.some((block) => block.type === 'text')) return result;
  return { ...result, content: [...(result.content ?? []), { type: 'text', text: JSON.stringify(structured) }] };
}

/** The host's progress token passed on: each upstream progress goes to the host under it (as downstream.ts does). */
function progressOptions(params: Params, notify: (notification: JSONRPCNotification) => void): RequestOptions {
  const token = (params['_meta'] as { progressToken?: unknown } | undefined)?.progressToken as string | number;
  return {
    resetTimeoutOnProgress: true,
    onprogress: (progress) =>
      notify({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...progress, progressToken: token } }),
  };
}

/**
 * Whether the call needs an exchange: the host declared a capability a server's request needs
 * (tool-calls.ts puts those to it as input rounds), or the call may become a task.
 */
function needsExchange(declared: Capabilities, handle: ServerHandle, tool: CatalogTool): boolean {
  return (
    declared?.elicitation !== undefined ||
    declared?.sampling !== undefined ||
    declared?.roots !== undefined ||
    (hostTakesTasks(declared) && mayRunAsTask(handle, tool))
  );
}

function plainOutputSchema(tool: object): boolean {
  const schema = (tool as { outputSchema?: unknown }).outputSchema;
  return schema === undefined || (isObject(schema) && schema['type'] === 'object');
}

/** The params of a request, or undefined when they are not an object (the SDK refuses those). */
function paramsOf(message: JSONRPCRequest): Params | undefined {
  const params = message.params as unknown;
  if (params === undefined) return {};
  return isObject(params) ? params : undefined;
}

function isList(method: unknown): method is ListMethod {
  return typeof method === 'string' && Object.hasOwn(LISTS, method);
}

/** The revisions the SDK's modern handler serves (its list is not exported); any other is the SDK's to answer. */
const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];

function isModern(version: string): boolean {
  return MODERN_VERSIONS.includes(version.trim());
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
