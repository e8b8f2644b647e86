/**
 * Checks a tool's `structuredContent` against the `outputSchema` it declared, as the spec asks
 * clients to ("Clients SHOULD validate structured results against this schema"). The schemas
 * come from the server's `tools/list` results; each is compiled with ajv (the validator the
 * official SDK uses, same options) once, on the first call of its tool, and cached until the
 * tools list changes: a `list_changed` notification or a new session marks the cache stale, and
 * the next call refreshes the list first (a restarted server may declare other schemas).
 *
 * Dialects: a schema without `$schema` is JSON Schema 2020-12 (spec 2026-07-28); 2019-09 and
 * draft-07 are checked too; another dialect is a ToolOutputError saying so. A `$ref` outside
 * the schema is never fetched (see `compile`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ToolOutputError, type ResultIssue } from './result-errors.js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

type Dialect = '2020-12' | '2019-09' | 'draft-07';
type AnyAjv = Ajv | Ajv2019 | Ajv2020;

/** The JSON Schema dialects checked; a schema without `$schema` is 2020-12 (spec 2026-07-28, basic § JSON Schema Usage). */
export const SUPPORTED_DIALECTS: readonly Dialect[] = ['2020-12', '2019-09', 'draft-07'];

function dialectOf(schema: Record<string, unknown>): Dialect | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return undefined;
  const uri = declared.replace(/^https?:\/\//, '').replace(/#$/, '');
  if (uri === 'json-schema.org/draft/2020-12/schema') return '2020-12';
  if (uri === 'json-schema.org/draft/2019-09/schema') return '2019-09';
  if (uri === 'json-schema.org/draft-07/schema') return 'draft-07';
  return undefined;
}

function newAjv(dialect: Dialect): AnyAjv {
  // The SDK's options; `addUsedSchema: false` so two servers' schemas with the same `$id` never clash.
  // ajv fetches nothing by itself (no `loadSchema`): a network `$ref` is never dereferenced.
  const options = { strict: false, validateFormats: true, validateSchema: false, allErrors: true } as const;
  const ajv =
    dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
  ajv.opts.addUsedSchema = false;
  addFormats(ajv);
  return ajv;
}

/** One ajv per dialect for every server, built on first use: a server whose tools declare no outputSchema pays nothing. */
const shared = new Map<Dialect, AnyAjv>();
function ajvFor(dialect: Dialect): AnyAjv {
  let ajv = shared.get(dialect);
  if (!ajv) shared.set(dialect, (ajv = newAjv(dialect)));
  return ajv;
}

const MAX_UNRESOLVED_REFS = 16;

/**
 * Compiles an outputSchema. A `$ref` to anything outside the schema (a network URI) is never
 * fetched (spec: MUST NOT dereference automatically): that part accepts any value, the rest is
 * checked. Such a schema gets an ajv of its own, so its stand-ins reach no other schema.
 */
function compile(schema: Record<string, unknown>, dialect: Dialect): ValidateFunction {
  try {
    return ajvFor(dialect).compile(schema);
  } catch (error) {
    if (missingRef(error) === undefined) throw error;
  }
  const own = newAjv(dialect);
  for (let i = 0; ; i++) {
    try {
      return own.compile(schema);
    } catch (error) {
      const ref = missingRef(error);
      if (ref === undefined || i >= MAX_UNRESOLVED_REFS) throw error;
      own.addSchema(true, ref);
    }
  }
}

function missingRef(error: unknown): string | undefined {
  const ref = (error as { missingSchema?: unknown; missingRef?: unknown } | null)?.missingSchema;
  return typeof ref === 'string' && ref.length > 0 ? ref : undefined;
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

  /** Beside a call: lists the tools again if the cache is stale (one listing for concurrent calls). */
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
    const dialect = dialectOf(entry.schema);
    if (dialect === undefined) {
      const declared = JSON.stringify(entry.schema.$schema);
      const issue = {
        path: 'outputSchema.$schema',
        message: `the dialect ${declared} is not supported (supported: ${SUPPORTED_DIALECTS.join(', ')}); the output was not checked`,
      };
      throw new ToolOutputError(tool, [issue], { server });
    }
    try {
      entry.validate ??= compile(entry.schema, dialect);
    } catch (error) {
      const issue = {
        path: 'outputSchema',
        message: `cannot be compiled (${(error as Error).message}); the output was not checked`,
      };
      throw new ToolOutputError(tool, [issue], { server });
    }
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
