/**
 * `mcp-supervisor/ai-sdk`: the catalog as a Vercel AI SDK `ToolSet` (AI SDK 6 and 7), built
 * with the `ai` package's own `tool()` and `jsonSchema()`.
 *
 *   const tools = await aiSdkTools(sup);      // every turn: cached, fresh after any change
 *   await generateText({ model, tools, prompt, stopWhen: stepCountIs(5) });
 *
 * A tool's output is the MCP result (structuredContent included); the model sees its content as
 * text and images (`toModelOutput`). `isError` throws ToolResultError: the AI SDK's tool-error
 * path. The AI SDK's abort signal cancels the call (notifications/cancelled).
 */
import { jsonSchema, tool, type ToolSet } from 'ai';
import type { CallToolResult } from '../../protocol/messages.js';
import { callForFramework, catalogOf, selectTools, type AdapterOptions, type CatalogSource } from '../shared.js';
import type { ServerConfigInput } from '../../index.js';
import { SupervisedTransport, type SupervisedTransportOptions } from '../sdk/supervised-transport.js';

export type { AdapterOptions, CatalogSource } from '../shared.js';

/** One part of what the model sees of a tool result (the AI SDK's `content` tool output, v6 and v7). */
type ModelOutputPart =
  | { type: 'text'; text: string }
  | { type: 'image-data'; data: string; mediaType: string }
  | { type: 'file-data'; data: string; mediaType: string };

interface ModelOutput {
  type: 'content';
  value: ModelOutputPart[];
}

/** Every selected tool of the catalog, keyed by exposed name. */
export async function aiSdkTools(source: CatalogSource, options: AdapterOptions = {}): Promise<ToolSet> {
  const catalog = catalogOf(source);
  const set: ToolSet = {};
  for (const entry of await selectTools(catalog, options)) {
    set[entry.name] = tool<Record<string, unknown>, CallToolResult>({
      description: entry.description,
      inputSchema: jsonSchema<Record<string, unknown>>(entry.inputSchema),
      execute: (args, { abortSignal }) => callForFramework(catalog, entry, args, options, abortSignal),
      toModelOutput: ({ output }) => toModelOutput(output),
    });
  }
  return set;
}

/** MCP content → the AI SDK's tool output: text as text, images and audio as base64 data. */
export function toModelOutput(result: CallToolResult): ModelOutput {
  const value: ModelOutputPart[] = [];
  for (const part of result.content) {
    const converted = convertPart(part);
    if (converted) value.push(converted);
  }
  // Servers should repeat structuredContent as text; when one did not, the model reads the JSON.
  if (value.length === 0 && result.structuredContent)
    value.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  return { type: 'content', value };
}

function convertPart(part: CallToolResult['content'][number]): ModelOutputPart | undefined {
  const data = typeof part.data === 'string' ? part.data : undefined;
  const mediaType = typeof part.mimeType === 'string' ? part.mimeType : 'application/octet-stream';
  switch (part.type) {
    case 'text':
      return { type: 'text', text: typeof part.text === 'string' ? part.text : '' };
    case 'image':
      return data === undefined ? undefined : { type: 'image-data', data, mediaType };
    case 'audio':
      return data === undefined ? undefined : { type: 'file-data', data, mediaType };
    case 'resource': {
      const resource = (part.resource ?? {}) as { text?: unknown; blob?: unknown; mimeType?: unknown; uri?: unknown };
      if (typeof resource.text === 'string') return { type: 'text', text: resource.text };
      if (typeof resource.blob === 'string')
        return {
          type: 'file-data',
          data: resource.blob,
          mediaType: typeof resource.mimeType === 'string' ? resource.mimeType : 'application/octet-stream',
        };
      return undefined;
    }
    default:
      // resource_link and anything newer: the model reads it as JSON text.
      return { type: 'text', text: JSON.stringify(part) };
  }
}

export type { SupervisedTransport, SupervisedTransportOptions } from '../sdk/supervised-transport.js';

/**
 * A transport for `createMCPClient({ transport })`; `config` as for `connect()`. One per client.
 *
 * The AI SDK's `MCPTransport` (`@ai-sdk/mcp`'s `createMCPClient({ transport })`) over a supervised
 * connection: the same transport as `mcp-supervisor/sdk`, whose shape the AI SDK's is a part of.
 */
export function supervisedMcpTransport(
  config: ServerConfigInput,
  options?: SupervisedTransportOptions,
): SupervisedTransport {
  return new SupervisedTransport(config, options);
}
