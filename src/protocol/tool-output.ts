/**
 * Checks a tool's `structuredContent` against the `outputSchema` it declared, as the spec asks
 * clients to ("Clients SHOULD validate structured results against this schema"). The schemas
 * come from the server's `tools/list` results; each is compiled with ajv (the validator the
 * official SDK uses, same options) once, on the first call of its tool, and cached until the
 * tools list changes: a `list_changed` notification or a new session marks the cache stale, and
 * the next call refreshes the list first (a restarted server may declare other schemas).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ToolOutputError, type ResultIssue } from './result-errors.js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

/** One ajv for every server, built on first use: a server whose tools declare no outputSchema pays nothing. */
let sharedAjv: Ajv | undefined;
function ajv(): Ajv {
  if (!sharedAjv) {
    // The SDK's options; `addUsedSchema: false` so two servers' schemas with the same `$id` never clash.
    sharedAjv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });
    sharedAjv.opts.addUsedSchema = false;
    addFormats(sharedAjv);
  }
  return sharedAjv;
}

interface Entry {
  schema: Record<string, unknown>;
  validate?: ValidateFunction;
}

export class ToolOutputSchemas {
  /** Created by the first tools list: a server whose tools nobody listed holds no empty Map. */
  private entries: Map<string, Entry> | undefined;
  /** A list was learned once: from then on a stale cache is refreshed before a call. */
  private learned = false;
  private stale = false;
  private refreshing: Promise<void> | undefined;

  /** One page of a `tools/list` result; the first page (no cursor asked) replaces what was known. */
  learn(result: unknown, firstPage: boolean): void {
    const tools = (result as { tools?: unknown } | null)?.tools;
    if (!Array.isArray(tools)) return;
    if (firstPage || !this.entries) this.stale = false;
    const entries = firstPage || !this.entries ? new Map<string, Entry>() : this.entries;
    this.entries = entries;
    this.learned = true;
    for (const tool of tools as { name?: unknown; outputSchema?: unknown }[]) {
      if (typeof tool?.name !== 'string') continue;
      const schema = tool.outputSchema;
      if (typeof schema === 'object' && schema !== null) entries.set(tool.name, { schema: schema as Entry['schema'] });
      else entries.delete(tool.name);
    }
  }

  /** The next call must list the tools again first. */
  get isStale(): boolean {
    return this.stale;
  }

  /** The tools list changed (`list_changed`, a new session): the next call lists the tools again. */
  invalidate(): void {
    if (this.learned) this.stale = true;
  }

  /** Before a call: lists the tools again if the cache is stale (one listing for concurrent calls). */
  async ensureFresh(listTools: () => Promise<unknown>): Promise<void> {
    if (!this.stale) return;
    this.refreshing ??= listTools().then(
      () => undefined,
      () => {
        // The list failed: validate against nothing rather than against an old schema.
        this.entries = undefined;
        this.stale = false;
      },
    );
    const refreshing = this.refreshing;
    await refreshing;
    if (this.refreshing === refreshing) this.refreshing = undefined;
  }

  /** Throws a ToolOutputError naming the first bad path; a result with `isError` is not checked. */
  check(tool: string, result: { structuredContent?: unknown; isError?: unknown }, server: string): void {
    const entry = this.entries?.get(tool);
    if (!entry || result.isError === true) return;
    if (result.structuredContent === undefined) {
      const missing = { path: 'structuredContent', message: 'missing, but the tool declares an outputSchema' };
      throw new ToolOutputError(tool, [missing], { server });
    }
    entry.validate ??= ajv().compile(entry.schema);
    if (entry.validate(result.structuredContent)) return;
    throw new ToolOutputError(tool, (entry.validate.errors ?? []).map(toIssue), { server });
  }
}

/** ajv's `/items/0` and a missing property become `structuredContent.items[0].name`. */
function toIssue(error: ErrorObject): ResultIssue {
  const segments = error.instancePath.split('/').slice(1);
  const missing =
    error.keyword === 'required' ? (error.params as { missingProperty?: string }).missingProperty : undefined;
  if (missing !== undefined) segments.push(missing);
  let path = 'structuredContent';
  for (const raw of segments) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`;
  }
  return { path, message: error.message ?? error.keyword };
}
