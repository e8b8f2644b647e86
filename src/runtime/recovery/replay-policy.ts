/**
 * Whether a request whose outcome is unknown (sent, then the connection broke before its answer)
 * may be sent again. Repeating it must be safe: a method that only reads, or a tool whose
 * annotations say `readOnlyHint` or `idempotentHint` (as seen in the last tools list). The
 * caller can say otherwise per call with `retry`.
 */

import type { RetryMode } from '../../protocol/pending.js';

/** Methods that only read, or set a state to a value: repeating them changes nothing more on the server. */
const SAFE_METHODS = new Set([
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  // Idempotent: subscribing twice, or setting the same level twice, leaves the same state.
  'resources/subscribe',
  'resources/unsubscribe',
  'logging/setLevel',
]);

/** The tools the server said are safe to repeat, learned from its `tools/list` results. */
export class ToolSafety {
  /** Only once a list was seen: a server whose tools nobody listed pays for no Set. */
  private safe: Set<string> | undefined;

  /** Reads one page of a `tools/list` result; tools not on it keep what an earlier page said. */
  learn(result: unknown): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return;
    this.safe ??= new Set();
    for (const tool of tools as { name?: unknown; annotations?: Record<string, unknown> }[]) {
      if (typeof tool?.name !== 'string') continue;
      const hints = tool.annotations;
      if (hints?.['readOnlyHint'] === true || hints?.['idempotentHint'] === true) this.safe.add(tool.name);
      else this.safe.delete(tool.name);
    }
  }

  isSafe(tool: unknown): boolean {
    return typeof tool === 'string' && this.safe?.has(tool) === true;
  }
}

export function mayReplay(
  method: string,
  params: Record<string, unknown> | undefined,
  retry: RetryMode,
  /** Undefined until the server's tools were listed: no tool call is known to be safe. */
  tools: ToolSafety | undefined,
): boolean {
  if (retry === 'always') return true;
  if (retry === 'never') return false;
  if (SAFE_METHODS.has(method)) return true;
  return method === 'tools/call' && tools?.isSafe(params?.['name']) === true;
}
