/**
 * One MCP server instance facing the host (a session, a connection, or one request of the
 * 2026-07-28 era), built on the official SDK's low-level `Server`: it negotiates the era, the
 * version and the envelope; its handlers only route to the upstream servers.
 */
import { inputRequired, ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { VERSION } from '../core/version.js';
import type { LoggingLevel } from '../protocol/results.js';
import { TASKS_EXTENSION } from '../protocol/task-capabilities.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { ServerHandle } from '../handle/server-handle.js';
import type { CatalogTool } from '../catalog/types.js';
import { HOST_TASKS_CAPABILITY, serveHostTasks, startHostTask, TaskPassingServer } from './host-tasks.js';
import type { InputExchanges } from './input-exchange.js';
import { callFailure, callUpstream, modernExchange, modernToolCall } from './tool-calls.js';
import type { ResolvedGatewayOptions } from './options.js';
import { STATUS_TOOL_NAME } from './options.js';
import { failureText, forwarded, untilServing } from './serving.js';
import type { Sessions } from './sessions.js';
import type { Surface } from './surface.js';

const INSTRUCTIONS =
  'This server gathers the tools, resources and prompts of several MCP servers, each kept connected by mcp-supervisor. A tool name starts with its server name unless the configuration says otherwise.';

export interface DownstreamParts {
  surface: Surface;
  sessions: Sessions;
  options: ResolvedGatewayOptions;
  /** 2026-07-28 tool calls waiting for their host's input round. */
  exchanges: InputExchanges;
  /** The servers that get a connection of their own per host session (`isolate`). */
  isolated: ReadonlySet<string>;
  /** A new connection to `server`, for one host session. */
  connectIsolated(server: string): Promise<ServerHandle>;
  /** A downstream session asked for this log level: upstream servers hear it too. */
  setLevel(level: LoggingLevel): void;
}

type Meta = { progressToken?: string | number } | undefined;

/** The gateway's identity, as hosts read it. */
export const SERVER_INFO = { name: 'mcp-supervisor', title: 'mcp-supervisor gateway', version: VERSION };

export function createDownstreamServer(parts: DownstreamParts): Server {
  const { surface, sessions, options } = parts;
  const server = new TaskPassingServer(
    { ...SERVER_INFO },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
        tasks: HOST_TASKS_CAPABILITY,
        // 2026-07-28 hosts read this on server/discover (modern-tasks.ts); the SDK drops `tasks` there.
        extensions: { [TASKS_EXTENSION]: {} },
      },
      instructions: INSTRUCTIONS,
    },
  );

  /** This session's own connections to the isolated servers, opened on first use, closed with it. */
  const own = new Map<string, Promise<ServerHandle>>();
  const isolatedHandle = (name: string): Promise<ServerHandle> => {
    let handle = own.get(name);
    if (handle) return handle;
    if (own.size === 0) sessions.onRemove(server, () => closeAll(own));
    handle = parts.connectIsolated(name);
    handle.catch(() => own.delete(name));
    own.set(name, handle);
    return handle;
  };
  /** The connection a request of this session goes to: a 2025 session's own one for an isolated server. */
  const upstream: Upstream = (name, ctx) =>
    parts.isolated.size === 0 || ctx.mcpReq.envelope !== undefined || !parts.isolated.has(name)
      ? surface.handle(name)
      : isolatedHandle(name);

  server.setRequestHandler('tools/list', async () => ({ tools: await surface.tools() }));

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    if (name === STATUS_TOOL_NAME && options.statusTool)
      return { content: [{ type: 'text', text: JSON.stringify(surface.statusReport(), null, 2) }] };
    const tool = await surface.tool(name);
    const handle = tool && surface.handle(tool.server);
    if (!tool || !handle) {
      // 2026-07-28: a protocol error (-32602); 2025: a result the model reads, as the SDK's own servers answer.
      if (ctx.mcpReq.envelope !== undefined) throw new ProtocolError(-32602, `Unknown tool: ${name}`);
      return { content: [{ type: 'text', text: `Unknown tool: ${name}` }], isError: true };
    }
    if (ctx.mcpReq.envelope !== undefined) return await modernCall(parts, server, tool, handle, request.params, ctx);
    const call = sessions.beginCall(tool.server, server, ctx.mcpReq.id);
    try {
      const target = (await upstream(tool.server, ctx))!;
      const asked = (request.params as { task?: { ttl?: number } }).task;
      if (asked) {
        const created = await startHostTask(target, tool, args, asked.ttl, options.holdMs, ctx);
        if (created && 'task' in created) return created as never;
        if (created)
          return server.projectCallToolResult(
            created as never,
            tool.definition.outputSchema as Record<string, unknown> | undefined,
          );
      }
      const result = await callUpstream(target, tool, args, options.holdMs, requestOptions(ctx, request.params._meta));
      return server.projectCallToolResult(
        result as never,
        tool.definition.outputSchema as Record<string, unknown> | undefined,
      );
    } catch (error) {
      return callFailure(tool.server, error) as never;
    } finally {
      sessions.endCall(tool.server, call);
    }
  });

  server.setRequestHandler('resources/list', async () => ({ resources: (await surface.resources()) as never }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: (await surface.resourceTemplates()) as never,
  }));
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const route = await surface.resourceRoute(request.params.uri);
    if (!route) throw new ProtocolError(-32002, `Resource not found: ${request.params.uri}`);
    const handle = await serving(upstream, route.server, options.holdMs, ctx);
    return await inRounds(parts, server, route.server, ctx, request.params._meta, (options) =>
      handle.readResource(route.original, options),
    );
  });
  server.setRequestHandler('resources/subscribe', async (request, ctx) => {
    const route = await surface.resourceRoute(request.params.uri);
    if (!route) throw new ProtocolError(-32002, `Resource not found: ${request.params.uri}`);
    const handle = await serving(upstream, route.server, options.holdMs, ctx);
    await forwarded(route.server, () => handle.subscribeResource(route.original, { signal: ctx.mcpReq.signal }));
    sessions.subscribed(server, request.params.uri, true);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request, ctx) => {
    sessions.subscribed(server, request.params.uri, false);
    const route = await surface.resourceRoute(request.params.uri);
    if (!route) return {};
    const handle = await serving(upstream, route.server, options.holdMs, ctx);
    await forwarded(route.server, () => handle.unsubscribeResource(route.original, { signal: ctx.mcpReq.signal }));
    return {};
  });

  server.setRequestHandler('prompts/list', async () => ({ prompts: await surface.prompts() }));
  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const route = await surface.promptRoute(request.params.name);
    if (!route) throw new ProtocolError(-32602, `Unknown prompt: ${request.params.name}`);
    const handle = await serving(upstream, route.server, options.holdMs, ctx);
    return (await inRounds(parts, server, route.server, ctx, request.params._meta, (options) =>
      handle.getPrompt(route.original, request.params.arguments, options),
    )) as never;
  });

  server.setRequestHandler('completion/complete', async (request, ctx) => {
    const { ref, argument, context } = request.params;
    const route =
      ref.type === 'ref/prompt'
        ? await surface.promptRoute(ref.name)
        : {
            server: surface.templateServer(ref.uri) ?? (await surface.resourceRoute(ref.uri))?.server,
            original: ref.uri,
          };
    if (!route?.server) return { completion: { values: [], hasMore: false } };
    const upstreamRef = ref.type === 'ref/prompt' ? { ...ref, name: route.original } : ref;
    const handle = await serving(upstream, route.server, options.holdMs, ctx);
    return await forwarded(route.server, () =>
      handle.complete(upstreamRef as never, argument, context as never, { signal: ctx.mcpReq.signal }),
    );
  });

  serveHostTasks(server, surface, options.holdMs, sessions.taskInputs);

  server.setRequestHandler('logging/setLevel', async (request) => {
    sessions.setLevel(server, request.params.level);
    parts.setLevel(request.params.level);
    return {};
  });

  return server;
}

/** A 2026-07-28 host's tool call (tool-calls.ts), answered as the SDK server encodes it. */
async function modernCall(
  parts: DownstreamParts,
  server: Server,
  tool: CatalogTool,
  handle: ServerHandle,
  params: { arguments?: Record<string, unknown>; _meta?: Meta },
  ctx: ServerContext,
): Promise<never> {
  const { signal: _signal, ...progress } = requestOptions(ctx, params._meta);
  const turn = await modernToolCall(parts, server, tool, handle, {
    arguments: params.arguments ?? {},
    requestId: ctx.mcpReq.id,
    signal: ctx.mcpReq.signal,
    requestState: ctx.mcpReq.requestState(),
    inputResponses: ctx.mcpReq.inputResponses,
    progress,
  });
  if ('done' in turn)
    return server.projectCallToolResult(
      turn.done as never,
      tool.definition.outputSchema as Record<string, unknown> | undefined,
    ) as never;
  return inputRequired({ inputRequests: turn.inputRequests as never, requestState: turn.requestState }) as never;
}

/**
 * A forwarded request (`resources/read`, `prompts/get`): a 2026-07-28 host is asked the server's
 * questions in input rounds of it, as for `tools/call`; a 2025 session gets them as requests.
 */
async function inRounds<T>(
  parts: DownstreamParts,
  server: Server,
  upstream: string,
  ctx: ServerContext,
  meta: Meta,
  send: (options: RequestOptions) => Promise<T>,
): Promise<T> {
  const options = requestOptions(ctx, meta);
  if (ctx.mcpReq.envelope === undefined) return await forwarded(upstream, () => send(options));
  const { signal: _signal, ...progress } = options;
  const call = {
    requestId: ctx.mcpReq.id,
    signal: ctx.mcpReq.signal,
    requestState: ctx.mcpReq.requestState(),
    inputResponses: ctx.mcpReq.inputResponses,
    progress,
  };
  const turn = await forwarded(upstream, () => modernExchange(parts, server, upstream, ctx.mcpReq.method, call, send));
  if ('done' in turn) return turn.done;
  return inputRequired({ inputRequests: turn.inputRequests as never, requestState: turn.requestState }) as never;
}

/** The host's cancellation and progress token, passed on. */
function requestOptions(ctx: ServerContext, meta: Meta): RequestOptions {
  const token = meta?.progressToken;
  if (token === undefined) return { signal: ctx.mcpReq.signal };
  return {
    signal: ctx.mcpReq.signal,
    resetTimeoutOnProgress: true,
    onprogress: (progress) => {
      const params = { ...progress, progressToken: token };
      void ctx.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => {});
    },
  };
}

type Upstream = (server: string, ctx: ServerContext) => ServerHandle | Promise<ServerHandle> | undefined;

async function closeAll(own: Map<string, Promise<ServerHandle>>): Promise<void> {
  const handles = [...own.values()];
  own.clear();
  await Promise.allSettled(handles.map(async (handle) => (await handle).close()));
}

async function serving(upstream: Upstream, server: string, holdMs: number, ctx: ServerContext): Promise<ServerHandle> {
  let handle: ServerHandle | undefined;
  try {
    handle = await upstream(server, ctx);
  } catch (error) {
    throw new ProtocolError(-32603, failureText(server, error));
  }
  if (!handle) throw new ProtocolError(-32603, `server '${server}' is no longer configured`);
  if (handle.status().state === 'ready') return handle;
  try {
    await untilServing(handle, holdMs, ctx.mcpReq.signal);
  } catch (error) {
    throw new ProtocolError(-32603, failureText(server, error));
  }
  return handle;
}
