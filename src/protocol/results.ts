/**
 * Zod schemas for the results of the client methods, checked before a result reaches the
 * caller: a malformed result becomes an InvalidResultError naming the field, not a crash later
 * in the agent. One schema set serves every protocol version this client speaks
 * (2024-11-05 … 2025-11-25): fields a later version added are optional, unknown fields pass
 * through (loose objects), so a newer server's extras are kept, never rejected.
 */
import { z } from 'zod';
import { InvalidResultError } from './result-errors.js';

const Meta = z.looseObject({}).optional();
const Annotations = z
  .looseObject({
    audience: z.array(z.string()).optional(),
    priority: z.number().optional(),
    lastModified: z.string().optional(),
  })
  .optional();
const Icons = z.array(z.looseObject({ src: z.string() })).optional();

const TextResourceContents = z.looseObject({ uri: z.string(), mimeType: z.string().optional(), text: z.string() });
const BlobResourceContents = z.looseObject({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() });
const ResourceContents = z.union([TextResourceContents, BlobResourceContents], {
  error: 'must have a `uri` and a string `text` or `blob`',
});

/** Content blocks: the known types are checked by their fields, unknown types pass (a newer server). */
const ContentBlock = z.looseObject({ type: z.string() }).check((ctx) => {
  const block = ctx.value as Record<string, unknown>;
  const need = (field: string, kind: 'string' | 'object') => {
    const value = block[field];
    const ok = kind === 'string' ? typeof value === 'string' : typeof value === 'object' && value !== null;
    if (!ok) ctx.issues.push({ code: 'custom', message: `must be a ${kind}`, path: [field], input: value });
  };
  switch (block.type) {
    case 'text':
      return need('text', 'string');
    case 'image':
    case 'audio':
      need('data', 'string');
      return need('mimeType', 'string');
    case 'resource':
      return need('resource', 'object');
    case 'resource_link':
      need('uri', 'string');
      return need('name', 'string');
  }
});

export const ResourceSchema = z.looseObject({
  uri: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  size: z.number().optional(),
  annotations: Annotations,
  icons: Icons,
});

export const ResourceTemplateSchema = z.looseObject({
  uriTemplate: z.string(),
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  annotations: Annotations,
  icons: Icons,
});

const PromptArgument = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  required: z.boolean().optional(),
});
export const PromptSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z.array(PromptArgument).optional(),
  icons: Icons,
});

const PromptMessage = z.looseObject({ role: z.enum(['user', 'assistant']), content: ContentBlock });

export const ToolSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.literal('object') }),
  // 2026-07-28: any JSON Schema 2020-12 (`type: object` no longer required); kept verbatim.
  outputSchema: z.looseObject({}).optional(),
  annotations: z.looseObject({}).optional(),
  icons: Icons,
});

const Paginated = { nextCursor: z.string().optional(), _meta: Meta };

export const ListResourcesResultSchema = z.looseObject({ resources: z.array(ResourceSchema), ...Paginated });
export const ListResourceTemplatesResultSchema = z.looseObject({
  resourceTemplates: z.array(ResourceTemplateSchema),
  ...Paginated,
});
export const ReadResourceResultSchema = z.looseObject({ contents: z.array(ResourceContents), _meta: Meta });
export const ListPromptsResultSchema = z.looseObject({ prompts: z.array(PromptSchema), ...Paginated });
export const GetPromptResultSchema = z.looseObject({
  description: z.string().optional(),
  messages: z.array(PromptMessage),
  _meta: Meta,
});
export const CompleteResultSchema = z.looseObject({
  completion: z.looseObject({
    values: z.array(z.string()).max(100),
    total: z.number().int().optional(),
    hasMore: z.boolean().optional(),
  }),
  _meta: Meta,
});
export const ListToolsResultSchema = z.looseObject({ tools: z.array(ToolSchema), ...Paginated });
/**
 * Whether a `tools/call` result is the common shape that `CallToolResultSchema` accepts: text
 * blocks only, no `structuredContent`, `_meta` a plain object if any. The hot path checks this
 * by hand and leaves zod (~0.7 KB and a few µs per call) for every other result: same verdict,
 * no schema walk.
 */
export function isPlainToolResult(result: unknown): boolean {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return false;
  const { content, isError, structuredContent, _meta } = result as Record<string, unknown>;
  // A `_meta` object is common in 2026-07-28 (the server's identity on every result).
  if (structuredContent !== undefined || (_meta !== undefined && !isJsonObject(_meta))) return false;
  if (isError !== undefined && typeof isError !== 'boolean') return false;
  if (content === undefined) return true;
  if (!Array.isArray(content)) return false;
  for (const block of content as unknown[]) {
    if (typeof block !== 'object' || block === null || Array.isArray(block)) return false;
    const { type, text } = block as Record<string, unknown>;
    if (type !== 'text' || typeof text !== 'string') return false;
  }
  return true;
}

function isJsonObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export const CallToolResultSchema = z.looseObject({
  /** Required by the spec; a server that leaves it out gets `[]` (as in the official SDK). */
  content: z.array(ContentBlock).optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
  _meta: Meta,
});
/** `ping`, `logging/setLevel`, `resources/subscribe` and `resources/unsubscribe` answer `{}`. */
export const EmptyResultSchema = z.looseObject({ _meta: Meta });

export type Resource = z.infer<typeof ResourceSchema>;
export type ResourceTemplate = z.infer<typeof ResourceTemplateSchema>;
export type Prompt = z.infer<typeof PromptSchema>;
export type ResourceContents = z.infer<typeof ResourceContents>;
export type ContentBlock = z.infer<typeof ContentBlock>;
export type ListResourcesResult = z.infer<typeof ListResourcesResultSchema>;
export type ListResourceTemplatesResult = z.infer<typeof ListResourceTemplatesResultSchema>;
export type ReadResourceResult = z.infer<typeof ReadResourceResultSchema>;
export type ListPromptsResult = z.infer<typeof ListPromptsResultSchema>;
export type GetPromptResult = z.infer<typeof GetPromptResultSchema>;
export type CompleteResult = z.infer<typeof CompleteResultSchema>;
export type EmptyResult = z.infer<typeof EmptyResultSchema>;

/** `logging/setLevel` levels (RFC 5424 severities), lowest first. */
export const LOGGING_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];

/** What `completion/complete` completes: a prompt's argument or a resource template's variable. */
export type CompletionReference = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

/**
 * Checks `result` of `method` against `schema`; a mismatch is an InvalidResultError naming the
 * first bad field. The result itself is returned, not zod's copy: a copy costs a second object
 * tree, and zod rebuilding an object by assignment would turn a `__proto__` key the server sent
 * into the copy's prototype.
 */
export function parseResult<S extends z.ZodType>(
  schema: S,
  method: string,
  result: unknown,
  server: string | undefined,
): z.infer<S> {
  const parsed = schema.safeParse(result);
  if (parsed.success) return result as z.infer<S>;
  const issues = parsed.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
  throw new InvalidResultError(method, issues, { server });
}

/** `resources[2].uri`, `(root)` for the result itself. */
function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) text += typeof key === 'number' ? `[${key}]` : text ? `.${String(key)}` : String(key);
  return text || '(root)';
}
