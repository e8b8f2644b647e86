/**
 * A `tools/call` result as the caller gets it: checked against the result schema
 * (InvalidResultError) and, when the tool declares an `outputSchema`, its `structuredContent`
 * too (ToolOutputError naming the path; off with `validateToolOutput: false`).
 */
import type { CallToolResult } from '../protocol/messages.js';
import { CallToolResultSchema, isPlainToolResult, parseResult } from '../protocol/results.js';
import type { ToolHost } from './tool-host.js';

export function toolResult(
  host: Pick<ToolHost['context'], 'name' | 'outputSchemas'>,
  tool: string,
  raw: unknown,
): CallToolResult {
  const result = (
    isPlainToolResult(raw) ? raw : parseResult(CallToolResultSchema, 'tools/call', raw, host.name)
  ) as CallToolResult;
  result.content ??= [];
  host.outputSchemas?.check(tool, result, host.name);
  return result;
}
