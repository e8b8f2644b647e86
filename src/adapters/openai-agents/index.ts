/**
 * `mcp-supervisor/openai-agents`: the catalog as one MCP server of the OpenAI Agents SDK
 * (`@openai/agents`), implementing its `MCPServer` interface:
 *
 *   const agent = new Agent({ name, model, mcpServers: [openAiAgentsMcpServer(sup)] });
 *
 * Its tools are the catalog's, under exposed names; the Agents SDK's `toolFilter`,
 * `cacheToolsList` (default true: the catalog is cached and kept fresh anyway) and
 * `invalidateToolsCache()` work as for its own servers, and the SDK's cache is invalidated
 * whenever the catalog changes. `connect()` and `close()` do not start or stop anything: the
 * supervisor owns the connections. `isError` throws ToolResultError (the Agents SDK's tool
 * error path: its `errorFunction` tells the model); the run's signal cancels the call.
 */
import {
  invalidateServerToolsCache,
  type CallToolResult as AgentsCallToolResult,
  type CallToolResultContent,
  type MCPCallToolOptions,
  type MCPServer,
  type MCPToolErrorFunction,
  type MCPToolFilterCallable,
  type MCPToolFilterStatic,
} from '@openai/agents';
import type { ToolCatalog } from '../../catalog/catalog.js';
import { describeError, ToolResultError, UnknownToolError } from '../../core/errors.js';
import {
  callForFramework,
  catalogOf,
  resultText,
  selectTools,
  type AdapterOptions,
  type CatalogSource,
} from '../shared.js';

export type { AdapterOptions, CatalogSource } from '../shared.js';

/** The tool shape the Agents SDK lists (its `MCPTool`). */
interface AgentsTool {
  name: string;
  description?: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, unknown>;
    required: string[];
    additionalProperties: boolean;
  };
}

export interface OpenAiAgentsServerOptions extends AdapterOptions {
  /**
   * The server's name for the Agents SDK: its tool cache is keyed by it, so two servers with
   * different selections need different names. Default `mcp-supervisor`.
   */
  name?: string | undefined;
  /** Let the Agents SDK cache the tool list (invalidated whenever the catalog changes). Default true. */
  cacheToolsList?: boolean | undefined;
  toolFilter?: MCPToolFilterCallable | MCPToolFilterStatic | undefined;
  /** The model sees `structuredContent` (as JSON) instead of the content, when a tool has it. */
  useStructuredContent?: boolean | undefined;
  /**
   * How a failed call is told to the model; `null` rethrows (the Agents SDK's option). Default:
   * the tool's own error text for `isError` results, the typed error's message otherwise (the
   * Agents SDK's default hides both).
   */
  errorFunction?: MCPToolErrorFunction | null | undefined;
}

export class SupervisorMcpServer implements MCPServer {
  readonly name: string;
  cacheToolsList: boolean;
  toolFilter?: MCPToolFilterCallable | MCPToolFilterStatic;
  useStructuredContent?: boolean;
  errorFunction?: MCPToolErrorFunction | null;
  private readonly catalog: ToolCatalog;
  private unsubscribe: (() => void) | undefined;

  constructor(
    source: CatalogSource,
    private readonly options: OpenAiAgentsServerOptions = {},
  ) {
    this.catalog = catalogOf(source);
    this.name = options.name ?? 'mcp-supervisor';
    this.cacheToolsList = options.cacheToolsList ?? true;
    if (options.toolFilter) this.toolFilter = options.toolFilter;
    if (options.useStructuredContent !== undefined) this.useStructuredContent = options.useStructuredContent;
    this.errorFunction = options.errorFunction === undefined ? tellTheModel : options.errorFunction;
    this.unsubscribe = this.catalog.on('changed', () => void invalidateServerToolsCache(this.name));
  }

  /** Nothing to connect: the supervisor keeps the servers connected. Lists the tools once. */
  async connect(): Promise<void> {
    await this.catalog.list();
  }

  /** Stops following the catalog and drops the Agents SDK's cached list; the servers stay up (the supervisor owns them). */
  async close(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await invalidateServerToolsCache(this.name);
  }

  async listTools(): Promise<AgentsTool[]> {
    return (await selectTools(this.catalog, this.options)).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: {
        ...tool.inputSchema,
        type: 'object',
        properties: (tool.inputSchema.properties as Record<string, unknown> | undefined) ?? {},
        required: (tool.inputSchema.required as string[] | undefined) ?? [],
        // Kept as the server wrote it (a boolean or a schema, JSON Schema 2020-12); absent: closed.
        additionalProperties: (tool.inputSchema.additionalProperties as boolean | undefined) ?? false,
      },
    }));
  }

  async callTool(
    toolName: string,
    args: Record<string, unknown> | null,
    _meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<CallToolResultContent> {
    return (await this.callToolResult(toolName, args, _meta, options)).content;
  }

  async callToolResult(
    toolName: string,
    args: Record<string, unknown> | null,
    _meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<AgentsCallToolResult> {
    const tool = this.catalog.tool(toolName) ?? (await this.catalog.list(), this.catalog.tool(toolName));
    if (!tool) throw new UnknownToolError(toolName);
    const result = await callForFramework(this.catalog, tool, args ?? {}, this.options, options?.signal);
    return result;
  }

  async invalidateToolsCache(): Promise<void> {
    this.catalog.invalidate();
    await invalidateServerToolsCache(this.name);
  }
}

/** The model reads what went wrong: the tool's own words, or the typed error's (secret-free) message. */
const tellTheModel: MCPToolErrorFunction = ({ error }) =>
  error instanceof ToolResultError
    ? `The tool reported an error: ${resultText(error.result)}`
    : `The tool call failed: ${describeError(error)}`;

/** The catalog as one `MCPServer` for `new Agent({ mcpServers: [...] })`. */
export function openAiAgentsMcpServer(source: CatalogSource, options?: OpenAiAgentsServerOptions): SupervisorMcpServer {
  return new SupervisorMcpServer(source, options);
}
