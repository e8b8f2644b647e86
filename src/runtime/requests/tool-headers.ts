/**
 * One server's SEP-2243 tool definitions, learned from its `tools/list` results: which tools
 * mirror which arguments into `Mcp-Param-*` headers, and which tools are invalid (excluded from
 * `tools/list`, refused by `callTool` with InvalidToolDefinitionError). Used only on the modern
 * Streamable HTTP wire; stdio and the 2025 era ignore `x-mcp-header`, as the spec allows.
 *
 * A call to a tool no list described goes without `Mcp-Param-*` headers; if the server answers
 * `-32020`, the tools are listed once and the call is sent once more when the tool's
 * declarations changed (the spec's SHOULD). A second `-32020`, or one the list does not explain,
 * is the caller's HeaderMismatchError: never a loop.
 */
import { mirroredHeaders, scanToolHeaders, type ToolHeaderScan } from '../../protocol/tool-headers.js';
import { HeaderMismatchError, InvalidToolDefinitionError } from '../../protocol/tool-header-errors.js';
import type { ListToolsResult, Tool } from '../../protocol/messages.js';

/** A tool left out of `tools/list` and why. */
export interface RejectedTool {
  tool: string;
  reason: string;
}

export class ToolHeaders {
  /** Tools with declarations or invalid ones, by name; created by the first list that has one. */
  private scans: Map<string, ToolHeaderScan> | undefined;
  /** Reasons already warned about: a list fetched again warns only about what changed. */
  private warned: Map<string, string> | undefined;

  /** One page of a `tools/list` result; the first page replaces what was known. */
  learn(result: unknown, firstPage: boolean): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return;
    if (firstPage) this.scans?.clear();
    for (const tool of tools as { name?: unknown; inputSchema?: unknown }[]) {
      if (typeof tool?.name !== 'string') continue;
      const scan = scanToolHeaders(tool.inputSchema);
      if (!scan.valid || scan.declarations.length > 0) (this.scans ??= new Map()).set(tool.name, scan);
      else this.scans?.delete(tool.name);
    }
  }

  /** What the last list said of this tool: undefined when it declares no headers (or no list named it). */
  scanOf(tool: unknown): ToolHeaderScan | undefined {
    return typeof tool === 'string' ? this.scans?.get(tool) : undefined;
  }

  /** The error for a call to an excluded tool; undefined when the tool may be called. */
  refusal(params: Record<string, unknown> | undefined, server: string): InvalidToolDefinitionError | undefined {
    const scan = this.scanOf(params?.name);
    if (scan === undefined || scan.valid) return undefined;
    return new InvalidToolDefinitionError(String(params?.name), scan.reason, { server });
  }

  /** The `mcp-param-*` headers of one `tools/call`; undefined for anything else. */
  headersFor(method: string, params: Record<string, unknown> | undefined): Record<string, string> | undefined {
    if (method !== 'tools/call' || this.scans === undefined) return undefined;
    const scan = this.scans.get(params?.name as string);
    return scan?.valid ? mirroredHeaders(scan.declarations, params?.arguments) : undefined;
  }

  /** The list without its invalid tools; `warn` hears of each newly rejected one. */
  accept(result: ListToolsResult, warn: (rejected: RejectedTool) => void): ListToolsResult {
    let kept: Tool[] | undefined;
    result.tools.forEach((tool, index) => {
      const scan = this.scanOf(tool.name) ?? scanToolHeaders(tool.inputSchema);
      if (scan.valid) {
        this.warned?.delete(tool.name);
        kept?.push(tool);
        return;
      }
      kept ??= result.tools.slice(0, index);
      if (this.warned?.get(tool.name) !== scan.reason) {
        (this.warned ??= new Map()).set(tool.name, scan.reason);
        warn({ tool: tool.name, reason: scan.reason });
      }
    });
    return kept === undefined ? result : { ...result, tools: kept };
  }

  /** The tools the last list excluded. */
  rejected(): RejectedTool[] {
    const rejected: RejectedTool[] = [];
    for (const [tool, scan] of this.scans ?? []) if (!scan.valid) rejected.push({ tool, reason: scan.reason });
    return rejected;
  }

  /**
   * Sends a call; on `-32020`, lists the tools once and sends it once more if the tool's
   * declarations changed (they explain the mismatch), else the HeaderMismatchError stands.
   */
  async withRecovery<T>(
    tool: string,
    send: () => Promise<T>,
    relist: () => Promise<unknown>,
    server: string,
  ): Promise<T> {
    const before = JSON.stringify(this.scanOf(tool) ?? null);
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof HeaderMismatchError)) throw error;
      try {
        await relist();
      } catch {
        throw error; // the list cannot explain it: the server's own word stands
      }
      const scan = this.scanOf(tool);
      if (scan !== undefined && !scan.valid) throw new InvalidToolDefinitionError(tool, scan.reason, { server });
      if (JSON.stringify(scan ?? null) === before) throw error;
      return send();
    }
  }
}
