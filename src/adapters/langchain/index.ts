/**
 * `mcp-supervisor/langchain`: the catalog as LangChain `DynamicStructuredTool`s (@langchain/core
 * 1.x), their schemas the MCP tools' JSON Schemas (LangChain validates arguments with them).
 *
 *   const tools = await langChainTools(sup);    // every turn: cached, fresh after any change
 *   const message = await tools[0].invoke({ name, args, id, type: 'tool_call' });
 *
 * Response format `content_and_artifact`: the content is the result's text (or content blocks
 * when there are images or audio), the artifact the whole MCP result (structuredContent
 * included). `isError` throws ToolResultError (LangChain's error path: a ToolNode turns it into
 * an error ToolMessage). The run's `signal` cancels the call (notifications/cancelled).
 */
import { DynamicStructuredTool } from '@langchain/core/tools';
import type { CallToolResult } from '../../protocol/messages.js';
import { callForFramework, catalogOf, selectTools, type AdapterOptions, type CatalogSource } from '../shared.js';

export type { AdapterOptions, CatalogSource } from '../shared.js';

type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string };

/** Every selected tool of the catalog, named by exposed name. */
export async function langChainTools(
  source: CatalogSource,
  options: AdapterOptions = {},
): Promise<DynamicStructuredTool[]> {
  const catalog = catalogOf(source);
  return (await selectTools(catalog, options)).map(
    (entry) =>
      new DynamicStructuredTool({
        name: entry.name,
        description: entry.description ?? entry.originalName,
        schema: entry.inputSchema,
        responseFormat: 'content_and_artifact',
        func: async (args: unknown, _runManager, config) => {
          const result = await callForFramework(catalog, entry, args, options, config?.signal);
          return [toLangChainContent(result), result];
        },
      }),
  );
}

/** Text only: one string. With images or audio: standard content blocks. */
export function toLangChainContent(result: CallToolResult): string | ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of result.content) {
    if (part.type === 'text' && typeof part.text === 'string') blocks.push({ type: 'text', text: part.text });
    else if ((part.type === 'image' || part.type === 'audio') && typeof part.data === 'string')
      blocks.push({
        type: part.type,
        data: part.data,
        mimeType: typeof part.mimeType === 'string' ? part.mimeType : 'application/octet-stream',
      });
    else if (part.type === 'resource' && typeof (part.resource as { text?: unknown } | undefined)?.text === 'string')
      blocks.push({ type: 'text', text: (part.resource as { text: string }).text });
    else blocks.push({ type: 'text', text: JSON.stringify(part) });
  }
  if (blocks.length === 0 && result.structuredContent) return JSON.stringify(result.structuredContent);
  if (blocks.every((block) => block.type === 'text')) return blocks.map((block) => block.text).join('\n');
  return blocks;
}
